"""Tensors (docs/semantics.md, "Tensors"): the tiles a ReadTiles or WriteTiles touches (``bounds``), the order of
reads and writes of a tile (``tensor-race``) and the output tiles written by the end (``output-unwritten``). The
family has no op class of its own: the asynchronous-NoC handlers (``families/noc``) call its rules."""
