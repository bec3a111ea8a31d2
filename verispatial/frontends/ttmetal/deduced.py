"""The C++ type of a named integer object and of an integer expression, as far as the reading knows it: a variable's
declared type, one ``auto`` / ``auto&`` / ``decltype(auto)`` / brace-init deduces from its initializer ([dcl.spec.auto]:
``auto m = n`` of a ``uint8_t n`` is a ``uint8_t``; ``auto s = n + 1`` an ``int``, the integral promotions and the
usual arithmetic conversions, [conv.prom], [expr.arith.conv]), a reference's referent's. A store through any name of
the object converts to that type ([expr.ass], [conv.integral]: ``KernelReader.assign``); an object whose type is not
known holds the text ``UNKNOWN`` and a store of a number it may not hold is a value not followed, never a guess.

Types are canonical fixed-width names (``canonical``) on the RISC's rv32 (``int`` and ``long`` 32 bits, ``long long``
64, plain ``char`` unsigned as ``lower.to_integer`` converts it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from verispatial.frontends.ttmetal import values as V

if TYPE_CHECKING:
    from verispatial.frontends.ttmetal.lower import KernelReader

#: the type text of an object whose type ``auto`` or ``decltype`` would deduce from what the reading cannot type (a
#: call's result, a field): a store of a number outside ``[0, 128)`` into it is not followed (``KernelReader.assign``)
UNKNOWN = "auto"
#: the type text of a declaration whose type names what the reading does not resolve (an alias template's
#: instance); objects so declared, or of a template type parameter no argument binds, are typed ``UNKNOWN``
UNKNOWN_TYPE = "?"

#: the rv32 integer types by the words naming them (qualifiers and ``std::`` dropped, ``int`` after a size word
#: dropped: ``unsigned short int`` is ``unsigned short``)
_CANONICAL = {
    "bool": "bool", "char": "char", "signed char": "int8_t", "unsigned char": "uint8_t", "int8_t": "int8_t",
    "uint8_t": "uint8_t", "short": "int16_t", "signed short": "int16_t", "unsigned short": "uint16_t",
    "int16_t": "int16_t", "uint16_t": "uint16_t", "int": "int32_t", "signed": "int32_t", "signed int": "int32_t",
    "long": "int32_t", "signed long": "int32_t", "int32_t": "int32_t", "unsigned": "uint32_t",
    "unsigned int": "uint32_t", "unsigned long": "uint32_t", "uint32_t": "uint32_t", "uint": "uint32_t",
    "size_t": "uint32_t", "uintptr_t": "uint32_t", "long long": "int64_t", "signed long long": "int64_t",
    "unsigned long long": "uint64_t", "int64_t": "int64_t", "uint64_t": "uint64_t",
    "unsigned long int": "uint32_t", "long unsigned": "uint32_t", "long unsigned int": "uint32_t",
    "short unsigned": "uint16_t", "char unsigned": "uint8_t",
    "unsigned long long int": "uint64_t", "long long int": "int64_t",
    "intptr_t": "int32_t", "ptrdiff_t": "int32_t",
    # <stdint.h>'s least-width types are the narrowest holding N bits; fast8 is the 8-bit one in GCC's newlib and
    # glibc headers alike, fast32 the word (fast16 is ``int`` in glibc and ``short`` in newlib: not known, ``NOT_KNOWN``)
    **{f"{u}int_least{n}_t": f"{u}int{n}_t" for u in ("", "u") for n in (8, 16, 32, 64)},
    **{f"{u}int_fast{n}_t": f"{u}int{n}_t" for u in ("", "u") for n in (8, 32, 64)},
}
#: integer types whose width the RISC's toolchain headers decide and the reading does not know
NOT_KNOWN = frozenset({"int_fast16_t", "uint_fast16_t"})
_WIDTH = {"bool": 1, "char": 1, "int8_t": 1, "uint8_t": 1, "int16_t": 2, "uint16_t": 2, "int32_t": 4, "uint32_t": 4,
          "int64_t": 8, "uint64_t": 8}


def canonical(text: str | None) -> str | None:
    """The rv32 integer type ``text`` names (``const unsigned int`` -> ``uint32_t``), None for any other type (a
    pointer, a reference's ``&``, a float, a class, ``auto``)."""
    if not text or "*" in text or "&" in text:
        return None
    words = [w for w in text.replace("std::", "").split()
             if w not in ("const", "constexpr", "volatile", "static", "inline", "tt_l1_ptr", "register")]
    if len(words) > 1 and words[-1] == "int" and words[-2] in ("short", "long", "signed", "unsigned"):
        words = words[:-1] if words[-2] in ("short", "long") else words
    return _CANONICAL.get(" ".join(words))


def promoted(t: str) -> str:
    """Integer type ``t`` after the integral promotions ([conv.prom]): every type narrower than ``int`` is ``int``."""
    return "int32_t" if _WIDTH[t] < 4 else t


def common(a: str, b: str) -> str:
    """The usual arithmetic conversions of two integer types ([expr.arith.conv]) on rv32: promoted, the wider one;
    of one width, the unsigned one (an ``int64_t`` holds every ``uint32_t``)."""
    a, b = promoted(a), promoted(b)
    if _WIDTH[a] != _WIDTH[b]:
        return a if _WIDTH[a] > _WIDTH[b] else b
    return a if a.startswith("u") else b


def object_type(r: KernelReader, name: str) -> str | None:
    """The type text the innermost declaration in scope of ``name`` gives the object it names (a reference's, its
    referent's; ``UNKNOWN`` where ``auto`` deduced from what the reading cannot type), None where no declaration the
    reading holds types it (a pointer counter, a name not declared in a scope)."""
    for s in reversed(r.scopes):
        if name in s:
            typ = s.get(name + TYPE_KEY)
            return typ.why.replace("std::", "") if isinstance(typ, V.Opaque) else None
    return None


def _literal(text: str) -> str | None:
    t = text.lower().replace("'", "")
    if t.startswith(("0x", "0b")):
        digits = t.rstrip("ul")
    else:
        if "." in t or "e" in t or t.endswith("f"):
            return None
        digits = t.rstrip("ul")
    suffix = t[len(digits):]
    try:
        k = int(digits, 8) if len(digits) > 1 and digits[0] == "0" and digits.isdigit() else int(digits, 0)
    except ValueError:
        return None
    decimal = digits.isdigit() and not (len(digits) > 1 and digits[0] == "0")
    # [lex.icon]: the first type that holds the value among those the suffix and base allow
    order = ["uint32_t", "uint64_t"] if "u" in suffix else ["int32_t", "int64_t"] if decimal else [
        "int32_t", "uint32_t", "int64_t", "uint64_t"]
    for typ in order:
        if "ll" in suffix and _WIDTH[typ] < 8:
            continue
        if k < 1 << (8 * _WIDTH[typ] - (typ[0] == "i")):
            return typ
    return None


def expr_type(r: KernelReader, n: Any) -> str | None:
    """The canonical integer type of expression ``n`` as far as its text and the declarations in scope say (an
    lvalue's own type, unpromoted: ``auto m = n`` is ``n``'s), None where they do not (a call the reading does not
    type, a field, a value deduced from what it cannot type)."""
    t = n.type
    if t in ("parenthesized_expression", "initializer_list", "argument_list") and n.named_child_count == 1:
        return expr_type(r, n.named_children[0])
    if t == "number_literal":
        return _literal(n.text.decode())
    if t in ("true", "false"):
        return "bool"
    if t == "char_literal":
        return "char"
    if t == "identifier":
        return canonical(object_type(r, n.text.decode()))
    cast = cast_type(n)
    if cast is not None:
        return canonical(cast)
    if t == "compound_literal_expression":  # ``uint32_t{5}``
        typ = n.child_by_field_name("type")
        return canonical(typ.text.decode()) if typ is not None else None
    if t == "call_expression":
        fn = n.child_by_field_name("function")
        name = fn.child_by_field_name("name") if fn is not None and fn.type == "template_function" else fn
        text = name.text.decode() if name is not None else ""
        if text == "get_compile_time_arg_val":
            return "uint32_t"  # ``constexpr uint32_t`` (api/compile_time_args.h)
        if text in ("get_arg_val", "get_common_arg_val") and fn.type == "template_function":
            return canonical(fn.child_by_field_name("arguments").text.decode().strip("<>"))
        hit = r.prog.functions.get(text) if fn is not None and fn.type == "identifier" and \
            r.lookup(text) is None else None
        if hit is not None and hit[0].type == "function_definition":
            # a function the kernel or a followed header defines, not a template: its declared result type
            typ = hit[0].child_by_field_name("type")
            return canonical(r.resolved(typ.text.decode())) if typ is not None else None
        return None
    if t == "unary_expression":
        op = n.child_by_field_name("operator").type
        if op in ("!", "not"):
            return "bool"
        a = expr_type(r, n.child_by_field_name("argument"))
        return promoted(a) if a is not None and op in ("-", "+", "~") else None
    if t == "binary_expression":
        op = n.child_by_field_name("operator").type
        if op in ("==", "!=", "<", "<=", ">", ">=", "&&", "||", "and", "or"):
            return "bool"
        a = expr_type(r, n.child_by_field_name("left"))
        if op in ("<<", ">>"):
            return promoted(a) if a is not None else None
        b = expr_type(r, n.child_by_field_name("right"))
        return common(a, b) if a is not None and b is not None and op in (
            "+", "-", "*", "/", "%", "&", "|", "^") else None
    if t == "conditional_expression":
        a = expr_type(r, n.child_by_field_name("consequence"))
        b = expr_type(r, n.child_by_field_name("alternative"))
        return None if a is None or b is None else a if a == b else common(a, b)
    return None


#: a scope's key ``name + TYPE_KEY``: the type text of ``name``'s declaration in that scope (an ``Opaque``'s)
TYPE_KEY = "\0type"


def cast_type(n: Any) -> str | None:
    """The integer type text node ``n`` converts its operand to: a C cast or a ``static_cast``; None otherwise."""
    if n.type == "cast_expression":
        t = n.child_by_field_name("type")
        return " ".join(t.text.decode().split()) if t is not None else None
    if n.type == "call_expression":
        fn = n.child_by_field_name("function")
        if fn is not None and fn.type == "template_function":
            name = fn.child_by_field_name("name")
            targs = fn.child_by_field_name("arguments")
            if name is not None and name.text.decode() == "static_cast" and targs is not None:
                return " ".join(targs.text.decode().strip("<>").split())
    return None
