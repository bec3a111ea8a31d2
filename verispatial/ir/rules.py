"""The rule registry: every rule and obligation kind of verispatial, once.

Each entry says what the rule is called (the one name every report, certificate, SARIF rule, test and the Promela
model uses), which obligation family reports it, where docs/semantics.md states it and which vendor source it follows,
where its reference semantics, its checker encoding and its Promela assertion live, what an interpreter run must show
to confirm a refutation of it, and which families its proof leans on (``assumes``: a proof resting on an unproved
family is downgraded by ``certify.report.settle``).

Every other list of rule names in the package derives from this table (``INTERPRETER_RULES`` the interpreter reports,
``PER_ENGINE_RULES`` the abstract interpretation decides, ``REPLAY_RULES`` the replay confirms by, the SARIF rules,
mutation and the strategies). Rule names are spelled here and nowhere else: the rest of the package names a rule by the
constant below (``rules.CB_CAPACITY``), so a misspelt name is an import error, not a silently missing check.
"""

from __future__ import annotations

import enum

import attrs


class Family(str, enum.Enum):
    """Obligation families, in report order (docs/checker.md, "Families and how each is decided")."""

    STRUCTURE = "structure"
    CIRCULAR_BUFFER = "circular-buffer"
    SEMAPHORE = "semaphore"
    ASYNC_NOC = "async-noc"
    ACCUMULATOR = "accumulator"
    BOUNDS = "bounds"
    MEMORY = "memory"
    HAPPENS_BEFORE = "happens-before"
    DEADLOCK = "deadlock"
    BALANCE = "balance"
    #: The certificate's own sections compared with the re-derived ones (not a rule of the program).
    CERTIFICATE = "certificate"
    #: Obligations the run's time budget left undecided (failed-to-prove, never a pass).
    BUDGET = "budget"
    #: A program using a construct outside the fragment the checker decides (every obligation failed-to-prove).
    FRAGMENT = "fragment"


class Replay(str, enum.Enum):
    """What the reference interpreter must show before a refutation counts (docs/checker.md, "Counterexamples")."""

    #: the interpreter reports the rule at the op the per-engine finding names (``checker._rule_results``)
    AT_OP = "at-op"
    #: the interpreter reports one of ``replays_as`` where the obligation's claim says: at its op, or on the buffer,
    #: word, tensor or boundary it names (``checker._claim``)
    CLAIMED = "claimed"
    #: the counterexample is another rule's, named in its ``rule`` field and confirmed as that rule is
    DERIVED = "derived"
    #: the interpreter, driven towards the candidate's positions, deadlocks with each stuck engine where it says
    DEADLOCK = "deadlock"
    #: arithmetic on the program text (addresses, the certificate's sections): re-checked by construction
    STATIC = "static"
    #: never refuted on its own: proved or failed-to-prove (an assumption other obligations rest on)
    NONE = "none"


class Subject(str, enum.Enum):
    """What an obligation of this kind is about: the grammar of its id's subject (``ir/obligation.py``)."""

    OP = "op"  # ENGINE:[path] or ENGINE:end
    BUFFER = "buffer"  # bN
    ALIAS = "alias"  # bX~bY
    WORD = "word"  # semN@(x,y)
    TENSOR = "tensor"  # the tensor's name
    COMPONENT = "component"  # ENGINE or ENGINE+N: a deadlock component named by its least engine
    REGION = "region"  # (x,y).space.phaseN
    ORDERING = "ordering"  # T:ENGINE[path] or T:ENGINE[path]<ENGINE[path] or T:ENGINE[path]~ENGINE[path]
    BOUNDARY = "boundary"  # after-section-N
    CROSSING = "crossing"  # T:after-section-N
    LABEL = "label"  # a free label (certificate section, budget step)


