"""Kinds of in-flight asynchronous operations of the reference interpreter (``petri/interp.py``) and of the families'
handlers that issue them (``verispatial/families``). Entries are tuples so states hash:

  (INC,   path, iters, word, by)
  (READ,  path, iters, state_tiles, into, slots)         state_tiles: tile keys of state tensors read; slots: the
                                                          pages of ``into`` it lands in
  (READ,  path, iters, (), into, slots, src)             a remote read (RemoteRead): src the owner's pages it reads
                                                          (root buffer, slots, buffer) until it lands
  (WRITE, path, iters, src)                              src: the source pages (root buffer, slots, buffer)
  (WRITE, path, iters, None, word, value)                a one-word write (InlineWrite): no local source
  (MCAST, path, iters, buf, pages, ps, left, remaining, src, front, offset)  ps: the ring slot it lands at;
                                                          remaining: dest bufs; src: (root, slots, buffer); offset:
                                                          the pages past each receiver's write pointer it must land
  (VALID, path, iters, src_word, value, sem, left, remaining)  value: read when it leaves; remaining: dest words
A unicast write leaves its source and completes in one landing: nothing observes the moment between (a Flush and a
WriteBarrier both wait for it; a tensor tile counts as written at the WriteBarrier), so no behaviour is lost.
"""

INC, READ, WRITE, MCAST, VALID = 0, 1, 2, 3, 4
