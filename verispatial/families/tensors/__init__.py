"""Tensors (docs/semantics.md, "Tensors"): the tiles a ReadTiles or WriteTiles touches (``bounds``), the order of
reads and writes of a tile (``tensor-race``) and the output tiles written by the end (``output-unwritten``). The
family has no op class of its own: the asynchronous-NoC handlers (``families/noc``) call its rules. The checker
decides ``bounds`` in ``encoding.py`` and the happens-before queries — ``tensor-race``, ``hb-*`` (the rendezvous's
``hb-rendezvous`` among them) and ``output-unwritten`` — in ``ordering_encoding.py``."""
