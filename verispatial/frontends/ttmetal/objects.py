"""Structs, overloads and ``std::optional`` as the kernel helpers use them: values of the small aggregate and
constexpr structs ttnn's kernel_lib passes around (``IterationShape::tiles(n).block_size(b)``,
``ReduceInputBlockShape::row(Wt)``, ``input(dfb::in, WaitPolicy::Upfront)``'s ``InputSpec``), read exactly as C++
builds them: aggregate initialization by field order, constructors with their member initializer lists (delegating
ones included), static member functions, methods that change fields (``block_size`` sets ``block_tiles`` and returns
``*this``), and overloads told apart by the enumerators and structs their arguments are.

Only what these say is followed: a field never initialized is a value not followed (``Opaque``), a struct the
reading cannot build (a base class with state, a constructor it cannot choose) is refused by name where a value of it
is needed. Nothing here issues an op.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from verispatial.frontends.ttmetal import values as V
from verispatial.frontends.ttmetal.cpp import TYPE_SIZES, StructDef, function_declarator, has_effect, nested_key

if TYPE_CHECKING:
    from verispatial.frontends.ttmetal.lower import KernelReader


def struct_of(r: KernelReader, type_name: str) -> StructDef | None:
    """The struct named ``type_name`` (bare or qualified; a type alias resolved), if a followed header defines it.
    Refused by name: a class template with explicit specializations (``template <> struct Q<2> { ... };``), whose
    values the reading would build from the primary template (``Q<2> q; q.get()`` read as the primary's ``get``);
    their traits' values are read (``trait_value``)."""
    sd = _struct_of(r, type_name)
    if sd is not None:
        bare = sd.name.rsplit("::", 1)[-1].split("<", 1)[0]
        if "<" in sd.name or (sd.template_params is not None and any(
                k.split("<", 1)[0].rsplit("::", 1)[-1] == bare and "<" in k for k in r.prog.structs)):
            r.refuse("class template with explicit specializations", None,
                     f"{type_name}: {bare} has explicit specializations, which the reading does not choose between")
    return sd


def _struct_of(r: KernelReader, type_name: str) -> StructDef | None:
    name = "".join(type_name.split())
    name = r.type_aliases.get(name, name)
    if r.this_stack and "::" not in name:
        # inside a method, a class nested in its class or an enclosing one first (C++'s class scope lookup)
        scope = r.this_stack[-1][0].name if r.this_stack[-1][0] is not None else ""
        bare_t = name.split("<", 1)[0]
        while scope:
            if f"{scope}::{bare_t}" in r.prog.structs:
                return r.prog.structs[f"{scope}::{bare_t}"]
            scope = scope.rsplit("::", 1)[0] if "::" in scope else ""
    qualified = "::" in name.split("<", 1)[0]
    if qualified and name in r.prog.structs:
        return r.prog.structs[name]
    bare = name.rsplit("::", 1)[-1].split("<", 1)[0]
    bare = r.type_aliases.get(bare, bare)
    # C++ names the struct of the namespace a qualification gives; unqualified, the one the scopes and
    # using-directives where it is named find: of one bare name several namespaces define, the reading names none
    # (the bare key holds whichever was defined last)
    homes = _struct_homes(r).get(bare, {})
    if qualified:
        tail = name.split("<", 1)[0].lstrip(":")
        fit = {k: sd for k, sd in homes.items() if k == tail or k.endswith(f"::{tail}")}
        homes = fit or homes
    if len({id(sd) for sd in homes.values()}) > 1:
        return None
    if not qualified and name in r.prog.structs:
        return r.prog.structs[name]
    return r.prog.structs.get(bare)


def _struct_homes(r: KernelReader) -> dict[str, dict[str, StructDef]]:
    """Per bare struct name, the structs of that name by their keys in ``r.prog.structs`` (bare and qualified),
    built at the program's first use (``cpp.Program.struct_homes``)."""
    index = r.prog.struct_homes
    if not index and r.prog.structs:
        for key, sd in r.prog.structs.items():
            head = key.split("<", 1)[0]
            if head == key:  # a specialization's key (``is_accumulate<Accumulate>``) names no namespace
                index.setdefault(head.rsplit("::", 1)[-1], {})[key] = sd
    return index


def compatible(r: KernelReader, v: Any, type_name: str, tparams: tuple[str, ...] = ()) -> bool:
    """Whether an argument of value ``v`` can bind a parameter declared ``type_name`` — only clear mismatches are
    False: an enumerator of another enum (``WaitPolicy::Upfront`` for a ``BroadcastDim``), a struct for a number, a
    number or another struct for a struct no constructor builds from it."""
    t = type_name
    if not t or t in ("auto", "T") or t in tparams:
        return True
    sd = struct_of(r, t)
    if isinstance(v, V.EnumConst):
        enum = v.name.split("::")[0]
        return t == enum or (sd is None and t in TYPE_SIZES)
    if isinstance(v, V.Obj):
        if sd is None:
            return t not in TYPE_SIZES
        return v.struct == sd.name or _converting_ctor(r, sd, v) is not None
    if isinstance(v, (V.Sym, V.Cb)):
        return sd is None or any(_arity(c) == (1, 1) for c in sd.ctors)
    return True


def _arity(fn: Any) -> tuple[int, int]:
    """(required, total) parameters of a function definition or declaration."""
    d = function_declarator(fn)
    plist = d.child_by_field_name("parameters") if d is not None else None
    ps = [p for p in plist.named_children if p.type.endswith("parameter_declaration")] if plist is not None else []
    if any(p.type == "variadic_parameter_declaration" for p in ps):
        return (len(ps) - 1, 1 << 16)
    return (sum(1 for p in ps if p.type == "parameter_declaration"), len(ps))


def converts_from_one(ctor: Any, sd: StructDef) -> bool:
    """Whether constructor ``ctor`` of ``sd`` can build it from one argument that is not a ``sd`` (a converting
    constructor: ``X(uint32_t)``; a copy or move constructor is not one)."""
    lo, hi = _arity(ctor)
    if not lo <= 1 <= hi:
        return False
    d = function_declarator(ctor)
    plist = d.child_by_field_name("parameters") if d is not None else None
    first = next((p for p in plist.named_children if p.type.endswith("parameter_declaration")), None) \
        if plist is not None else None
    typ = first.child_by_field_name("type") if first is not None else None
    bare = sd.name.rsplit("::", 1)[-1].split("<", 1)[0]
    return typ is None or typ.text.decode().rsplit("::", 1)[-1].split("<", 1)[0] != bare


def _param_types(r: KernelReader, fn: Any) -> list[str]:
    d = function_declarator(fn)
    plist = d.child_by_field_name("parameters") if d is not None else None
    return [r.type_name(p.child_by_field_name("type")) for p in plist.named_children
            if p.type.endswith("parameter_declaration")] if plist is not None else []


def _converting_ctor(r: KernelReader, sd: StructDef, v: V.Obj) -> Any:
    """A one-argument (non-default-argument-needing) constructor of ``sd`` taking a ``v.struct``
    (``BroadcastInputSpec(InputSpec spec)``, kernel_lib/eltwise/api/chain.hpp:363)."""
    for c in sd.ctors:
        lo, hi = _arity(c)
        if lo <= 1 <= hi and _param_types(r, c)[:1] == [v.struct]:
            return c
    return None


def choose(r: KernelReader, cands: list[tuple[Any, Any]], vals: list[Any], declared_key: Any) -> tuple[Any, Any] | None:
    """The overload of ``cands`` (function definitions with their units) a call with argument values ``vals``
    selects: arity (counting defaults a forward declaration gives, ``declared_key(fn)``) and ``compatible``
    argument types. None when no candidate or more than one fits."""
    fits = []
    for fn, unit in cands:
        inner = fn if fn.type == "function_definition" else next(
            (x for x in fn.named_children if x.type == "function_definition"), fn)
        lo, hi = _arity(inner)
        decl = declared_key(inner)
        if decl is not None:
            lo = min(lo, sum(1 for p in decl.named_children if p.type == "parameter_declaration"))
        if not lo <= len(vals) <= hi:
            continue
        tparams = _template_params(fn)
        types = _param_types(r, inner)
        if all(compatible(r, v, t, tparams) for v, t in zip(vals, types, strict=False)):
            fits.append((fn, unit, hi == len(vals)))
    if len(fits) > 1:
        exact = [f for f in fits if f[2]]
        fits = exact if len(exact) == 1 else fits
    return (fits[0][0], fits[0][1]) if len(fits) == 1 else None


def _template_params(fn: Any) -> tuple[str, ...]:
    if fn.type != "template_declaration":
        return ()
    plist = fn.child_by_field_name("parameters")
    out = []
    for p in plist.named_children if plist is not None else ():
        name = p.child_by_field_name("name") or next((c for c in p.named_children if c.type in (
            "type_identifier", "identifier")), None)
        if name is not None:
            out.append(name.text.decode())
    return tuple(out)


def construct(r: KernelReader, sd: StructDef, args: list[Any], n: Any, braced: bool = False,
              arg_nodes: list[Any] | None = None) -> V.Value:
    """A value of ``sd`` built from ``args`` (already read): by the constructor they select, else, for ``{...}``
    or no arguments, by aggregate initialization in field order (a ``Designated`` argument list names fields).
    Refuses by name when no constructor fits."""
    user = [c for c in sd.ctors if c.child_by_field_name("body") is not None]
    if len(args) == 1 and isinstance(args[0], V.Obj) and args[0].struct == sd.name:
        created(r, sd, n)
        return args[0]  # a copy
    if braced and len(args) == 1 and isinstance(args[0], V.Designated) and user and all(
            k.isdigit() for k, _ in args[0].fields):
        args = [v for _, v in args[0].fields]  # list-initialization ``return {1, n};``: the constructor's arguments
    if user:
        fits = [c for c in user if _arity(c)[0] <= len(args) <= _arity(c)[1]
                and all(compatible(r, v, t) for v, t in zip(args, _param_types(r, c), strict=False))]
        if len(fits) > 1:
            exact = [c for c in fits if _arity(c)[1] == len(args)]
            fits = exact if len(exact) == 1 else fits
        if len(fits) == 1:
            return run_ctor(r, sd, fits[0], args, n)
        defaulted = any(c.child_by_field_name("body") is None and _arity(c) == (0, 0) for c in sd.ctors)
        if (args or not braced) and not (not args and defaulted):
            r.refuse(f"constructor of {sd.name} not chosen", n,
                     f"{len(fits)} of its constructors fit {len(args)} arguments")
    if len(args) == 1 and isinstance(args[0], V.Designated):
        fields = dict(args[0].fields)
        positional = [fields[str(i)] for i in range(len(fields)) if str(i) in fields]
        named = {k: v for k, v in fields.items() if not k.isdigit()}
        return aggregate(r, sd, positional, named, n)
    return aggregate(r, sd, args, {}, n)


def implicit_calls(r: KernelReader, sd: StructDef, seen: frozenset[str] = frozenset()) -> str | None:
    """What C++ would run for an object of ``sd`` with no call written that the reading does not follow, or None:
    a destructor or a copy or move constructor that may do something (``cpp.has_effect``) of the class, of a base
    class or of a field's class (their destructors run with the object's, their copy constructors with its copy),
    or a base class's constructor that may (``D : B`` runs ``B()``, not read as part of a ``D``)."""
    if sd.name in seen:
        return None
    seen = seen | {sd.name}
    if sd.lifecycle:
        return f"{sd.name}'s {sd.lifecycle[0][0]}"
    for base in _bases(sd):
        bsd = _in_scope(r, sd, base, own=False)
        if bsd is None:
            if _names_a_class(r, base):
                return f"the code of {sd.name}'s base class {base}, a class the reading does not resolve,"
            continue
        if any(has_effect(c) for c in bsd.ctors):
            return f"the constructor of {sd.name}'s base class {bsd.name}"
        why = implicit_calls(r, bsd, seen)
        if why is not None:
            return why
    if _unnamed_class_member(sd):
        return f"the code of a member of {sd.name} of an unnamed class, which the reading does not follow,"
    for ftype in [t for _, t, _ in sd.fields] + _array_member_types(sd):
        if ftype in _template_type_params(sd) and _any_class_runs_code(r):
            # ``template <class T> struct W { T v; };``: the reading does not keep W<G>'s T with the object
            return f"the code of {sd.name}'s member of its template parameter's class {ftype}, which the reading " \
                   "does not resolve,"
        fsd = _in_scope(r, sd, ftype) if ftype else None
        if fsd is None and ftype and _names_a_class(r, ftype):
            # never read as doing nothing: a class of that name may run code here
            return f"the code of {sd.name}'s member of class {ftype}, a class the reading does not resolve,"
        why = implicit_calls(r, fsd, seen) if fsd is not None else None
        if why is not None:
            return why
        if fsd is not None and ftype in _array_member_types(sd) and _default_ctor_effect(fsd):
            return f"the constructor of {fsd.name}, run for each element of an array member of {sd.name}"
    return None


def _in_scope(r: KernelReader, sd: StructDef, type_name: str, own: bool = True) -> StructDef | None:
    """The class ``type_name`` names where ``sd`` is defined: in ``sd``'s scope (``own``: a member's type) or the
    classes enclosing it first (``struct O { struct I {}; struct E : I { I i; }; };`` names ``O::I``), then as
    ``struct_of`` finds it."""
    bare = "".join(type_name.split()).split("<", 1)[0]
    if "::" in bare.lstrip(":"):
        key = nested_key(r.prog.structs, bare)
        return struct_of(r, key) if key is not None else struct_of(r, type_name)
    scope = sd.name.split("<", 1)[0] if own else sd.name.split("<", 1)[0].rpartition("::")[0]
    while scope:
        if f"{scope}::{bare}" in r.prog.structs:
            return struct_of(r, f"{scope}::{bare}")
        scope = scope.rpartition("::")[0]
    return struct_of(r, type_name)


def _template_type_params(sd: StructDef) -> tuple[str, ...]:
    """The names of class template ``sd``'s type parameters (``T`` of ``template <class T>``)."""
    if sd.template_params is None:
        return ()
    out = []
    for p in sd.template_params.named_children:
        if p.type in ("type_parameter_declaration", "optional_type_parameter_declaration",
                      "variadic_type_parameter_declaration"):
            name = next((c for c in p.named_children if c.type == "type_identifier"), None)
            if name is not None:
                out.append(name.text.decode())
    return tuple(out)


#: per program (by id, with the program kept so the id is not reused): whether a class it defines runs code C++
#: calls with no call written (a destructor, copy constructor or constructor that may do something)
_RUNS_CODE: dict[int, tuple[Any, bool]] = {}


def _any_class_runs_code(r: KernelReader) -> bool:
    """Whether some class of the kernel's files may run code where a member of a template parameter's type would
    be built or destroyed: if none does, no argument of the kernel's makes such a member do anything."""
    hit = _RUNS_CODE.get(id(r.prog))
    if hit is None or hit[0] is not r.prog:
        runs = any(sd.lifecycle or any(has_effect(c) for c in sd.ctors) for sd in r.prog.structs.values())
        _RUNS_CODE.clear()  # one program at a time: the last one read
        hit = _RUNS_CODE[id(r.prog)] = (r.prog, runs)
    return bool(hit[1])


def _names_a_class(r: KernelReader, type_name: str) -> bool:
    """Whether some class the kernel's files define has the last component of ``type_name`` as its name (one the
    reading did not resolve: a nested class named from elsewhere, one of two of that name)."""
    bare = "".join(type_name.split()).split("<", 1)[0].rsplit("::", 1)[-1]
    return bare in _struct_homes(r)


def _unnamed_class_member(sd: StructDef) -> bool:
    """Whether ``sd`` has a data member of an unnamed class with a member of class type (``struct { G g; } x;``):
    C++ builds and destroys that member with the object; the reading keeps no class to look it up in."""
    body = sd.node.child_by_field_name("body")
    for m in body.named_children if body is not None else ():
        typ = m.child_by_field_name("type") if m.type == "field_declaration" else None
        if typ is None or typ.type not in ("struct_specifier", "class_specifier", "union_specifier") or \
                typ.child_by_field_name("name") is not None or typ.child_by_field_name("body") is None:
            continue
        for f in typ.child_by_field_name("body").named_children:
            ft = f.child_by_field_name("type") if f.type == "field_declaration" else None
            if ft is not None and ft.type not in ("primitive_type", "sized_type_specifier") and \
                    "".join(ft.text.decode().split()).rsplit("::", 1)[-1] not in TYPE_SIZES:
                return True
    return False


def _array_member_types(sd: StructDef) -> list[str]:
    """The element types of ``sd``'s array members (``G g[2];``, ``std::array<G, 2> g;``), whose elements C++
    builds and destroys with the object (``StructDef.fields`` gives an array member no type)."""
    body = sd.node.child_by_field_name("body")
    out = []
    for m in body.named_children if body is not None else ():
        typ = m.child_by_field_name("type") if m.type == "field_declaration" else None
        if typ is None or any(x.type == "storage_class_specifier" and x.text == b"static" for x in m.children):
            continue
        text = "".join(typ.text.decode().split())
        elem = array_element_type(text)
        if elem is not None:
            out.append(elem)
        elif any(d.type == "array_declarator" for d in m.children_by_field_name("declarator")):
            out.append(text.split("<", 1)[0])  # qualified as written: ``_in_scope`` resolves it
    return out


def array_element_type(type_text: str) -> str | None:
    """The element type of a ``std::array<T, N>`` (nested ones to their innermost element), or None for any other
    type."""
    text = "".join(type_text.split())
    found = False
    while text.split("<", 1)[0].rsplit("::", 1)[-1] == "array" and "<" in text:
        text = text.split("<", 1)[1].rsplit(",", 1)[0]
        found = True
    return text.rsplit("::", 1)[-1].split("<", 1)[0] if found else None


def _default_ctor_effect(sd: StructDef) -> bool:
    """Whether building ``sd`` with no arguments may run code (a user constructor with no required parameter
    whose body or member initializers may do something)."""
    return any(_arity(c)[0] == 0 and has_effect(c) for c in sd.ctors)


def created(r: KernelReader, sd: StructDef, n: Any, element: bool = False) -> None:
    """Every object the reading makes of ``sd`` (a variable, an array's or ``std::array``'s element, a member, a
    range-``for``'s copy of an element, a parameter or result passed by value, a temporary) passes here, at its
    line ``n``. Refused by name: a class that runs code no call names (``refuse_implicit_calls``); for an
    ``element`` the reading does not build one by one (``G g[2];``), also a constructor that may do something,
    which C++ runs once per element."""
    refuse_implicit_calls(r, sd, n)
    if element and _default_ctor_effect(sd):
        r.refuse("object whose class runs code no call names", n,
                 f"the constructor of {sd.name} runs for each element of the array, which the reading does not "
                 "follow")


def declared_operator(r: KernelReader, sd: StructDef, want: Any, seen: frozenset[str] = frozenset()) -> str | None:
    """The first operator or conversion function ``sd`` or a base class declares for which ``want(name)`` holds
    (names as ``StructDef.operators`` gives them: ``operator,``, ``operator uint32_t``), or None."""
    if sd.name in seen:
        return None
    hit = next((o for o in sd.operators if want(o)), None)
    if hit is not None:
        return hit
    for base in _bases(sd):
        bsd = struct_of(r, base)
        hit = declared_operator(r, bsd, want, seen | {sd.name}) if bsd is not None else None
        if hit is not None:
            return hit
    return None


def is_conversion(op: str) -> bool:
    """Whether operator name ``op`` (``StructDef.operators``) is a conversion function (``operator uint32_t``,
    ``operator bool``, one declared elsewhere), not a symbol's operator nor ``operator new`` / ``delete``."""
    rest = op[len("operator"):]
    return rest[:1] in (" ", "") and rest.strip().split("[", 1)[0] not in ("", "new", "delete", '""') \
        if op.startswith("operator") else False


def _bases(sd: StructDef) -> list[str]:
    """The names of ``sd``'s base classes as its base clause writes them (``B``, ``ns::C<int>``)."""
    if sd.bases is None:
        return []
    return ["".join(c.text.decode().split()) for c in sd.bases.named_children
            if c.type in ("type_identifier", "qualified_identifier", "template_type")]


def refuse_implicit_calls(r: KernelReader, sd: StructDef, n: Any) -> None:
    """Refuse an object of ``sd`` when C++ runs code of it no call names (``implicit_calls``): a guard whose
    destructor pops a page, a copy constructor that waits, would otherwise be read as doing nothing."""
    why = implicit_calls(r, sd)
    if why is not None:
        r.refuse("object whose class runs code no call names", n,
                 f"{why} runs where C++ creates, copies or destroys the object, which the reading does not follow")


def aggregate(r: KernelReader, sd: StructDef, positional: list[Any], named: dict[str, Any], n: Any) -> V.Obj:
    """Aggregate initialization: fields in order from ``positional``, by name from ``named``, the rest from their
    default member initializers (read in the struct's file) or not followed. Refused by name: an object whose class
    runs code no call names (``created``)."""
    created(r, sd, n)
    if len(positional) > len(sd.fields):
        r.refuse(f"initializer of {sd.name} with too many values", n, f"{len(positional)} for {len(sd.fields)} fields")
    out = []
    for i, (fname, ftype, default) in enumerate(sd.fields):
        if i < len(positional):
            v = convert(r, positional[i], ftype, n)
        elif fname in named:
            v = convert(r, named[fname], ftype, n)
        else:
            v = default_value(r, sd, ftype, default, n)
        out.append((fname, v))
    return V.Obj(sd.name, tuple(out))


def default_value(r: KernelReader, sd: StructDef, ftype: str, default: Any, n: Any) -> V.Value:
    if default is None:
        fsd = struct_of(r, ftype)
        if fsd is not None and fsd is not sd:
            return construct(r, fsd, [], n, braced=True)
        # the struct's own words (a member array filled later, ``TensorTileShape::shape``): a store into them
        # changes nothing the choreography names
        return V.LocalOpaque(f"{sd.name} field of no initializer")
    saved, r.unit = r.unit, sd.unit
    try:
        if default.type == "initializer_list":
            fsd = struct_of(r, ftype)
            vals = [r.expr(a) for a in default.named_children]
            return construct(r, fsd, vals, n, braced=True) if fsd is not None else (
                # an aggregate member (``uint32_t ring_idxs[2] = {}``): the struct's own words
                vals[0] if len(vals) == 1 else V.LocalOpaque(f"{sd.name} field {r.text(default)}"))
        # copy-initialization: ``M m = 1u;`` runs ``M(uint32_t)`` as ``M m = 1u;`` does as a variable
        return convert(r, r.expr(default), ftype, n)
    finally:
        r.unit = saved


def convert(r: KernelReader, v: Any, type_name: str, n: Any) -> Any:
    """``v`` bound to a parameter, field or template parameter declared ``type_name``: a struct built from it when
    the type is a struct and ``v`` is not one (a braced list, a converting constructor), a ``std::optional`` holding
    it when the type is ``std::optional``; a number converted to a narrow or signed 32-bit integer type
    (``KernelReader.held_as``: a ``uint8_t`` field initialised ``x(258)`` holds 2); otherwise ``v``. Refused by
    name: an object of another struct with no converting constructor (a derived class's bound as its base)."""
    if type_name == "optional" and not isinstance(v, V.Optional):
        return V.Optional(v)
    sd = struct_of(r, type_name) if type_name else None
    if sd is None:
        return r.held_as(v, type_name)
    if isinstance(v, V.Obj) and v.struct == sd.name:
        created(r, sd, n)  # a parameter, member or result of the class: a copy (or a reference, made no object)
        return v
    if isinstance(v, V.Designated):
        return construct(r, sd, [v], n, braced=True)
    if isinstance(v, V.Obj) and _converting_ctor(r, sd, v) is not None:
        return run_ctor(r, sd, _converting_ctor(r, sd, v), [v], n)
    if not isinstance(v, V.Obj) and any(_arity(c)[0] <= 1 <= _arity(c)[1] for c in sd.ctors):
        # ``X x = 3u;`` of an ``X(uint32_t)``: copy-initialization runs the converting constructor (it was read as
        # the number, the constructor's body never run); ``construct`` chooses it or refuses by name
        return construct(r, sd, [v], n)
    if isinstance(v, V.Obj):
        # ``const B& b = d;`` of a ``D : B``: a call of a non-virtual method runs B's, which the value, a D, does not
        # say (it was read as D's)
        r.refuse("object bound as another class", n, f"a {v.struct} bound where a {sd.name} is declared (a base class "
                                                     "or another type): the reading does not follow declared types")
    return v


def run_ctor(r: KernelReader, sd: StructDef, ctor: Any, args: list[Any], n: Any) -> V.Obj:
    """Run constructor ``ctor`` of ``sd``: fields from their default member initializers, then the member
    initializer list (a delegating ``IterationShape(1, n_tiles)`` builds the whole value), then the body with the
    fields as variables. Refused by name: an object whose class runs code no call names (``created``)."""
    created(r, sd, n)
    fields = {f: default_value(r, sd, t, d, n) for f, t, d in sd.fields}
    ftypes = {f: t for f, t, _ in sd.fields}
    f = r.function_of(ctor, sd.unit, sd.name)
    scope = r.bind_params(f, args, n)
    saved_scopes, saved_unit = r.scopes, r.unit
    r.scopes, r.unit = [r.scopes[0], scope], sd.unit
    try:
        inits = next((x for x in ctor.named_children if x.type == "field_initializer_list"), None)
        for fi in inits.named_children if inits is not None else ():
            if fi.type != "field_initializer":
                continue
            name_node = fi.named_children[0]
            name = name_node.text.decode().rsplit("::", 1)[-1].split("<", 1)[0]
            arg_list = next((x for x in fi.named_children if x.type in ("argument_list", "initializer_list")), None)
            vals = [r.expr(a) for a in arg_list.named_children if a.type != "comment"] if arg_list is not None else []
            if name == sd.name:
                whole = construct(r, sd, vals, n)
                assert isinstance(whole, V.Obj)
                fields.update(dict(whole.fields))
            elif name in fields:
                fsd = struct_of(r, ftypes[name])
                if fsd is not None and not (len(vals) == 1 and isinstance(vals[0], V.Obj)):
                    fields[name] = construct(r, fsd, vals, n, braced=arg_list is not None
                                             and arg_list.type == "initializer_list")
                else:
                    fields[name] = convert(r, vals[0], ftypes[name], n) if len(vals) == 1 else V.Opaque(
                        f"{sd.name}.{name} built from {len(vals)} values")
            # a base class's initializer: its state is not a field of this value
        body = ctor.child_by_field_name("body")
        if body is not None and body.named_child_count:
            r.scopes = [r.scopes[0], fields, scope]
            r.this_stack.append((sd, fields))
            try:
                r.stmt(body)
            finally:
                r.this_stack.pop()
    finally:
        r.scopes, r.unit = saved_scopes, saved_unit
    return V.Obj(sd.name, tuple((f, fields[f]) for f, _, _ in sd.fields))


def optional_method(r: KernelReader, opt: V.Optional, name: str, vals: list[Any], n: Any) -> Any:
    """``has_value()`` / ``value()`` / ``value_or(d)`` of a ``std::optional`` the reading follows."""
    if name == "has_value":
        return V.const(int(opt.value is not None))
    if name == "value":
        if opt.value is None:
            r.refuse("value() of an empty std::optional", n)
        return opt.value
    if name == "value_or":
        if not vals:
            r.refuse("value_or without a default", n)
        return opt.value if opt.value is not None else vals[0]
    r.refuse(f"std::optional.{name}", n)


def static_member(r: KernelReader, sd: StructDef, args: tuple[Any, ...], name: str, n: Any) -> V.Value:
    """``S<args>::name``: a static constexpr data member of a struct template instance
    (``UntilizeDispatchConfig<w, in, out>::use_fast``, kernel_lib/untilize_helpers.inl:78-89), or of a struct (no
    ``args``), read with the template parameters bound to ``args`` (or their defaults) and the members declared
    before it, each held as its declared type (``KernelReader.held_as``)."""
    plist = sd.template_params
    names = tuple(r.template_param_name(p) for p in plist.named_children) if plist is not None else ()
    defaults = r.defaults(plist, names) if plist is not None else {}
    scope: dict[str, Any] = dict(zip(names, args, strict=False))
    saved_scopes, saved_unit = r.scopes, r.unit
    r.scopes, r.unit = [r.scopes[0], scope], sd.unit
    try:
        for p in names[len(args):]:
            if p in defaults:
                dv = defaults[p]
                scope[p] = r.template_value(dv) if dv.type in ("type_descriptor", "type_identifier") else r.expr(dv)
        body = sd.node.child_by_field_name("body")
        for m in body.named_children if body is not None else ():
            if m.type != "field_declaration" or not any(
                    x.type == "storage_class_specifier" and x.text == b"static" for x in m.children):
                continue
            for d in m.children_by_field_name("declarator"):
                value = m.child_by_field_name("default_value")
                if d.type == "field_identifier" and value is not None:
                    # held as its declared type: ``static constexpr uint8_t v = N + 1;`` at N = 255 is 0
                    ftype = m.child_by_field_name("type")
                    scope[d.text.decode()] = r.held_as(r.expr(value), " ".join(ftype.text.decode().split())
                                                       if ftype is not None else "")
                    if d.text.decode() == name:
                        return scope[name]
    finally:
        r.scopes, r.unit = saved_scopes, saved_unit
    return V.Opaque(f"{sd.name}::{name}, not a static member the reading follows")


def _type_key(v: Any) -> str | None:
    """A type argument's name for matching a specialization (``Accumulate``), or None when not a type followed."""
    if isinstance(v, V.TypeInst) and not v.args:
        return v.name.rsplit("::", 1)[-1]
    if isinstance(v, V.TypeName):
        return v.name
    if isinstance(v, V.TypeOf) and isinstance(v.value, V.Obj):
        return v.value.struct  # a type deduced from a struct argument (``AccumulateT accumulate``)
    if isinstance(v, V.TypeOf) and isinstance(v.value, V.Function) and v.value.name == "lambda":
        return "<lambda>"  # a closure type: no named type is it
    return None


def trait_value(r: KernelReader, tv: V.TypeInst, member: str, n: Any) -> V.Value:
    """``Trait<T>::value`` of a type trait the helpers define (``is_accumulate<T>``: the primary template derives
    ``std::false_type``, ``template <> struct is_accumulate<Accumulate> : std::true_type``): the full specialization
    for the argument's type if there is one, else the primary template; its ``std::true_type`` /
    ``std::false_type`` / ``std::bool_constant<e>`` base, or a static member of that name."""
    keys = [_type_key(a) for a in tv.args]
    name = tv.name.rsplit("::", 1)[-1]
    sd = r.prog.structs.get(f"{name}<{','.join(k for k in keys if k)}>") if all(keys) else None
    if sd is None:
        sd = r.prog.structs.get(name)
        if sd is not None and any(k is None for k in keys):
            # a type the reading does not follow could match a specialization
            specialized = any(k.startswith(f"{name}<") for k in r.prog.structs)
            if specialized:
                return V.Opaque(f"{name}<...>::{member} of a type not followed")
    if sd is None:
        return V.Opaque(f"{tv.name}<...>::{member}: not defined in a followed header")
    if member == "value" and sd.bases is not None:
        text = "".join(sd.bases.text.decode().split()).lstrip(":")
        if text.endswith("true_type"):
            return V.const(1)
        if text.endswith("false_type"):
            return V.const(0)
    if sd.template_params is not None or not tv.args:
        return static_member(r, sd, tv.args, member, n)
    return V.Opaque(f"{tv.name}<...>::{member}")


def variable_template(r: KernelReader, n: Any) -> V.Value:
    """``name<args>`` of a variable template (``is_accumulate_v<T>``) or ``std::is_same_v<A, B>`` of two types the
    reading follows; anything else a value not followed."""
    fname = "".join(n.child_by_field_name("name").text.decode().split())
    targs_node = n.child_by_field_name("arguments")
    targs = [r.template_value(x) if x.type == "type_descriptor" else r.expr(x)
             for x in (targs_node.named_children if targs_node is not None else ()) if x.type != "comment"]
    bare = fname.rsplit("::", 1)[-1]
    if bare == "is_same_v" and len(targs) == 2:
        a, b = (_type_key(x) for x in targs)
        if a is not None and b is not None:
            return V.const(int(a == b))
        return V.Opaque(f"{r.text(n)}: a type not followed")
    hit = r.prog.var_templates.get(bare)
    if hit is None:
        return V.Opaque(f"the template {r.text(n)}")
    plist, init, unit = hit
    names = tuple(r.template_param_name(p) for p in plist.named_children) if plist is not None else ()
    saved_scopes, saved_unit = r.scopes, r.unit
    r.scopes, r.unit = [r.scopes[0], dict(zip(names, targs, strict=False))], unit
    try:
        return r.expr(init)  # type: ignore[no-any-return]
    finally:
        r.scopes, r.unit = saved_scopes, saved_unit


#: tensor_accessor::ArgConfig's bits (hostdevcommon/api/hostdevcommon/tensor_accessor/arg_config.hpp:17-29)
_SHARDED, _RUNTIME_RANK, _RUNTIME_NUM_BANKS, _RUNTIME_TENSOR_SHAPE, _RUNTIME_SHARD_SHAPE, _RUNTIME_BANK_COORDS, \
    _RUNTIME_PAGE_SIZE = 1 << 0, 1 << 2, 1 << 3, 1 << 4, 1 << 5, 1 << 6, 1 << 7
#: the shard-contiguous flag in the top bit of the num_banks word (arg_config.hpp:43-48)
_SHARD_CONTIGUOUS_BIT = 1 << 31


def accessor_args_count(r: KernelReader, args: V.AccessorArgs, n: Any) -> V.Sym | V.Opaque:
    """``TensorAccessorArgs<N>::num_compile_time_args()``, the compile-time args the accessor's layout takes from
    index ``N`` on, as api/tensor/tensor_accessor_args.h:21-111 computes ``NumArgsCT`` from them: the config word
    at ``N`` (its low 8 bits, ``ArgsConfig::Underlying`` is ``uint8_t``); interleaved, the config word and the aligned
    page size (one word without the page size when ``RuntimePageSize`` is set); sharded, also the rank, the bank
    count, the tensor and shard shapes (rank words each) and the bank coordinates (one word per two banks), each
    left out when the config says it is a runtime arg. The args it reads must be numbers the host gives; an arg the
    host does not give or that is not a number gives a value not followed (refused where an op or an index needs
    it)."""
    if not isinstance(args.cta, V.Sym) or not args.cta.is_const:
        return V.Opaque(args.cta.why if isinstance(args.cta, V.Opaque) else "an accessor's offset not known statically")
    base = args.cta.const

    def ct(i: int) -> int | None:
        if not r.survey and not 0 <= i < len(r.kernel.compile_time_args):
            return None  # the host leaves the accessor's words out: only a use of what follows them is refused
        v = r.call_api("get_compile_time_arg_val", [V.const(i)], n)
        return v.const if isinstance(v, V.Sym) and v.is_const else None

    cfg = ct(base)
    if cfg is None:
        return V.Opaque(f"the config word of TensorAccessorArgs<{base}>, compile-time arg {base}, is not a number "
                        "the host gives")
    cfg &= 0xFF

    def runtime(bit: int) -> bool:
        return bool(cfg & bit)

    if not cfg & _SHARDED:
        return V.const(1 if runtime(_RUNTIME_PAGE_SIZE) else 2)
    rank_at = base + 2  # a sharded accessor never has a runtime page size (tensor_accessor_args.h:44-48)
    banks_at = rank_at + (0 if runtime(_RUNTIME_RANK) else 1)
    rank = 0 if runtime(_RUNTIME_RANK) else ct(rank_at)
    raw = 0 if runtime(_RUNTIME_NUM_BANKS) else ct(banks_at)
    if rank is None or raw is None:
        return V.Opaque(f"the rank or bank count of TensorAccessorArgs<{base}> is not a number")
    banks = raw & ~_SHARD_CONTIGUOUS_BIT & 0xFFFFFFFF
    shape_at = banks_at + (0 if runtime(_RUNTIME_NUM_BANKS) else 1)
    shard_at = shape_at + (0 if runtime(_RUNTIME_TENSOR_SHAPE) else rank)
    coords_at = shard_at + (0 if runtime(_RUNTIME_SHARD_SHAPE) else rank)
    return V.const(coords_at + (0 if runtime(_RUNTIME_BANK_COORDS) else (banks + 1) // 2) - base)


#: the config word's flags an accessor's args expose as ``static constexpr bool`` members
#: (api/tensor/tensor_accessor_args.h:25-26)
_ARG_FLAGS = {"is_sharded": _SHARDED, "is_dram": 1 << 1}


def accessor_args_flag(r: KernelReader, args: V.AccessorArgs, field: str, n: Any) -> V.Value:
    """``TensorAccessorArgs<N>().is_sharded`` / ``.is_dram``: the bit of the config word, compile-time arg ``N``
    (non_zero_indices_sc_reader.cpp:57 branches on it); a config word not a number the host gives is not followed."""
    if field not in _ARG_FLAGS or not isinstance(args.cta, V.Sym) or not args.cta.is_const:
        return V.Opaque(f"the accessor args' {field}: {r.text(n)}")
    base = args.cta.const
    if not r.survey and not 0 <= base < len(r.kernel.compile_time_args):
        return V.Opaque(f"the config word of TensorAccessorArgs<{base}> is not a compile-time arg the host gives")
    cfg = r.call_api("get_compile_time_arg_val", [V.const(base)], n)
    if not isinstance(cfg, V.Sym) or not cfg.is_const:
        return V.Opaque(f"the config word of TensorAccessorArgs<{base}> is not a number")
    return V.const(int(bool(cfg.const & _ARG_FLAGS[field])))
