"""Engine-program emitters of ``synthesize-handshakes``, one module per op family."""
