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
from ..verify import ERROR_CONSTANTS
from .helpers import helper_source
from .render import HELPERS_HEADING, render


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
    * ``helpers``: the runtime helpers the code calls (:mod:`symdiff.codegen.helpers`; their
      dependencies are added when rendered); ``constants``: module-level assignments it reads;
    * ``block_inputs``: for elementwise programs, the arrays that ``_in_blocks`` splits into
      cache-sized blocks for the formulas (None: the formulas stay in the public function);
      ``threads``: then the name of the public function's keyword-only parameter that sets the
      number of threads (``threads``, or ``_threads`` beside a variable of that name).
    * ``backend``: ``"numpy"`` or ``"array_api"`` (the module imports ``array_api_compat``).
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
    block_inputs: tuple[str, ...] | None = None
    threads: str | None = None
    backend: str = "numpy"
    functions: tuple[str, ...] = ()

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
        block_inputs: Sequence[str] | None = None,
        threads: str | None = None,
        backend: str = "numpy",
        functions: Sequence[str] = (),
    ) -> ModuleSpec:
        """The spec of a program's module: the header fields read from ``header``."""
        return cls(
            name=header.name, title=header.title, expression=header.expression,
            mode=header.mode, key=header.key, params=tuple(header.params),
            doc=tuple(header.doc), prelude=tuple(prelude), assignments=tuple(assignments),
            result=result, outputs=tuple(outputs), helpers=tuple(sorted(set(helpers))),
            constants=tuple(constants),
            block_inputs=None if block_inputs is None else tuple(block_inputs),
            threads=threads,
            backend=backend,
            functions=tuple(functions),
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

    The module reads top-down as a person would write it: the header, the imports, the public
    function and its formulas, then one section of helpers (the source of the runtime helpers
    the code calls, under :data:`~symdiff.codegen.render.HELPERS_HEADING`; Python resolves
    module-level names when a function runs, so the helpers may follow it). With
    ``block_inputs`` (elementwise programs), the formulas go into a second function,
    ``_formulas(*block_inputs, _shape, _dtype, _into)``, which the public one calls through the
    ``_in_blocks`` helper so that long arrays are computed in cache-sized blocks (on the
    number of threads its keyword-only ``threads`` parameter gives); an Array API module's is
    ``_formulas(*block_inputs, _shape, _dtype, _xp)``, called through ``_xp_in_blocks``. The
    ``constants`` are printed after the imports (each one must be on
    :data:`symdiff.verify.CONSTANTS`); the error classes the helpers raise
    (:data:`symdiff.verify.ERROR_CONSTANTS`) open the helper section.
    """
    helpers = helper_source(list(spec.helpers))
    errors = [line for line in ERROR_CONSTANTS if line.split(" = ")[0] in helpers]
    return render(
        "module.py.jinja",
        version=__version__,
        expression=safe_comment(spec.expression),
        title=safe_comment(spec.title),
        summary=safe_comment(spec.title) + ".",
        mode=spec.mode,
        key=spec.key,
        imports=_imports(helpers, spec.backend),
        constants=list(spec.constants),
        helpers_heading=HELPERS_HEADING,
        helper_constants=errors,
        helpers=[helpers.rstrip("\n")] if helpers else [],
        name=spec.name,
        params=list(spec.params),
        doc=[safe_comment(line, 200) for line in spec.doc],
        prelude=list(spec.prelude),
        assignments=list(spec.assignments),
        outputs=list(spec.outputs),
        result=spec.result,
        block_inputs=None if spec.block_inputs is None else list(spec.block_inputs),
        threads=spec.threads,
        functions=list(spec.functions),
        **_blocks(spec.backend, spec.threads),
    )


def _blocks(backend: str, threads: str | None) -> dict[str, str | None]:
    """How the public function hands its formulas to the block loop: the helper, its last
    argument (the threads keyword, or the namespace) and the formulas' last parameter (the
    block's output slices, or the namespace: an Array API module writes blocks by item
    assignment, never with ``out=``)."""
    if backend == "array_api":
        return {"blocks_helper": "_xp_in_blocks", "block_last": "_xp", "formulas_last": "_xp"}
    return {"blocks_helper": "_in_blocks", "block_last": threads, "formulas_last": "_into"}


def _imports(helpers: str, backend: str = "numpy") -> list[str]:
    """``import numpy as _np``, plus the standard library's math where a helper uses it; for
    the Array API backend ``import array_api_compat as _xpc`` instead (and no NumPy)."""
    if backend == "array_api":
        return ["import array_api_compat as _xpc"]
    return (
        ["import math as _math", "import numpy as _np"]
        if "_math." in helpers
        else ["import numpy as _np"]
    )