@attrs.frozen
class Rule:
    """One rule or obligation kind.

    ``anchor``: its section of docs/semantics.md (or docs/checker.md). ``vendor``: the public source it follows.
    ``semantics``: the module that executes it in the reference interpreter ("" when the interpreter has no such
    rule: an obligation decided only by the checker, confirmed by the replay named in ``replay``). ``encoding``: the
    checker module that decides it. ``promela``: the Promela assertion it becomes in ``export --promela`` ("" when that
    export refuses programs needing it). ``replays_as``: the interpreter rules whose report confirms a refutation.
    ``subjects``: the subject forms its obligations take; a rule decided once for the whole program also has the bare
    name (no subject) when nothing breaks it. ``assumes``: families its proof leans on."""

    name: str
    family: Family
    summary: str
    anchor: str
    vendor: str
    semantics: str
    encoding: str
    promela: str
    replay: Replay
    subjects: tuple[Subject, ...]
    replays_as: tuple[str, ...] = ()
    assumes: tuple[Family, ...] = ()

    @property
    def interpreter(self) -> bool:
        """Whether the reference interpreter reports this rule by name (a deadlock is a run's status instead)."""
        return bool(self.semantics) and self.replay != Replay.DEADLOCK

    @property
    def modules(self) -> tuple[str, ...]:
        """The modules its ``semantics`` and ``encoding`` name."""
        return tuple(m for m in (self.semantics, *self.encoding.split(", ")) if m)

    @property
    def folder(self) -> str:
        """The family folder (``verispatial/families/<folder>``) its modules live in; "" for a rule decided
        outside the family folders (the compose rendezvous's and cross-phase rules in ``certify/compositional.py``;
        the certificate, budget and fragment, which belong to no rule family)."""
        for m in self.modules:
            if m.startswith(FAMILIES_PACKAGE + "."):
                return m.split(".")[2]
        return ""

    @property
    def per_engine(self) -> bool:
        """Whether the per-engine abstract interpretation (``certify/rules.py``) decides it first."""
        return PER_ENGINE in self.encoding.split(", ")


INTERP = "verispatial.petri.interp"
PER_ENGINE = "verispatial.certify.rules"
#: The package of the rule-family folders (``verispatial/families/<folder>/``).
FAMILIES_PACKAGE = "verispatial.families"
CB_SEMANTICS = f"{FAMILIES_PACKAGE}.cb.semantics"
CB_ENCODING = f"{FAMILIES_PACKAGE}.cb.encoding"
SEM_SEMANTICS = f"{FAMILIES_PACKAGE}.semaphores.semantics"
SEM_ENCODING = f"{FAMILIES_PACKAGE}.semaphores.encoding"
ACC_SEMANTICS = f"{FAMILIES_PACKAGE}.accumulator.semantics"
ACC_ENCODING = f"{FAMILIES_PACKAGE}.accumulator.encoding"
NOC_SEMANTICS = f"{FAMILIES_PACKAGE}.noc.semantics"
NOC_ENCODING = f"{FAMILIES_PACKAGE}.noc.encoding"
MCAST_SEMANTICS = f"{FAMILIES_PACKAGE}.multicast.semantics"
MCAST_ENCODING = f"{FAMILIES_PACKAGE}.multicast.encoding"
TENSOR_SEMANTICS = f"{FAMILIES_PACKAGE}.tensors.semantics"
TENSOR_ENCODING = f"{FAMILIES_PACKAGE}.tensors.encoding"
MEMORY_ENCODING = f"{FAMILIES_PACKAGE}.memory.encoding"
ALIAS_ENCODING = f"{FAMILIES_PACKAGE}.memory.alias_encoding"
DEADLOCK_ENCODING = f"{FAMILIES_PACKAGE}.deadlock.encoding"
ORDERING_ENCODING = f"{FAMILIES_PACKAGE}.tensors.ordering_encoding"
RENDEZVOUS_SEMANTICS = f"{FAMILIES_PACKAGE}.rendezvous.semantics"
SCRATCH_SEMANTICS = f"{FAMILIES_PACKAGE}.scratch.semantics"
SCRATCH_ENCODING = f"{FAMILIES_PACKAGE}.scratch.encoding"
#: A per-engine rule whose case is in the circular-buffer family: that family's encoding, run by ``certify/rules.py``.
_CB_PER_ENGINE = f"{CB_ENCODING}, {PER_ENGINE}"
_ACC_PER_ENGINE = f"{ACC_ENCODING}, {PER_ENGINE}"
_NOC_PER_ENGINE = f"{NOC_ENCODING}, {PER_ENGINE}"
_MCAST_PER_ENGINE = f"{MCAST_ENCODING}, {PER_ENGINE}"
SEM_DOC = "docs/semantics.md"

