"""The optional dependencies (pyproject.toml's extras) and the one line that names the extra a missing one needs.

A command that reaches an optional import without its extra installed is bad input of the installation, not a fault
of the checker: ``missing_extra`` turns the ``ModuleNotFoundError`` into ``BadInput`` (exit 2) whose rule names the
extra to install (``pip install 'verispatial[ttmetal]'``).
"""

from __future__ import annotations

import attrs

from verispatial.errors import BadInput


@attrs.frozen
class OptionalDependency:
    """One optional dependency: ``distribution`` its name on PyPI, ``extra`` the extra of pyproject.toml that
    installs it, ``needed_for`` what of verispatial imports it (a phrase: ``reading a host description``)."""

    distribution: str
    extra: str
    needed_for: str


#: Each optional top-level module verispatial imports, by its import name.
OPTIONAL: dict[str, OptionalDependency] = {
    "yaml": OptionalDependency("PyYAML", "ttmetal", "reading a YAML host description"),
    "tree_sitter": OptionalDependency("tree-sitter", "ttmetal", "reading tt-metal C++ kernels"),
    "tree_sitter_cpp": OptionalDependency("tree-sitter-cpp", "ttmetal", "reading tt-metal C++ kernels"),
    "distributed": OptionalDependency("dask[distributed]", "cluster", "running the gate on a Dask cluster"),
    "dask": OptionalDependency("dask[distributed]", "cluster", "running the gate on a Dask cluster"),
    "hypothesis": OptionalDependency("hypothesis", "strategies", "verispatial.strategies"),
}


def missing_extra(e: BaseException) -> BadInput | None:
    """``BadInput`` naming the extra that installs the module a ``ModuleNotFoundError`` did not find (``e`` itself or
    the error it was raised while handling: a command reports an unexpected error as a ``CheckerError`` raised ``from
    None``, which keeps it as ``__context__``); ``rule`` says what needs the module and gives the ``pip install``
    line. None when no such error is in the chain or its module is no optional dependency (a broken installation or a
    fault of verispatial, which the caller reports as such)."""
    seen: set[int] = set()
    at: BaseException | None = e
    while at is not None and id(at) not in seen:
        seen.add(id(at))
        if isinstance(at, ModuleNotFoundError):
            dep = OPTIONAL.get((at.name or "").partition(".")[0])
            if dep is None:
                return None
            return BadInput("", "", f"{dep.needed_for} needs {dep.distribution}, which is not installed: "
                                    f"pip install 'verispatial[{dep.extra}]'")
        at = at.__cause__ or at.__context__
    return None
