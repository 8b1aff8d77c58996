"""What a traced function reads from outside its parameters, and the function rewired to read
replacements instead, for the length of a trace.

A function reads outside values by name: its closure cells, the globals its code names, and,
through those, the helper functions it calls (their cells and globals, recursively) and
attributes of the modules it names (``np.random.normal``, ``data.X``). :func:`rewired` walks
that reach from ``fn`` and returns a copy of ``fn`` that reads, for every value ``replace``
gives a replacement for, the replacement: copies of the functions on the way, with a copy of
their module's globals and new cells where something changed, and modules seen through a
:class:`ModuleView`. Nothing of the user's is changed (``fn``, its module and other threads
still see the originals).

Not reached: attributes of objects (``self.rng``), items of containers, functions passed around
as values other than by name, code of the standard library and of NumPy, SciPy, SymPy and
symdiff (NumPy's modules are seen through, for ``np.random``). Standard library only.
"""

from __future__ import annotations

import functools
import sysconfig
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

#: ``replace(value, label)``: the value to read instead of ``value`` (found under the name
#: ``label``), or None to keep it.
Replace = Callable[[Any, str], Any]

#: Top-level packages whose functions are never walked into (their code reads no user values).
_LIBRARIES = frozenset({"numpy", "scipy", "sympy", "symdiff", "mpmath"})
#: Where the standard library's code lives (its installed packages excepted).
_STANDARD = tuple({sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib")})

_ABSENT = object()

#: The most functions and module attributes one walk looks at.
WALK_LIMIT = 2000


@dataclass(frozen=True)
class Replaced:
    """One value the rewired function reads instead of ``original`` (found as ``label``)."""

    original: Any
    replacement: Any
    label: str


@dataclass
class Rewired:
    """:func:`rewired`'s result: the function to call, and what it reads replaced."""

    function: Callable[..., Any]
    replaced: list[Replaced] = field(default_factory=list)
    #: The copies of module globals the copied functions use: (the module's, the copy, the
    #: copy as made).
    scopes: list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = field(
        default_factory=list)
    #: The ids of the copies made (never written back).
    copies: frozenset[int] = frozenset()

    def write_back(self) -> None:
        """After the call: the globals the copied functions assigned (``global n; n += 1``)
        or deleted, assigned or deleted in their modules too (never a value of symdiff's own,
        such as a traced array computed from a replaced one)."""
        for original, copy, made in self.scopes:
            for name, value in copy.items():
                if made.get(name, _ABSENT) is not value and not self._ours(value):
                    original[name] = value
            for name in made.keys() - copy.keys():
                original.pop(name, None)

    def _ours(self, value: Any) -> bool:
        module = str(getattr(type(value), "__module__", ""))
        return module.partition(".")[0] == "symdiff" or id(value) in self.copies


class ModuleView(types.ModuleType):
    """A module seen with some attributes replaced (``np`` whose ``random`` reads a recording
    view of ``numpy.random``); every other attribute is the module's own."""

    def __init__(self, module: types.ModuleType, replaced: dict[str, Any]):
        super().__init__(module.__name__, module.__doc__)
        self.__dict__["_symdiff_module"] = module
        self.__dict__["_symdiff_replaced"] = replaced

    def __getattr__(self, name: str) -> Any:
        replaced = self.__dict__["_symdiff_replaced"]
        if name in replaced:
            return replaced[name]
        return getattr(self.__dict__["_symdiff_module"], name)

    def __dir__(self) -> list[str]:
        return dir(self.__dict__["_symdiff_module"])


def _library(fn: types.FunctionType) -> bool:
    """Whether ``fn`` is NumPy's, SciPy's, SymPy's, symdiff's or the standard library's."""
    if str(getattr(fn, "__module__", None) or "").partition(".")[0] in _LIBRARIES:
        return True
    filename = fn.__code__.co_filename
    return filename.startswith(_STANDARD) and "-packages" not in filename


def _code_names(code: types.CodeType | None) -> set[str]:
    """The names ``code`` (and the code nested in it: lambdas, comprehensions, inner
    functions) reads as globals or attributes."""
    if code is None:
        return set()
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _code_names(const)
    return names


class _Walk:
    """The reach of one function: which functions and modules lead to a replaced value."""

    def __init__(self, replace: Replace, notice: Callable[[Any, str], None] | None = None):
        self.replace = replace
        self.notice = notice
        self.looked: set[int] = set()  # objects and containers looked inside
        self.decided: dict[int, Any] = {}  # id -> replacement (None: kept)
        self.kept: list[Any] = []  # every value decided, alive while the ids are used
        self.labels: dict[int, str] = {}
        self.functions: dict[int, types.FunctionType] = {}
        self.reads: dict[int, list[tuple[str, object, Any]]] = {}  # node -> (kind, key, value)
        self.modules: dict[int, types.ModuleType] = {}
        self.module_names: dict[int, set[str]] = {}
        self.needed: set[int] = set()
        self.visits = 0

    # -- discovering ----------------------------------------------------------------------------
    def value(self, value: Any, label: str, names: set[str]) -> None:
        """Decide ``value`` (read as ``label`` by code naming ``names``) and walk into it."""
        key = id(value)
        if key not in self.decided:
            self.kept.append(value)
            self.labels[key] = label
            replacement = self._decide(value, label)
            self.decided[key] = replacement
            if replacement is not None:
                return
        elif self.decided[key] is not None:
            return
        if isinstance(value, types.MethodType):
            self.inside(value.__self__, _code_names(getattr(value.__func__, "__code__", None)))
            value = value.__func__
        if isinstance(value, functools.partial):
            value = value.func
        if isinstance(value, types.FunctionType):
            self.function(value)
        elif isinstance(value, types.ModuleType):
            self.module(value, names)
        elif not isinstance(value, type):
            self.inside(value, names)

    def inside(self, value: Any, names: set[str], depth: int = 0) -> None:
        """Hand ``notice`` what an object or container holds where code naming ``names`` may
        read it (the attributes of those names; the items of small dicts, lists and tuples),
        and what those hold, a few levels deep. Never replaced."""
        if self.notice is None or depth > 3 or id(value) in self.looked:
            return
        if isinstance(value, dict | list | tuple):
            items = list(value.items() if isinstance(value, dict) else enumerate(value))
            items = items if len(items) <= 64 else []
        else:
            attributes = getattr(value, "__dict__", None)
            if not isinstance(attributes, dict) or isinstance(value, type | types.ModuleType):
                return
            items = [(name, attributes[name]) for name in sorted(names) if name in attributes]
        self.looked.add(id(value))
        self.kept.append(value)
        for key, item in items:
            self.visits += 1
            if self.visits > WALK_LIMIT:
                return
            self.notice(item, str(key))
            if not isinstance(item, str | bytes | int | float | complex | bool):
                self.inside(item, names, depth + 1)

    def _decide(self, value: Any, label: str) -> Any:
        try:
            return self.replace(value, label)
        except Exception:  # an object whose checks fail (a proxy of another library): kept
            return None

    def function(self, fn: types.FunctionType) -> None:
        key = id(fn)
        if key in self.functions or self.visits > WALK_LIMIT:
            return
        if _library(fn):
            return
        self.visits += 1
        self.functions[key] = fn
        reads: list[tuple[str, object, Any]] = []
        self.reads[key] = reads
        code = fn.__code__
        names = _code_names(code)
        for index, (name, cell) in enumerate(zip(code.co_freevars, fn.__closure__ or (),
                                                  strict=False)):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell
                continue
            reads.append(("cell", index, value))
            self.value(value, name, names)
        scope = fn.__globals__
        for name in sorted(names):
            if name in scope:
                reads.append(("global", name, scope[name]))
                self.value(scope[name], name, names)

    def module(self, module: types.ModuleType, names: set[str]) -> None:
        key = id(module)
        seen = self.module_names.setdefault(key, set())
        new = names - seen
        if not new or self.visits > WALK_LIMIT:
            return
        self.modules[key] = module
        seen |= new
        reads = self.reads.setdefault(key, [])
        for name in sorted(new):
            try:
                with warnings.catch_warnings():  # a deprecated name the code may not read
                    warnings.simplefilter("ignore")
                    value = getattr(module, name)
            except Exception:  # a lazy attribute that fails: not read here
                continue
            self.visits += 1
            reads.append(("attribute", name, value))
            self.value(value, name, names)

    # -- deciding what changes --------------------------------------------------------------------
    def target(self, value: Any) -> Any:
        """The node ``value`` stands for in the walk (a function, a module), else None."""
        if isinstance(value, types.MethodType):
            value = value.__func__
        if isinstance(value, functools.partial):
            value = value.func
        return value if id(value) in self.reads else None

    def settle(self) -> None:
        """Mark every function and module that reads, directly or not, a replaced value."""
        changed = True
        while changed:
            changed = False
            for key, reads in self.reads.items():
                if key in self.needed:
                    continue
                if any(self.decided.get(id(v)) is not None
                       or id(self.target(v)) in self.needed for _, _, v in reads):
                    self.needed.add(key)
                    changed = True


class _Copier:
    """The copies of the functions and modules a settled walk marked."""

    def __init__(self, walk: _Walk):
        self.walk = walk
        self.clones: dict[int, Any] = {}
        self.scopes: dict[int, dict[str, Any]] = {}  # id of a module's globals -> their copy
        self.originals: dict[int, dict[str, Any]] = {}  # and -> the module's globals
        self.cells: dict[int, types.CellType] = {}  # id of a cell -> the cell copies read

    def changes(self, value: Any) -> bool:
        """Whether the copies read something else than ``value``."""
        node = self.walk.target(value)
        return self.walk.decided.get(id(value)) is not None or (
            node is not None and id(node) in self.walk.needed)

    def read(self, value: Any) -> Any:
        """What the copies read instead of ``value``."""
        replacement = self.walk.decided.get(id(value))
        if replacement is not None:
            return replacement
        if not self.changes(value):
            return value
        copy = self.copy(self.walk.target(value))
        if isinstance(value, types.MethodType):
            return types.MethodType(copy, value.__self__)
        if isinstance(value, functools.partial):
            return functools.partial(copy, *value.args, **value.keywords)
        return copy

    def copy(self, node: Any) -> Any:
        """The copy of a marked function or module: made (and remembered) before what it
        reads is, so that functions calling each other read each other's copies."""
        key = id(node)
        if key in self.clones:
            return self.clones[key]
        changed = [(kind, where, value) for kind, where, value in self.walk.reads[key]
                   if self.changes(value)]
        if isinstance(node, types.ModuleType):
            replaced: dict[str, Any] = {}
            self.clones[key] = ModuleView(node, replaced)
            for _, name, value in changed:
                replaced[str(name)] = self.read(value)
            return self.clones[key]
        fn: types.FunctionType = node
        scope = self.scopes.get(id(fn.__globals__))
        if scope is None:
            scope = self.scopes[id(fn.__globals__)] = dict(fn.__globals__)
            self.originals[id(fn.__globals__)] = fn.__globals__
        closure = list(fn.__closure__ or ())
        for kind, where, _ in changed:
            if kind == "cell":
                old = closure[int(where)]  # type: ignore[call-overload]
                closure[int(where)] = self.cells.setdefault(  # type: ignore[call-overload]
                    id(old), types.CellType())
        clone = types.FunctionType(fn.__code__, scope, fn.__name__, fn.__defaults__,
                                   tuple(closure) if closure else None)
        clone.__kwdefaults__ = fn.__kwdefaults__
        clone.__qualname__ = fn.__qualname__
        clone.__dict__.update(fn.__dict__)
        self.clones[key] = clone
        for kind, where, value in changed:
            if kind == "global":
                scope[str(where)] = self.read(value)
            else:
                closure[int(where)].cell_contents = self.read(value)  # type: ignore[call-overload]
        return clone


def rewired(fn: Callable[..., Any], replace: Replace,
            notice: Callable[[Any, str], None] | None = None) -> Rewired:
    """``fn`` reading, in place of every value it reaches by name (see the module docstring)
    for which ``replace(value, label)`` gives a replacement, that replacement; and what was
    replaced. ``fn`` itself when nothing is. ``notice(value, label)`` is told of the values
    found inside objects and containers those reach (``self.rng``, ``params["X"]``), which
    are never replaced."""
    walk = _Walk(replace, notice)
    walk.value(fn, getattr(fn, "__name__", "fn"), set())
    walk.settle()
    replaced = [Replaced(v, walk.decided[id(v)], walk.labels[id(v)]) for v in walk.kept
                if walk.decided.get(id(v)) is not None]
    if not replaced:
        return Rewired(fn)
    copier = _Copier(walk)
    function = copier.read(fn)
    scopes = [(copier.originals[key], scope, dict(scope)) for key, scope in copier.scopes.items()]
    return Rewired(function, replaced, scopes, frozenset(map(id, copier.clones.values())))


__all__ = ["ModuleView", "Replace", "Replaced", "Rewired", "rewired"]
