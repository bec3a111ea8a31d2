"""The stateful NoC API: a command buffer's registers programmed once and a batch of transfers issued from them.

A read (write) ``set_state`` call programs the engine's read (write) command buffer with the other end's NoC
coordinate and, in the one-packet form, the length; each ``with_state`` call then writes only the local address,
the remote address's low 32 bits and (multi-packet form) the length, and sends the request (ttnn 0.81.1
``tt_metal/hw/inc/internal/tt-1xx/wormhole/noc_nonblocking_api.h:1120-1186`` ``ncrisc_noc_read_set_state`` /
``ncrisc_noc_read_with_state``, :1205-1225 ``ncrisc_noc_read_any_len_with_state``, :1249-1360 the write side;
``api/dataflow/dataflow_api.h:575-703``, :981-1111 and ``api/dataflow/noc.h:295-378``). So a ``with_state`` call is
an ordinary read (write) of that many bytes between the local address and the remote address at the *state's*
coordinate: the reading records what the registers hold (``CmdState``) and reads each ``with_state`` as
``noc_async_read`` / ``noc_async_write`` of it (``api.read_into`` / ``write_from``).

What the reading must not lose, since the hardware keeps the registers, not the call:

- every ordinary read reprograms the read command buffer (``ncrisc_noc_fast_read``, noc_nonblocking_api.h:433-437
  writes the coordinate and the length), so after one the read state is not known; every NoC write, atomic or
  one-word write likewise ends the write state (the write command buffers are distinct per kind on Wormhole, one
  buffer on the overlay targets: dataflow_cmd_bufs.h:10-40, so the reading takes the stricter);
- a multi-packet ``with_state`` rewrites the length register (to its last packet's), so the length a later
  one-packet ``with_state`` would use is the last size written, known only when it fits one packet;
- after a branch whose sides leave different states, or a loop that changes it, the state is not known; a loop read
  once for all its iterations whose body uses the state it was entered with and then changes it is refused (its
  second iteration would use the changed state).

The state is per engine (each RISC has its own command buffers, dataflow_cmd_bufs.h:20-28) and per NoC; the reading
keys it by nothing more than read / write, and a ``with_state`` on a NoC named explicitly (not ``noc_index``) is
refused by name, so a state set on one NoC is never used for another.
"""

from __future__ import annotations

from typing import Any

import attrs

from verispatial.frontends.ttmetal import values as V

#: ``NOC_MAX_BURST_SIZE`` of each target: ``NOC_MAX_BURST_WORDS * NOC_WORD_BYTES``, 256 words of 32 bytes on Wormhole
#: (noc_parameters.h:214-221) and of 64 bytes on Blackhole (blackhole/noc/noc_parameters.h:287-290). A transfer's
#: ``max_page_size`` template argument at most this selects the one-packet form.
NOC_MAX_BURST_SIZE = {"wormhole_b0": 8192, "blackhole": 16384}

#: the two command buffers a data-movement kernel's stateful calls program
READ, WRITE = "read", "write"


@attrs.frozen
class CmdState:
    """What a command buffer's stateful registers hold as the reading knows it: the other end's coordinate
    (``coord``: a ``V.RemoteAddr`` whose site it is, or a ``V.TensorPage`` whose bank it is) and the length register
    (``length``: bytes, None where not known). ``serial`` tells one ``set_state`` call's state from another's (a loop
    compares the state it was entered with against what its body leaves). ``vc``: the virtual channel a write
    ``set_state`` named for the writes issued with it (None: none, the unicast write VC)."""

    coord: Any
    length: V.Sym | None
    serial: int
    vc: int | None = None


def length_after(size: Any, burst: int) -> V.Sym | None:
    """The length register after a multi-packet transfer of ``size`` bytes: the size itself when it is a number that
    fits one packet (the transfer is one packet, written with its length), else not known (its last packet's)."""
    if isinstance(size, V.Sym) and size.is_const and 0 < size.const <= burst:
        return size
    return None
