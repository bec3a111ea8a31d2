"""What a kernel's variables hold while it is read: numbers affine in loop indices and one trip, and the handles the
device API hands out (circular buffers, tensor accessors, semaphore words, NoC addresses, L1 pointers).

Anything else is ``Opaque``: harmless until an op, a loop count or a branch needs it, which is then refused.
"""

from __future__ import annotations

from typing import Any

import attrs

from verispatial.ir.core import Site

#: iterations a loop read by running its condition (``lower.KernelReader.unroll``) may take, and the longest table
#: ``accessor.pages(start, end)`` is read as (each of its pages one iteration of a range-for)
UNROLL_LIMIT = 256


@attrs.frozen
class Sym:
    """``const + sum(coef * loop index) + trip_coef * trip``: a number as far as the reading knows it. ``loops``
    is sorted by name; ``trip`` is (name, coef) or None."""

    const: int = 0
    loops: tuple[tuple[str, int], ...] = ()
    trip: tuple[str, int] | None = None

    @property
    def is_const(self) -> bool:
        return not self.loops and self.trip is None

    def __add__(self, o: Sym | Opaque) -> Sym | Opaque:
        if isinstance(o, Ranged):
            return o + self
        if isinstance(o, Opaque):
            return o
        d = dict(self.loops)
        for v, c in o.loops:
            d[v] = d.get(v, 0) + c
        trip = self.trip
        if o.trip is not None:
            if trip is None:
                trip = o.trip
            elif trip[0] == o.trip[0]:
                trip = (trip[0], trip[1] + o.trip[1])
            else:
                return Opaque("a sum of two runtime ranges")
        if trip is not None and trip[1] == 0:
            trip = None
        return Sym(self.const + o.const, tuple(sorted((v, c) for v, c in d.items() if c)), trip)

    def scaled(self, k: int) -> Sym:
        return Sym(self.const * k, tuple((v, c * k) for v, c in self.loops if c * k),
                   (self.trip[0], self.trip[1] * k) if self.trip is not None and k else None)

    def __neg__(self) -> Sym:
        return self.scaled(-1)

    def sub(self, var: str, value: Sym) -> Sym | Opaque:
        """This number with loop index ``var`` replaced by ``value``."""
        coef = dict(self.loops).get(var, 0)
        rest = Sym(self.const, tuple((v, c) for v, c in self.loops if v != var), self.trip)
        return rest + value.scaled(coef)


def const(v: int) -> Sym:
    return Sym(v)


@attrs.frozen
class EnumConst:
    """An enumerator the kernel names (``TensorMemoryLayout::INTERLEAVED``), by its last two name components: two
    are equal exactly when they name the same enumerator (an enum declaring two names of one value would be told
    apart wrongly; none of the device API's enums a kernel compares does)."""

    name: str

    @staticmethod
    def of(text: str) -> EnumConst:
        parts = "".join(text.split()).split("::")
        return EnumConst("::".join(parts[-2:]))


@attrs.frozen
class LoopCond:
    """A condition that holds in some iterations of an enclosing loop: ``guard`` of the loop with index ``var``
    (``i + 1 == n`` is the last iteration), as a helper or lambda returns it."""

    var: str
    guard: Any  # ir.core.Guard


@attrs.frozen
class Opaque:
    """A value the reading does not follow (an L1 address computed by arithmetic, a value read from memory, a call
    whose result only feeds such values); ``why`` says what it came from."""

    why: str

    # arithmetic on a value not followed gives a value not followed, keeping the first reason
    def __add__(self, o: Sym | Opaque) -> Opaque:
        return self

    def __neg__(self) -> Opaque:
        return self

    def scaled(self, k: int) -> Opaque:
        return self


@attrs.frozen
class Wide(Opaque):
    """A 64-bit integer literal past the 32-bit word (``0xFFFFFFFFFull``), whose exact ``value`` the reading keeps
    only to convert it: ``static_cast<uint32_t>`` of it is the word C++ truncates it to (``lower.to_integer``).
    Every other use, arithmetic included, treats it as a value not followed (the reading's arithmetic is on words)."""

    value: int = 0

    # arithmetic gives a plain value not followed: the sum is no longer the literal
    def __add__(self, o: Sym | Opaque) -> Opaque:
        return Opaque(self.why)

    def __neg__(self) -> Opaque:
        return Opaque(self.why)

    def scaled(self, k: int) -> Opaque:
        return Opaque(self.why)


