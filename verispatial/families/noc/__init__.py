"""The asynchronous NoC (docs/semantics.md, "Asynchronous NoC"): ReadTiles, WriteTiles, ReadBarrier, WriteBarrier,
Flush and AtomicBarrier, the landing of reads and writes, the sources a write or multicast reads after it was
issued (``async-source-reuse``), reads published before their barrier and transactions outstanding at an engine's
end. A new asynchronous NoC construct lands here: its interpreter handler (``semantics.py``), its per-engine rule
(``encoding.py``), its Promela part (``promela.py``) and its tests (``tests/families/test_noc.py``)."""
