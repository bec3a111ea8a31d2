"""Front ends: read kernels written in other languages into program.json without running them (DESIGN §12)."""