@attrs.frozen(eq=False)
class Ranged(Opaque):
    """A number the reading does not follow exactly but bounds: some integer in ``[lo, hi]``, a different one in
    each iteration of the loops it was computed in (``i / 2``, ``i % 32``, ``i & 511`` of a loop index;
    ``KernelReader.ranged``). The bounds hold for every iteration and trip value, so they hold after the loops too.
    Every use but a plain store's address treats it as a value not followed (it is an ``Opaque``); the stores hold
    their whole range of bytes to the page (``KernelReader.l1_check``). Two are equal only when they are one value:
    equal bounds say nothing of equal numbers."""

    lo: int = 0
    hi: int = 0
    #: where known, how far apart the values it takes over the iterations of loop ``loop`` (the index of a loop of
    #: the reading, open where it was computed) are at most: every ``step`` from ``lo`` to ``hi`` holds one of them
    #: (``i / 2`` of a loop index stepping by 1: step 1; times 4: step 4). None: only the bounds are known
    step: int | None = None
    loop: str | None = None

    def __eq__(self, o: object) -> bool:
        return self is o

    def __hash__(self) -> int:
        return id(self)

    def __add__(self, o: Sym | Opaque) -> Opaque:
        """The bounds of the sum with a constant or another bounded number; anything else is not followed."""
        if isinstance(o, Ranged):
            return Ranged(self.why, self.lo + o.lo, self.hi + o.hi)
        if isinstance(o, Sym) and o.is_const:
            return Ranged(self.why, self.lo + o.const, self.hi + o.const, self.step, self.loop)
        return Opaque(self.why)

    def __neg__(self) -> Ranged:
        return self.scaled(-1)

    def scaled(self, k: int) -> Ranged:
        a, b = self.lo * k, self.hi * k
        step = self.step * abs(k) if self.step is not None and k else None
        return Ranged(self.why, min(a, b), max(a, b), step, self.loop if step is not None else None)


@attrs.frozen
class Loaded(Opaque):
    """A value loaded from a buffer's pages (``v = src[i]`` through a pointer into them), or computed from such
    values: not followed, but a store of it into another buffer's page copies from ``src`` (``CopyTiles``); ``src``
    None when it mixes loads from several addresses."""

    src: Any = None


@attrs.frozen
class LocalOpaque(Opaque):
    """A local array of the kernel (its own stack words, never a buffer's pages) whose elements the reading no longer
    follows (its address taken, a store at an index not known): a store into it changes nothing the choreography
    names."""


@attrs.frozen
class Cb:
    """A circular buffer handle: its index (a ``DataflowBuffer``/``CircularBuffer`` object or a plain CB id)."""

    index: int


@attrs.frozen
class CbInterface:
    """``get_local_cb_interface(cb)``: its ``fifo_page_size`` / ``fifo_num_pages`` are the host's entry size and
    entries."""

    cb: int


@attrs.frozen
class NocObj:
    """A ``Noc`` object (Metal 2.0): its methods issue transfers and barriers."""


@attrs.frozen
class AccessorArgs:
    """``TensorAccessorArgs<N>()``: the compile-time layout of an accessor; which tensor it reads comes with the
    address it is paired with. ``cta`` is ``N``, the index of its first compile-time arg (its config word), where
    the kernel's later args start is counted from (``next_compile_time_args_offset()``,
    ``objects.accessor_args_count``)."""

    cta: Any = attrs.field(factory=lambda: Opaque("the accessor's compile-time arg offset"))


@attrs.frozen
class Accessor:
    """A tensor accessor (``TensorAccessor``, ``InterleavedAddrGen[Fast]``) over tensor ``tensor``."""

    tensor: str


@attrs.frozen
class TensorAddr:
    """A tensor's base address (a runtime arg the host sets to ``buffer->address()``)."""

    tensor: str


@attrs.frozen
class TensorPage:
    """The NoC address of page ``page`` of ``tensor`` (``get_noc_addr(page, accessor)``), ``offset`` bytes into it
    (``get_noc_addr(page, accessor, offset)``, ``TensorAccessor::get_noc_addr(page_id, offset)``)."""

    tensor: str
    page: Sym
    offset: Sym = Sym()


@attrs.frozen
class SemAddr:
    """The local L1 address of semaphore ``sem`` (``get_semaphore(id)``, a ``volatile`` pointer cast from it, a
    ``Semaphore`` object)."""

    sem: int