# The names. Each is spelled once, here.
CB_CAPACITY = "cb-capacity"
CB_SINGLE_PRODUCER = "cb-single-producer"
CB_SINGLE_CONSUMER = "cb-single-consumer"
CB_PUSH_UNCOVERED = "cb-push-uncovered"
CB_POP_UNCOVERED = "cb-pop-uncovered"
CB_PUSH_UNFILLED = "cb-push-unfilled"
CB_STRADDLE = "cb-straddle"
CB_WRITE_UNRESERVED = "cb-write-unreserved"
CB_READ_UNWAITED = "cb-read-unwaited"
CB_READ_UNPUBLISHED = "cb-read-unpublished"
CB_SHARD_OVERRUN = "cb-shard-overrun"
ALIAS_CLOBBER = "alias-clobber"
SEM_OVERSHOOT = "sem-overshoot"
SEM_SET_RACE = "sem-set-race"
SEM_RMW_RACE = "sem-rmw-race"
SEM_FLAG_EARLY = "sem-flag-early"
SEM_EXACT = "sem-exact"
SEM_PROTOCOL = "sem-protocol"
ASYNC_READ_PUBLISH = "async-read-publish"
ASYNC_FLAG_OVERTAKE = "async-flag-overtake"
ASYNC_SOURCE_REUSE = "async-source-reuse"
ASYNC_PENDING_AT_END = "async-pending-at-end"
ASYNC_INC_OVERTAKE = "async-inc-overtake"
REMOTE_READ_UNPUBLISHED = "remote-read-unpublished"
SCRATCH_UNLANDED = "scratch-unlanded"
SCRATCH_REUSE = "scratch-reuse"
MCAST_SLOT = "mcast-slot"
MCAST_PUBLISH_EARLY = "mcast-publish-early"
MCAST_PUBLISH = "mcast-publish"
MCAST_SOURCE_UNPUBLISHED = "mcast-source-unpublished"
MCAST_ADDRESS = "mcast-address"
BOUNDS = "bounds"
ACC_CAPACITY = "acc-capacity"
ACC_UNACQUIRED = "acc-unacquired"
ACC_OVERRUN = "acc-overrun"
TENSOR_RACE = "tensor-race"
HB_ACTIVATION = "hb-activation"
HB_STATE = "hb-state"
HB_WRITE_WRITE = "hb-write-write"
HB_RENDEZVOUS = "hb-rendezvous"
HB_CROSS = "hb-cross"
OUTPUT_UNWRITTEN = "output-unwritten"
RENDEZVOUS_EARLY = "rendezvous-early"
RENDEZVOUS = "rendezvous"
MEMORY_DISJOINT = "memory-disjoint"
MEMORY_OVERLAP = "memory-overlap"
MEMORY_RANGE = "memory-range"
MEMORY_ALIGN = "memory-align"
MEMORY_ALIAS = "memory-alias"
DEADLOCK = "deadlock"
BALANCE_CB = "balance-cb"
BALANCE_SEM = "balance-sem"
CERTIFICATE = "certificate"
BUDGET = "budget"
FRAGMENT = "fragment"
MEMORY_MAP = "memory-map"

_CB = f"{SEM_DOC}#circular-buffers"
_SEM = f"{SEM_DOC}#semaphores"
_NOC = f"{SEM_DOC}#asynchronous-noc"
_ACC = f"{SEM_DOC}#accumulator"
_TEN = f"{SEM_DOC}#tensors"
_DATAFLOW = "tt_metal/hw/inc/dataflow_api.h"
_REG = "tt_metal/hw/inc/api/compute/reg_api.h, dest_helpers.hpp get_dest_limit()"
_OP, _END = (Subject.OP,), ()

