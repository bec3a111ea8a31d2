"""The untrusted machinery around the trusted kernel (``verispatial.certify``, docs/checker.md "Trusted kernel"):
the checker's entry for every caller (``run.certify``), the persistent proof store and the proof cache over it, the
program file index, the gate, the worker pools and the interpreter's deadlock search. It only makes the kernel fast
or helpful: the kernel never imports it. A search only proposes runs, which the kernel replays before it refutes;
what the store hands back is the kernel's own earlier verdict on the same content, and is named as such."""
