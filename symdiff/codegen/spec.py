"""One generated module as data (:class:`ModuleSpec`), and the one path that renders it.

Both emitters, the scalar one (:mod:`symdiff.codegen.emit`) and the tensor one
(:mod:`symdiff.tensor.module`), produce a :class:`ModuleSpec`: the header (what it was generated
from, the mode, the key), the function's name, parameters and docstring, its body as statement
strings (prelude, assignments, output lines, the returned expression), the runtime helpers it
calls and the module-level constants it reads. :func:`render_module` renders any of them with
``module.py.jinja`` (:mod:`symdiff.codegen.render`); the templates only place strings.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from .. import __version__
from .render import render

#: The module generated code imports its runtime helpers from (:mod:`symdiff.runtime`).
RUNTIME = "symdiff.runtime"


class Header(Protocol):
    """What a module's header and docstring read of an emitter's program (scalar or tensor)."""

    name: str
    title: str
    expression: str
    params: Sequence[str]
    doc: Sequence[str]
    mode: str
    key: str


@dataclass(frozen=True)
class ModuleSpec:
    """Everything a generated module says, as strings.

    * ``name``, ``params``, ``doc``: the public function's name, parameters and docstring lines;
    * ``title``, ``expression``, ``mode``, ``key``: the header (what it computes, from what,
      how, and its cache key);
    * ``prelude``: the statements that check and convert the arguments;
    * ``assignments``: ``(target, code)`` statements of the formulas (a target ending in ``+=``
      or ``-=`` brings its operator; an empty target makes ``code`` an expression statement,
      ``_np.add.at(_t0, [0, 2, 2], _t1)``); ``outputs``: further statement lines; ``result``: the
      returned expression;
    * ``helpers``: the runtime helpers the code calls (:mod:`symdiff.runtime`, imported in one
      line); ``constants``: module-level assignments it reads;
    * ``formulas``: for elementwise programs, the parameters of the second function
      ``_formulas`` that holds the assignments, outputs and result (the public function's body
      is then its prelude, which hands the formulas to the runtime), with its docstring
      ``formulas_doc``; None: one function; ``threads``: the name of the public function's
      keyword-only parameter that sets the number of threads (``threads``, or ``_threads``
      beside a variable of that name), if it has one.
    * ``backend``: ``"numpy"`` (the module imports NumPy), ``"array_api"`` (it does not) or
      ``"numba"`` (it imports Numba too: :mod:`symdiff.codegen.loops`), with ``decorator``
      the line above ``_formulas`` (Numba's ``njit``) and ``math``: whether the formulas
      call ``math`` (``_math.erf``).
    * ``functions``: further generated functions, as text, placed after the formulas (the
      packed point path's ``_packed``, :mod:`symdiff.codegen.pack`).
    """

    name: str
    title: str
    expression: str
    mode: str
    key: str
    params: tuple[str, ...]
    doc: tuple[str, ...]
    prelude: tuple[str, ...]
    assignments: tuple[tuple[str, str], ...]
    result: str
    outputs: tuple[str, ...] = ()
    helpers: tuple[str, ...] = ()
    constants: tuple[str, ...] = ()
    formulas: tuple[str, ...] | None = None
    formulas_doc: str = ""
    threads: str | None = None
    backend: str = "numpy"
    functions: tuple[str, ...] = ()
    decorator: str = ""
    math: bool = False

    @classmethod
    def of(
        cls,
        header: Header,
        *,
        prelude: Sequence[str],
        assignments: Sequence[tuple[str, str]],
        result: str,
        outputs: Sequence[str] = (),
        helpers: Sequence[str] = (),
        constants: Sequence[str] = (),
        formulas: Sequence[str] | None = None,
        formulas_doc: str = "",
        threads: str | None = None,
        backend: str = "numpy",
        functions: Sequence[str] = (),
        decorator: str = "",
        math: bool = False,
    ) -> ModuleSpec:
        """The spec of a program's module: the header fields read from ``header``."""
        return cls(
            name=header.name, title=header.title, expression=header.expression,
            mode=header.mode, key=header.key, params=tuple(header.params),
            doc=tuple(header.doc), prelude=tuple(prelude), assignments=tuple(assignments),
            result=result, outputs=tuple(outputs), helpers=tuple(sorted(set(helpers))),
            constants=tuple(constants),
            formulas=None if formulas is None else tuple(formulas),
            formulas_doc=formulas_doc,
            threads=threads,
            backend=backend,
            functions=tuple(functions),
            decorator=decorator,
            math=math,
        )


_SAFE_TEXT = re.compile(r"[^A-Za-z0-9_ +\-*/().,:;<>=\[\]@&|~]")


def safe_comment(text: str, limit: int = 160) -> str:
    """``text`` reduced to characters that cannot end a comment or docstring, and shortened."""
    text = _SAFE_TEXT.sub("?", " ".join(text.split()))
    return text if len(text) <= limit else text[: limit - 3] + "..."


def names_tuple(params: Sequence[str]) -> str:
    """The tuple of argument names that the runtime helpers name in their messages (generated
    identifiers, checked by the verifier to be parameters of the function)."""
    inner = ", ".join(f"'{p}'" for p in params)
    return f"({inner},)" if len(params) == 1 else f"({inner})"


def render_module(spec: ModuleSpec) -> str:
    """Render ``module.py.jinja``: every text that came from an expression goes through
    :func:`safe_comment` here, in one place, for the scalar and the tensor layer alike.

    The module reads top-down as a person would write it: the header, the imports (NumPy, and
    the runtime helpers the code calls in one line), the module constants (each one on
    :data:`symdiff.verify.CONSTANTS` or a packed constant), the public function, and, for an
    elementwise program, its formulas (``_formulas``), which the public function hands to
    the runtime (:func:`symdiff.runtime._elementwise`: at a point, or on arrays in blocks).
    """
    return render(
        "module.py.jinja",
        version=__version__,
        expression=safe_comment(spec.expression),
        title=safe_comment(spec.title),
        summary=safe_comment(spec.title) + ".",
        mode=spec.mode,
        key=spec.key,
        imports=imports(spec.helpers, spec.backend, spec.math),
        constants=list(spec.constants),
        name=spec.name,
        params=list(spec.params),
        doc=[safe_comment(line, 200) for line in spec.doc],
        prelude=list(spec.prelude),
        formulas=None if spec.formulas is None else list(spec.formulas),
        formulas_doc=safe_comment(spec.formulas_doc, 200),
        assignments=list(spec.assignments),
        outputs=list(spec.outputs),
        result=spec.result,
        threads=spec.threads,
        functions=list(spec.functions),
        decorator=spec.decorator,
    )


def imports(helpers: Sequence[str], backend: str = "numpy", math: bool = False) -> list[str]:
    """The import lines of a module: ``import numpy as _np`` (not for the Array API backend,
    whose code calls the namespace of its arguments; after ``import math as _math`` where
    ``math`` and ``import numba as _numba`` for the Numba backend) and one line importing the
    runtime ``helpers`` (wrapped in parentheses when long)."""
    lines = [] if backend == "array_api" else ["import numpy as _np"]
    if backend == "numba":
        lines = [*(["import math as _math"] if math else []), "import numba as _numba", *lines]
    if not helpers:
        return lines
    names = sorted(helpers)
    line = f"from {RUNTIME} import {', '.join(names)}"
    if len(line) <= 95:
        return [*lines, line]
    rows, row = [], ""
    for name in names:
        if row and len(row) + len(name) + 2 > 91:
            rows.append(row)
            row = ""
        row += f"{name}, "
    rows.append(row)
    inner = "\n".join(f"    {r.rstrip()}" for r in rows)
    return [*lines, f"from {RUNTIME} import (\n{inner}\n)"]