@attrs.frozen
class L1Ptr:
    """An address in buffer ``cb``'s pages as this engine computes it: its write pointer (``get_write_ptr``,
    ``front`` False) or read pointer (``get_read_ptr``) as it stood when the kernel took it, plus ``offset`` bytes.

    Each RISC keeps its own copy of the pointers, advanced one page by each of its own ``cb_push_back`` (write
    pointer) or ``cb_pop_front`` (read pointer) and wrapped at the ring's end (api/dataflow/dataflow_api.h
    ``cb_push_back`` / ``cb_pop_front``, ``fifo_wr_ptr`` / ``fifo_rd_ptr``). ``origin`` is how many pages this
    engine had pushed (back) or popped (front) of ``cb`` when the pointer was taken, so that where an old pointer
    points can be told from the count now (``KernelReader.l1_check``). ``offset`` is in bytes, affine in loop indices
    and a trip, or ``Opaque`` where the arithmetic is not followed. ``elem`` is the bytes one unit of pointer
    arithmetic adds: 1 for an address held as an integer (``uint32_t l1 = get_write_ptr(cb)``), ``sizeof(T)`` for a
    ``T*``, None for a pointer to a type whose size is not known (its arithmetic is not followed). ``taken`` is
    where the pointer was taken (for messages; not part of its value)."""

    cb: int
    front: bool
    origin: Sym | Opaque = Sym()
    offset: Sym | Opaque = Sym()
    elem: int | None = 1
    taken: Any = attrs.field(default=None, eq=False)

    def plus(self, units: Sym | Opaque) -> L1Ptr:
        """This pointer advanced by ``units`` of its arithmetic (``p + k``, ``l1 += tile_bytes``)."""
        if isinstance(units, Sym) and units.is_const and units.const == 0:
            return self  # p[0] is p whatever its element's size
        bounded = all(not isinstance(x, Opaque) or isinstance(x, Ranged) for x in (units, self.offset))
        if self.elem is None or not bounded:
            why = units.why if isinstance(units, Opaque) else "arithmetic on a pointer to a type of unknown size" \
                if self.elem is None else self.offset.why  # type: ignore[union-attr]
            return attrs.evolve(self, offset=Opaque(why))
        # a bounded number of units stays bounded past a constant offset only (``Ranged.__add__``)
        return attrs.evolve(self, offset=self.offset + units.scaled(self.elem))

    def retyped(self, elem: int | None) -> L1Ptr:
        """The same address held as another type (a cast, a declaration, a parameter): ``elem`` bytes per unit."""
        return attrs.evolve(self, elem=elem)


@attrs.frozen
class ArgArray:
    """An address among this core's runtime args: ``get_arg_addr(i)`` is ``&rta_l1_base[i]``, the args being
    consecutive 32-bit words (api/dataflow/dataflow_api.h:108-113, ``get_arg_val`` reads through it, :148-152), plus
    ``offset`` bytes. ``elem`` is the bytes one unit of its arithmetic adds: 1 as the ``uintptr_t`` it is returned
    as, ``sizeof(T)`` once cast to a ``T*``, None for a pointer to a type of unknown size. Reading ``p[k]`` through a
    32-bit type is the runtime arg at word ``(offset + k * elem) / 4`` past ``index`` (``intrinsics.arg_word``).
    ``struct`` names the struct a ``S*`` cast lays over the words (``a->num_pages``, ``intrinsics.arg_field``)."""

    index: Sym
    offset: Sym = Sym()
    elem: int | None = 1
    struct: str | None = None

    def plus(self, units: Sym | Opaque) -> ArgArray | Opaque:
        """This address advanced by ``units`` of its arithmetic."""
        if isinstance(units, Opaque):
            return Opaque(units.why)  # an address, not the (possibly bounded) number added to it
        if self.elem is None:
            return Opaque("arithmetic on a pointer to a type of unknown size among the runtime args")
        moved = self.offset + units.scaled(self.elem)
        return attrs.evolve(self, offset=moved) if isinstance(moved, Sym) else moved


@attrs.frozen
class RemoteAddr:
    """``get_noc_addr(x, y, addr)``: ``addr`` on the core at (x, y)."""

    site: Site
    target: Any


@attrs.frozen
class ZerosRegion:
    """``MEM_ZEROS_BASE``: the L1 address of the hardware zeros region of every Tensix core (``MEM_ZEROS_SIZE`` =
    512 zero bytes, tt_metal/hw/inc/internal/tt-1xx/wormhole/dev_mem_map.h:79-80, blackhole/dev_mem_map.h:87-88): a
    NoC read from it zeroes its destination (``KernelReader.zeros_read``)."""


