"""Circular buffers (docs/semantics.md, "Circular buffers"): Reserve, Push, Wait, Pop, their windows and their ring."""