RULES: tuple[Rule, ...] = (
    Rule(CB_CAPACITY, Family.CIRCULAR_BUFFER, "a Reserve or Wait asks for more pages than the capacity", _CB,
         f"{_DATAFLOW} cb_reserve_back / cb_wait_front", CB_SEMANTICS, _CB_PER_ENGINE, "R_cb_capacity", Replay.AT_OP, _OP,
         (CB_CAPACITY,)),
    Rule(CB_SINGLE_PRODUCER, Family.CIRCULAR_BUFFER, "a second engine performs a producer op of a buffer", _CB,
         f"{_DATAFLOW}: one tiles_received word per buffer and core", CB_SEMANTICS, _CB_PER_ENGINE, "R_cb_single_producer",
         Replay.AT_OP, _OP, (CB_SINGLE_PRODUCER,)),
    Rule(CB_SINGLE_CONSUMER, Family.CIRCULAR_BUFFER, "a second engine performs a consumer op of a buffer", _CB,
         f"{_DATAFLOW}: one tiles_acked word per buffer and core", CB_SEMANTICS, _CB_PER_ENGINE, "R_cb_single_consumer",
         Replay.AT_OP, _OP, (CB_SINGLE_CONSUMER,)),
    Rule(CB_PUSH_UNCOVERED, Family.CIRCULAR_BUFFER, "a Push not covered by the reserved window", _CB,
         f"{_DATAFLOW} cb_push_back", CB_SEMANTICS, _CB_PER_ENGINE, "R_cb_push_uncovered", Replay.AT_OP, _OP,
         (CB_PUSH_UNCOVERED,)),
    Rule(CB_POP_UNCOVERED, Family.CIRCULAR_BUFFER, "a Pop not covered by the waited window", _CB,
         f"{_DATAFLOW} cb_pop_front", CB_SEMANTICS, _CB_PER_ENGINE, "R_cb_pop_uncovered", Replay.AT_OP, _OP,
         (CB_POP_UNCOVERED,)),
    Rule(CB_PUSH_UNFILLED, Family.CIRCULAR_BUFFER, "a Push publishes pages not all filled", _CB,
         f"{_DATAFLOW} cb_push_back", CB_SEMANTICS, _CB_PER_ENGINE, "R_cb_push_unfilled", Replay.AT_OP, _OP,
         (CB_PUSH_UNFILLED,)),
    Rule(CB_STRADDLE, Family.CIRCULAR_BUFFER, "a reservation straddles the ring's end", _CB,
         f"{_DATAFLOW} cb_push_back: the pointer wraps only on the limit", CB_SEMANTICS, CB_ENCODING,
         "R_cb_straddle", Replay.CLAIMED, (Subject.BUFFER,), (CB_STRADDLE,)),
    Rule(CB_WRITE_UNRESERVED, Family.CIRCULAR_BUFFER, "a write into the back outside the reserved window", _CB,
         "get_write_ptr is valid only between reserve and push: tt-metal #39432, #48993", CB_SEMANTICS, _CB_PER_ENGINE,
         "R_cb_write_unreserved", Replay.AT_OP, _OP, (CB_WRITE_UNRESERVED,)),
    Rule(CB_READ_UNWAITED, Family.CIRCULAR_BUFFER, "a read of the front outside the waited window", _CB,
         "get_read_ptr is valid only between wait and pop", CB_SEMANTICS, _CB_PER_ENGINE, "R_cb_read_unwaited", Replay.AT_OP,
         _OP, (CB_READ_UNWAITED,)),
    Rule(CB_READ_UNPUBLISHED, Family.CIRCULAR_BUFFER, "a read in place of a page holding no published bytes",
         f"{SEM_DOC}#reads-in-place",
         "layernorm_sharded.cpp:289, 357, 373-375 (in0, a resident input shard read by index), 520 (eps, read with no "
         "wait_front); circular_buffer_init.h:54-59",
         CB_SEMANTICS, f"{FAMILIES_PACKAGE}.cb.in_place_encoding", "", Replay.CLAIMED, _OP, (CB_READ_UNPUBLISHED,),
         (Family.CIRCULAR_BUFFER,)),
    Rule(CB_SHARD_OVERRUN, Family.CIRCULAR_BUFFER, "a push of a sharded buffer passes the end of its shard", _CB,
         "circular_buffer_init.h: the ring starts at the shard (fifo_wr_ptr = the buffer's address) at every launch; "
         "tt-metal #15337 (a CB larger than its bank's shard writes outside it)",
         CB_SEMANTICS, f"{FAMILIES_PACKAGE}.cb.shard_encoding", "R_cb_shard_overrun", Replay.CLAIMED, (Subject.BUFFER,),
         (CB_SHARD_OVERRUN,)),
    Rule(ALIAS_CLOBBER, Family.MEMORY, "a write into a page an aliased buffer still holds unconsumed",
         f"{SEM_DOC}#aliases", "buffers sharing L1 bytes (CircularBufferConfig with several indices)", INTERP,
         ALIAS_ENCODING, "", Replay.CLAIMED, (Subject.ALIAS,), (ALIAS_CLOBBER,)),
    Rule(SEM_OVERSHOOT, Family.SEMAPHORE, "a write jumps an equality wait's word past the value it waits for", _SEM,
         f"{_DATAFLOW} noc_semaphore_wait spins for equality", SEM_SEMANTICS, SEM_ENCODING, "R_sem_overshoot",
         Replay.CLAIMED, (Subject.WORD,), (SEM_OVERSHOOT,)),
    Rule(SEM_SET_RACE, Family.SEMAPHORE, "a SemSet overwrites a word that received a remote write since last seen",
         _SEM, f"{_DATAFLOW} noc_semaphore_set is a plain store", SEM_SEMANTICS, SEM_ENCODING,
         "R_sem_set_race", Replay.CLAIMED, (Subject.WORD,), (SEM_SET_RACE,)),
    Rule(SEM_RMW_RACE, Family.SEMAPHORE, "a write changes a word between a SemRmw's load and its store (lost update)",
         _SEM, "api/dataflow/semaphore_dm_impl.h:79-93: up() of a LOCAL_NONATOMIC binding is *p += value; "
         "semaphore_binding_token.h:13-18: every Wormhole and Blackhole data-movement binding is LOCAL_NONATOMIC",
         SEM_SEMANTICS, SEM_ENCODING, "R_sem_rmw_race", Replay.CLAIMED, (Subject.WORD,), (SEM_RMW_RACE,)),
    Rule(SEM_FLAG_EARLY, Family.SEMAPHORE, "a flag word is reset or merged before its owner saw the flag", _SEM,
         f"{_DATAFLOW} noc_semaphore_set_multicast", "", SEM_ENCODING, "", Replay.CLAIMED,
         (Subject.WORD,), (SEM_SET_RACE,)),
    Rule(SEM_EXACT, Family.SEMAPHORE, "the word's value at each wait is an exact count between resets",
         "docs/checker.md#semaphore-protocols", _DATAFLOW, "", SEM_ENCODING, "", Replay.NONE,
         (Subject.WORD,)),
    Rule(SEM_PROTOCOL, Family.SEMAPHORE, "the word follows a protocol the checker recognises",
         "docs/checker.md#semaphore-protocols", _DATAFLOW, "", SEM_ENCODING, "", Replay.NONE,
         (Subject.WORD,)),
    Rule(ASYNC_READ_PUBLISH, Family.ASYNC_NOC, "a Push or multicast of pages read since the last ReadBarrier", _NOC,
         f"{_DATAFLOW} noc_async_read_barrier", NOC_SEMANTICS, PER_ENGINE, "R_async_read_publish", Replay.AT_OP, _OP,
         (ASYNC_READ_PUBLISH,)),
    Rule(ASYNC_FLAG_OVERTAKE, Family.ASYNC_NOC, "a flag multicast with no Flush after the data multicast", _NOC,
         "tt-metal #12678, PR #12682", MCAST_SEMANTICS, _MCAST_PER_ENGINE, "R_async_flag_overtake", Replay.AT_OP, _OP,
         (ASYNC_FLAG_OVERTAKE,)),
    Rule(ASYNC_SOURCE_REUSE, Family.ASYNC_NOC, "the source of a write that has not left is freed or rewritten", _NOC,
         f"{_DATAFLOW} noc_async_writes_flushed / noc_async_write_barrier before cb_pop_front", NOC_SEMANTICS,
         _NOC_PER_ENGINE, "R_async_source_reuse", Replay.CLAIMED,
         (Subject.OP, Subject.BUFFER), (ASYNC_SOURCE_REUSE,),
         (Family.CIRCULAR_BUFFER,)),
    Rule(ASYNC_PENDING_AT_END, Family.ASYNC_NOC, "an engine ends with NoC transactions outstanding", _NOC,
         "watcher reports pending NoC transactions: tt-metal PR #55119", NOC_SEMANTICS, _NOC_PER_ENGINE,
         "R_async_pending_at_end", Replay.AT_OP, _OP, (ASYNC_PENDING_AT_END,)),
    Rule(ASYNC_INC_OVERTAKE, Family.ASYNC_NOC, "an increment issued while a remote write to its core has not landed",
         f"{SEM_DOC}#remote-writes-and-the-increment-that-announces-them",
         "tt-metal PR #43507, #43699; noc_nonblocking_api.h NIU_MST_WR_ACK_RECEIVED vs NIU_MST_ATOMIC_RESP_RECEIVED",
         NOC_SEMANTICS, f"{FAMILIES_PACKAGE}.noc.inc_overtake_encoding, {PER_ENGINE}", "R_async_inc_overtake", Replay.AT_OP,
         _OP, (ASYNC_INC_OVERTAKE,)),
    Rule(REMOTE_READ_UNPUBLISHED, Family.ASYNC_NOC, "a remote read of pages its owner has not published",
         f"{SEM_DOC}#remote-reads",
         "reader_mcast_sender_unary_sharded_ln.cpp:164, 179-188 (reads after the handshake that follows the pushes)",
         NOC_SEMANTICS, NOC_ENCODING, "", Replay.CLAIMED, _OP, (REMOTE_READ_UNPUBLISHED,),
         (Family.CIRCULAR_BUFFER,)),
    Rule(SCRATCH_UNLANDED, Family.ASYNC_NOC, "scratch bytes used while a read into them has not landed",
         f"{SEM_DOC}#scratch-buffers", f"{_DATAFLOW} noc_async_read_barrier; reader_argmax_interleaved_multicore.cpp:68-74",
         SCRATCH_SEMANTICS, f"{SCRATCH_ENCODING}, {PER_ENGINE}", "", Replay.AT_OP, _OP, (SCRATCH_UNLANDED,)),
    Rule(SCRATCH_REUSE, Family.ASYNC_NOC, "scratch bytes rewritten while a write from them has not left",
         f"{SEM_DOC}#scratch-buffers", f"{_DATAFLOW} noc_async_writes_flushed / noc_async_write_barrier",
         SCRATCH_SEMANTICS, f"{SCRATCH_ENCODING}, {PER_ENGINE}", "", Replay.AT_OP, _OP, (SCRATCH_REUSE,)),
    Rule(MCAST_SLOT, Family.ASYNC_NOC, "a multicast lands at a receiver slot other than the sender's", _NOC,
         f"{_DATAFLOW} noc_async_write_multicast: the same L1 address at every receiver", MCAST_SEMANTICS,
         MCAST_ENCODING, "R_mcast_slot", Replay.CLAIMED, _OP, (MCAST_SLOT,),
         (Family.CIRCULAR_BUFFER, Family.SEMAPHORE)),
    Rule(MCAST_PUBLISH_EARLY, Family.ASYNC_NOC, "a receiver pushes multicast pages before they landed", _NOC,
         f"{_DATAFLOW} noc_semaphore_wait on the valid flag before cb_push_back", MCAST_SEMANTICS,
         MCAST_ENCODING, "R_mcast_publish_early", Replay.CLAIMED, _OP, (MCAST_PUBLISH_EARLY,)),
    Rule(MCAST_PUBLISH, Family.ASYNC_NOC, "a receiver publishes multicast pages only after they landed", _NOC,
         f"{_DATAFLOW} noc_semaphore_wait on the valid flag before cb_push_back", "",
         MCAST_ENCODING, "", Replay.DERIVED, _OP, (MCAST_PUBLISH_EARLY,), (Family.SEMAPHORE,)),
    Rule(MCAST_SOURCE_UNPUBLISHED, Family.ASYNC_NOC,
         "a multicast of pages already pushed names pages its engine has not pushed, or has reserved again",
         f"{SEM_DOC}#multicast-of-pages-already-pushed",
         "reader_mcast_sender_unary_sharded_ln.cpp:267-282 (push_back, then async_write_multicast from the read pointer); "
         "dataflow_buffer.h:595-603 (the source is get_read_ptr + offset_bytes)",
         MCAST_SEMANTICS, _MCAST_PER_ENGINE, "", Replay.AT_OP, _OP, (MCAST_SOURCE_UNPUBLISHED,)),
    Rule(MCAST_ADDRESS, Family.ASYNC_NOC, "a multicast lands at the sender's address in a buffer of its shape", _NOC,
         f"{_DATAFLOW} noc_async_write_multicast dst_noc_addr_multicast", "", MCAST_ENCODING, "", Replay.STATIC,
         _OP),
    Rule(BOUNDS, Family.BOUNDS, "an access lies outside its tensor", _TEN, "TensorAccessor page ids", TENSOR_SEMANTICS,
         TENSOR_ENCODING, "R_bounds", Replay.CLAIMED, (Subject.TENSOR,), (BOUNDS,)),
    Rule(ACC_CAPACITY, Family.ACCUMULATOR, "an AcquireAcc of more tiles than the accumulator holds", _ACC, _REG,
         ACC_SEMANTICS, _ACC_PER_ENGINE, "R_acc_capacity", Replay.AT_OP, _OP, (ACC_CAPACITY,)),
    Rule(ACC_UNACQUIRED, Family.ACCUMULATOR, "math or pack outside an acquired accumulator", _ACC, _REG, ACC_SEMANTICS,
         _ACC_PER_ENGINE, "R_acc_unacquired", Replay.AT_OP, _OP, (ACC_UNACQUIRED,)),
    Rule(ACC_OVERRUN, Family.ACCUMULATOR, "a Compute or PackAcc of more tiles than the held acquire took", _ACC, _REG,
         ACC_SEMANTICS, _ACC_PER_ENGINE, "R_acc_overrun", Replay.AT_OP, _OP, (ACC_OVERRUN,)),
    Rule(TENSOR_RACE, Family.HAPPENS_BEFORE, "a tensor tile read or written unordered with its writer", _TEN,
         f"{_DATAFLOW} noc_async_write_barrier completes a write", TENSOR_SEMANTICS, ORDERING_ENCODING,
         "R_tensor_race", Replay.CLAIMED, (Subject.ORDERING,), (TENSOR_RACE,)),
    Rule(HB_ACTIVATION, Family.HAPPENS_BEFORE, "a read of an activation sees its producer's completed write", _TEN,
         f"{_DATAFLOW} noc_async_write_barrier", "", ORDERING_ENCODING, "", Replay.DERIVED,
         (Subject.ORDERING,), (TENSOR_RACE,), (Family.DEADLOCK,)),
    Rule(HB_STATE, Family.HAPPENS_BEFORE, "a state's write comes after every read of its old value", _TEN,
         f"{_DATAFLOW} noc_async_read_barrier", "", ORDERING_ENCODING, "", Replay.DERIVED,
         (Subject.ORDERING,), (TENSOR_RACE,), (Family.DEADLOCK,)),
    Rule(HB_WRITE_WRITE, Family.HAPPENS_BEFORE, "no two sites write the same tile unordered", _TEN,
         f"{_DATAFLOW} noc_async_write_barrier", "", ORDERING_ENCODING, "", Replay.DERIVED,
         (Subject.ORDERING,), (TENSOR_RACE,), (Family.DEADLOCK,)),
    Rule(HB_RENDEZVOUS, Family.HAPPENS_BEFORE, "every op before a rendezvous precedes every op after it",
         f"{SEM_DOC}#rendezvous", f"{_DATAFLOW} noc_semaphore_inc / noc_semaphore_wait_min", "",
         ORDERING_ENCODING, "", Replay.DERIVED, (Subject.BOUNDARY,), (RENDEZVOUS_EARLY,),
         (Family.SEMAPHORE,)),
    Rule(HB_CROSS, Family.HAPPENS_BEFORE, "data crossing a rendezvous is written before it is read",
         "docs/checker.md#the-composition-theorem", _DATAFLOW, "", "verispatial.certify.compositional", "",
         Replay.DERIVED, (Subject.CROSSING,), (TENSOR_RACE,)),
    Rule(OUTPUT_UNWRITTEN, Family.HAPPENS_BEFORE, "an output tile is unwritten at termination", _TEN,
         "every output tile is written", TENSOR_SEMANTICS, ORDERING_ENCODING, "R_output_unwritten",
         Replay.CLAIMED, (Subject.TENSOR,), (OUTPUT_UNWRITTEN,)),
    Rule(RENDEZVOUS_EARLY, Family.HAPPENS_BEFORE, "an engine passes a rendezvous before all arrived",
         f"{SEM_DOC}#rendezvous", f"{_DATAFLOW} noc_semaphore_inc / noc_semaphore_wait_min", RENDEZVOUS_SEMANTICS,
         "verispatial.certify.compositional", "", Replay.CLAIMED, (Subject.BOUNDARY,),
         (RENDEZVOUS_EARLY,)),
    Rule(RENDEZVOUS, Family.HAPPENS_BEFORE, "the compose rendezvous at a boundary holds (its lemma)",
         "docs/checker.md#the-rendezvous-lemma", f"{_DATAFLOW} noc_semaphore_inc / noc_semaphore_wait_min", "",
         "verispatial.certify.compositional", "", Replay.DERIVED, (Subject.BOUNDARY,), (RENDEZVOUS_EARLY,)),
    Rule(MEMORY_DISJOINT, Family.MEMORY, "buffers live at once on one site and space share no byte",
         "docs/checker.md#families-and-how-each-is-decided", "L1 layout: tt_metal/hw/inc/dev_mem_map.h", "",
         MEMORY_ENCODING, "", Replay.STATIC, (Subject.REGION,)),
    Rule(MEMORY_OVERLAP, Family.MEMORY, "two buffers live at once share a byte (a memory-disjoint counterexample)",
         "docs/checker.md#families-and-how-each-is-decided", "L1 layout: tt_metal/hw/inc/dev_mem_map.h", "",
         MEMORY_ENCODING, "", Replay.STATIC, (Subject.REGION,)),
    Rule(MEMORY_RANGE, Family.MEMORY, "a buffer lies outside the site's usable memory",
         "docs/checker.md#families-and-how-each-is-decided", "L1 layout: tt_metal/hw/inc/dev_mem_map.h", "",
         MEMORY_ENCODING, "", Replay.STATIC, (Subject.BUFFER, Subject.LABEL)),
    Rule(MEMORY_ALIGN, Family.MEMORY, "a buffer's address is not aligned as the target requires",
         "docs/checker.md#families-and-how-each-is-decided", "NoC alignment: tt_metal/hw/inc/dataflow_api.h", "",
         MEMORY_ENCODING, "", Replay.STATIC, (Subject.BUFFER, Subject.LABEL)),
    Rule(MEMORY_ALIAS, Family.MEMORY, "an aliased buffer does not sit on the bytes of the buffer it aliases",
         "docs/checker.md#families-and-how-each-is-decided", "L1 layout: tt_metal/hw/inc/dev_mem_map.h", "",
         MEMORY_ENCODING, "", Replay.STATIC, (Subject.BUFFER, Subject.LABEL)),
    Rule(MEMORY_MAP, Family.MEMORY, "the program has a memory map to prove disjointness from",
         "docs/checker.md#families-and-how-each-is-decided", "DESIGN §4 MemoryMap", "", MEMORY_ENCODING,
         "", Replay.NONE, ()),
    Rule(DEADLOCK, Family.DEADLOCK, "some engine has not finished and every unfinished engine is blocked",
         f"{SEM_DOC}#op-semantics--the-ground-truth", _DATAFLOW, INTERP, DEADLOCK_ENCODING,
         "invalid end state", Replay.DEADLOCK, (Subject.COMPONENT, Subject.LABEL), (), (Family.SEMAPHORE,)),
    Rule(BALANCE_CB, Family.BALANCE, "a buffer whose counters outlive its section is not empty at its end", _CB,
         "tt_metal/hw/firmware/src/tt-1xx/trisc.cc init_sync_registers; circular_buffer_init.h", CB_SEMANTICS,
         CB_ENCODING, "R_balance_cb", Replay.CLAIMED, (Subject.BUFFER,), (BALANCE_CB,),
         (Family.DEADLOCK,)),
    Rule(BALANCE_SEM, Family.BALANCE, "a semaphore word does not end at its initial value", _SEM,
         "tt_metal/impl/program/dispatch.cpp writes every semaphore's initial value at launch", SEM_SEMANTICS,
         SEM_ENCODING, "R_balance_sem", Replay.CLAIMED, (Subject.WORD,), (BALANCE_SEM,),
         (Family.DEADLOCK, Family.SEMAPHORE)),
    Rule(CERTIFICATE, Family.CERTIFICATE, "the certificate's section matches the one re-derived from the program",
         "docs/checker.md#families-and-how-each-is-decided", "DESIGN §7", "", "verispatial.certify.certificate", "",
         Replay.STATIC, (Subject.LABEL,)),
    Rule(BUDGET, Family.BUDGET, "the run's time budget was spent before this was decided",
         "docs/checker.md#large-counts-the-run-budget-and-interrupts", "verispatial/budget.py", "",
         "verispatial.certify.checker", "", Replay.NONE, (Subject.LABEL,)),
    Rule(FRAGMENT, Family.FRAGMENT, "the program uses a construct the checker does not decide yet",
         "docs/checker.md#known-limits", "verispatial/certify/structure.py unsupported_features", "",
         "verispatial.certify.structure", "", Replay.NONE, ()),
)

