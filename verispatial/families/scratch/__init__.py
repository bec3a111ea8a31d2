"""Scratch buffers (``Buffer.scratch``): private L1 of one data-movement engine that NoC reads fill, local loads and
stores use and NoC writes send, with no circular-buffer counters (docs/semantics.md "Scratch buffers"). The rules:
``scratch-unlanded`` and ``scratch-reuse``, decided per engine in program order; privacy (one engine binds the
buffer, no circular-buffer op names it) is ``validate``'s."""