@attrs.frozen
class Unicast:
    """A ``UnicastEndpoint`` (api/dataflow/endpoints.h): the NoC side of an object-API transfer whose destination or
    source is ``{.noc_x, .noc_y, .addr}`` on one core (noc.h ``async_read`` / ``async_write``), as
    ``get_noc_addr(x, y, addr)`` is for the free functions."""


@attrs.frozen
class McastAddr:
    """``get_noc_multicast_addr(x0, y0, x1, y1, addr)``: ``addr`` on every core of the rectangle."""

    rect: tuple[int, int, int, int]
    target: Any


@attrs.frozen
class Designated:
    """A designated initializer ``{.page_id = i, .offset_bytes = 0}`` (the object API's transfer arguments)."""

    fields: tuple[tuple[str, Any], ...]

    def get(self, name: str) -> Any:
        return dict(self.fields).get(name)


@attrs.frozen
class Table:
    """A ``const`` / ``constexpr`` array with an initializer list (``constexpr uint32_t step_inc[6] = {1, 16, ...}``,
    writer_decode_all.cpp:88; ``std::array``): its elements, in order; an element past the list is 0, as C++
    zero-initializes it, up to ``size``. Never written (it is const), so an element read is the element."""

    items: tuple[Any, ...]
    size: int

    def at(self, i: int) -> Any:
        return self.items[i] if i < len(self.items) else Sym(0)


@attrs.frozen
class LocalArray:
    """A local array declared without an initializer (``uint32_t children_per_round[6];``,
    writer_decode_all.cpp:94) whose elements the kernel stores and loads at indices known statically: ``items[i]`` is
    the value last stored at ``i`` (None: never stored, indeterminate). Its address never leaves the kernel's reading:
    the array named other than as ``a[i]`` (passed to a function, decayed to a pointer) is no longer followed.
    ``depth``: the symbolic loops (read once for all their iterations) around its declaration; a store into it or its
    address taken inside a deeper one is refused, as one reading cannot give every iteration its elements."""

    items: tuple[Any, ...]
    depth: int = 0
    #: the element type when it is a struct the reading knows (``RemoteNocCoord``, an array type alias's element:
    #: layernorm_dataflow_utils.h:26-32): a braced list stored into an element builds it; else ""
    elem: str = ""

    def stored(self, i: int, value: Any) -> LocalArray:
        """The array after ``a[i] = value``."""
        return LocalArray((*self.items[:i], value, *self.items[i + 1:]), self.depth, self.elem)


@attrs.frozen
class ArrayRef:
    """A pointer to the first element of the local array ``name`` of 32-bit words, taken by a cast into a pointer
    variable (``L1Ptr p = reinterpret_cast<L1Ptr>(remote_noc_x)``, reader_mcast_sender_unary_sharded_ln.cpp:87).
    ``scope`` is the variable scope the array is declared in (the reading's own dict, kept across ``restore``), so
    ``p[i]`` reads the array as it is now, never a copy taken earlier. Only reads ``p[i]`` and passing ``p`` to a
    function the reading inlines are followed; any other use of ``p`` (arithmetic, a device API, a store through it)
    is refused or ends what is known of the array (``KernelReader.array_ref_use``)."""

    name: str
    scope: dict[str, Any] = attrs.field(eq=False, hash=False, repr=False)


@attrs.frozen
class TypeName:
    """A template argument that is a fixed-width type (``f<uint16_t>``): only its size is read."""

    name: str


@attrs.frozen
class TypeOf:
    """A type template parameter deduced from an argument (``template <typename A> f(A s)`` called with an
    accessor): what is known of the type is the value it came from."""

    value: Any


@attrs.frozen(eq=False)
class Function:
    """A function or lambda the kernel defines: inlined where it is called."""

    name: str
    params: tuple[str, ...]
    template_params: tuple[str, ...]
    body: Any  # the tree-sitter node of its body
    file: str
    captures: Any = None  # a lambda's enclosing scope
    #: default arguments by parameter name (``bool do_reserve = true``), tree-sitter nodes read in the callee's scope
    defaults: dict[str, Any] = attrs.field(factory=dict)
    #: default template arguments by template parameter name (``template <uint32_t N = 1>``)
    template_defaults: dict[str, Any] = attrs.field(factory=dict)
    #: each parameter's declared type name (``const AddrGen& s`` -> ``AddrGen``), for deducing type parameters
    param_types: tuple[str, ...] = ()
    #: each parameter's declarator kind (``pointer_declarator`` for ``uint16_t* p``), for the L1 addresses it takes
    param_declarators: tuple[str, ...] = ()
    #: the declared return type's name (``IterationShape``): a braced ``return {1, n};`` builds that struct
    returns: str = ""
    #: each template parameter's declared type name (``InputSpec AInput`` -> ``InputSpec``; ``typename T`` -> "")
    template_param_types: tuple[str, ...] = ()
    #: the object a method is called on: its fields are variables of the body, ``*this`` its value
    this: Any = None
    #: the template parameter packs (``uint32_t... Is``, ``typename... Args``): bound to a ``Pack``
    variadic: frozenset[str] = frozenset()
    #: each parameter's pack it deduces, if any: (pack, "values") for ``std::integer_sequence<T, Is...>`` /
    #: ``std::index_sequence<Is...>``, (pack, "types") for ``std::tuple<Args...>``; ("", "") for the others
    param_packs: tuple[tuple[str, str], ...] = ()