BY_NAME: dict[str, Rule] = {r.name: r for r in RULES}

#: Rules the reference interpreter reports by name (its ``Violation.rule``), in docs/semantics.md order.
INTERPRETER_RULES: tuple[str, ...] = tuple(r.name for r in RULES if r.interpreter)

#: Rules the per-engine abstract interpretation decides (``certify/rules.py``), with their families.
PER_ENGINE_RULES: dict[str, str] = {r.name: r.family.value for r in RULES if r.per_engine}

#: Checker rule -> interpreter rules whose report confirms its refutation through its claim (``Replay.CLAIMED``).
REPLAY_RULES: dict[str, frozenset[str]] = {r.name: frozenset(r.replays_as) for r in RULES if r.replay == Replay.CLAIMED}

#: Obligation kinds whose refutation is arithmetic on the program text, re-checked by construction.
#: Memory counterexamples carry the kind ``memory`` (their rule: memory-overlap, -range, -align, -alias).
STATIC_KINDS: frozenset[str] = frozenset(
    {r.name for r in RULES if r.replay == Replay.STATIC and r.family != Family.MEMORY} | {Family.MEMORY.value})

#: Families in report order.
FAMILIES: tuple[str, ...] = tuple(f.value for f in Family if f not in (Family.CERTIFICATE, Family.BUDGET,
                                                                      Family.FRAGMENT))


def rule(name: str) -> Rule:
    """The registry entry of ``name``; ``KeyError`` naming it when no rule has that name."""
    try:
        return BY_NAME[name]
    except KeyError:
        raise KeyError(f"no rule named {name!r} in the rule registry (verispatial/ir/rules.py)") from None
