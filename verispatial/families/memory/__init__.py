"""Memory (docs/checker.md, "Families and how each is decided"): the layout of buffers and resident tensors in each
site's memory (``encoding.py``: disjoint, inside usable memory, aligned, aliases page for page) and what aliased
buffers may do to each other's pages (``alias_encoding.py``: ``alias-clobber``). The family has no op class of its
own: the layout rules are static, decided on the memory map; ``alias-clobber``'s reference semantics is the
interpreter's (``petri/interp.py`` ``_alias_clobber``, which the circular-buffer handlers call), and the Promela
export refuses aliased buffers by name (``petri/promela.py``)."""