@attrs.frozen
class Pack:
    """A template parameter pack the reading binds, element by element: the numbers of ``std::make_integer_sequence<
    uint32_t, N>()`` (``0 .. N-1``) bound to ``uint32_t... Is`` through a parameter ``std::integer_sequence<uint32_t,
    Is...>``, or the element types of a tuple bound to ``typename... Args`` through ``const std::tuple<Args...>&``
    (minimal_matmul/device/kernels/matmul_dataflow_common.hpp:29-52). Only ``sizeof...(P)`` and a pack expansion
    ``pattern...`` in a call's arguments (``KernelReader.expand``) read it."""

    items: tuple[Any, ...]


@attrs.frozen
class Obj:
    """A value of a struct the kernel or a followed header defines (``IterationShape::tiles(n)``,
    ``ReduceInputBlockShape::row(Wt)``, ``input(dfb::in)``'s ``InputSpec``): its fields by name, in declaration
    order. Immutable: a method that changes a field gives the variable a new value."""

    struct: str
    fields: tuple[tuple[str, Any], ...]

    def get(self, name: str) -> Any:
        return dict(self.fields).get(name, Opaque(f"{self.struct} has no field {name}"))


@attrs.frozen
class Optional:
    """A ``std::optional``: ``value`` None is ``std::nullopt``."""

    value: Any


@attrs.frozen
class TypeInst:
    """A class template named with its arguments as a value (``ckl::Exp<Approx::Fast, Dst::D0>``, a template
    argument bound to a type parameter): ``args`` are the template arguments as written, read."""

    name: str
    args: tuple[Any, ...]


@attrs.frozen
class Operand:
    """One input (``input(...)``) or output (``output(...)``) of a kernel_lib chain element: the buffer and its
    lifecycle policies (enumerator names: ``Upfront``, ``PerBlockSize``, ...)."""

    cb: int
    wait: str = "None"  # input: WaitPolicy; output: ReservePolicy
    pop: str = "None"  # input: PopPolicy; output: PushPolicy
    mapping: str = "Scalar"  # InputTileMapping (inputs)
    addressing: str = "Direct"
    extra: tuple[tuple[str, str], ...] = ()  # outputs: dest_accumulation, l1_accumulation


@attrs.frozen
class ChainElem:
    """An element of ``compute_kernel_lib::eltwise_chain`` (kernel_lib/eltwise/api/chain.hpp): ``kind`` is
    ``copy``, ``binary_fpu``, ``dest_reuse``, ``unary_bcast`` (CB readers), ``pack`` (the writer), ``dest`` (a
    DEST-only SFPU, fill or random element) or ``disabled`` (``Optional<false, ...>``); ``ins`` / ``out`` its
    operands; ``slots`` the DEST slots it touches; ``name`` the op (``add``, ``exp``, ...); ``loc`` where the
    kernel wrote it."""

    kind: str
    name: str
    ins: tuple[Operand, ...] = ()
    out: Operand | None = None
    slots: tuple[int, ...] = (0,)
    loc: Any = None


def kind(v: Any) -> str:
    """What ``v`` is, for a message: ``an object of class X`` for an ``Obj`` (not the reading's own class name),
    otherwise the value's kind (``L1Ptr``, ``Cb``)."""
    return f"an object of class {v.struct}" if isinstance(v, Obj) else type(v).__name__


Value = Sym | Opaque | Cb | NocObj | AccessorArgs | Accessor | TensorAddr | TensorPage | SemAddr | L1Ptr | RemoteAddr \
    | Unicast | McastAddr | Designated | Function | CbInterface | LoopCond | EnumConst | TypeName | TypeOf\
    | Obj | Optional | TypeInst | ChainElem | ArgArray | Table | LocalArray | ArrayRef | Pack | None
