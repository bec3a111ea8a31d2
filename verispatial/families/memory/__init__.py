"""Memory (docs/checker.md, "Families and how each is decided"): the layout of buffers and resident tensors in each
site's memory (``encoding.py``: disjoint, inside usable memory, aligned, aliases page for page). The family has no
op class of its own and no reference semantics: its rules are static, decided on the memory map."""
