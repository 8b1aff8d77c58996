"""A tensor builder call parsed and validated: the :class:`TensorRequest` the tensor layer
builds, and the one :func:`symdiff.tensor.steps.derive_tensor` differentiates with steps.

:func:`request_for` parses every expression (text through :mod:`symdiff.tensor.parse`, a
Python function through :mod:`symdiff.tensor.trace`) into nodes of one builder, checks the
shapes, and decides the arguments and ``wrt`` (:mod:`symdiff.arguments`). A request knows its
key (kind, texts or a traced graph, ``wrt``, argument shapes, options) and its
:class:`~symdiff.recipe.Recipe`.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
from collections.abc import Sequence
from dataclasses import dataclass, replace

from .. import __version__
from ..arguments import check_parameters, resolve_wrt
from ..constants import Bound
from ..errors import ShapeError, SymdiffError, UnsupportedError
from ..options import Options
from ..parsing import FUNCTIONS as scalar_functions
from ..recipe import KINDS, Recipe, function_name, shapes_of
from ..request import is_function
from ..trace import DIRECTION, call_signature, combine_signatures, signature_text, traced_name
from ..trace.layout import Structured
from .captures import Captures
from .derived import hoist
from .formula import text
from .ir import Node, serialize, variables
from .ops import Builder
from .parse import TENSOR_FUNCTIONS, parse_tensor
from .shapes import Shape, format_shape, parse_shapes
from .tracing import trace_tensor


@dataclass
class TensorRequest:
    """A parsed builder call: the graph of its expressions and everything that keys its code."""

    kind: str
    texts: list[object]
    many: bool
    wrt: tuple[str, ...]
    single: bool
    options: Options
    shapes: dict[str, Shape]
    builder: Builder
    roots: list[Node]
    params: tuple[str, ...]
    signature: inspect.Signature | None = None  # a traced function's (see symdiff.arguments)
    #: The bound constants its traces met (:mod:`symdiff.constants`): parameters of the
    #: generated function after ``params``, passed by the compiled function.
    constants: tuple[Bound, ...] = ()
    #: The named arrays whose numbers the generated code holds, with why
    #: (:mod:`symdiff.tensor.closed`): ``bind`` refuses to rebind them.
    folded: tuple[tuple[str, str], ...] = ()

    @property
    def passed(self) -> tuple[Bound, ...]:
        """The bound constants the generated function takes (after ``params``)."""
        return tuple(c for c in self.constants if c.passed)

    @property
    def call_signature(self) -> inspect.Signature | None:
        """The compiled function's signature: the traced function's (with ``_v`` last for a
        Hessian-vector product), or None for the generated function's own."""
        return call_signature(self.signature, self.kind)

    @property
    def name(self) -> str:
        """The generated function's name."""
        return function_name(self.kind)

    @functools.cached_property
    def recipe(self) -> Recipe:
        """The recipe of the function asked for (the build adds the mode and output names):
        the texts given (a traced function's graph as its formula), the arguments with their
        shapes."""
        exprs = tuple(t if isinstance(t, str) else text(r)
                      for t, r in zip(self.texts, self.roots, strict=True))
        constants = tuple(c.name for c in self.passed)
        shapes = {**self.shapes, **{c.name: c.shape for c in self.passed}}
        return Recipe(kind=self.kind, exprs=exprs, args=self.params, wrt=self.wrt,
                      single=self.single, shapes=shapes_of(shapes, self.params + constants),
                      options=replace(self.options, cache=True), constants=constants)

    @property
    def expression(self) -> str:
        """The expressions as the header shows them: the texts, or a traced graph's formula."""
        return "; ".join(self.recipe.exprs)

    def key(self) -> str:
        """A digest of everything that determines the generated source and the signature."""
        identity = [t if isinstance(t, str) else "traced:" + serialize([r])
                    for t, r in zip(self.texts, self.roots, strict=True)]
        parts = [__version__, "tensor", self.kind, json.dumps(identity), str(self.many),
                 json.dumps(list(self.wrt)), str(self.single), self.options.code_key()]
        parts += [f"{p}:{format_shape(self.shapes[p])}" for p in self.params]
        parts += [f"{c.name}={c.label}:{c.shape}:{c.dtype}"
                  + ("" if c.draw is None else ":draw:" + c.draw.text)
                  + ("" if c.prelude is None else ":derived:" + ",".join(c.sources))
                  + ("" if c.passed else ":kept") for c in self.constants]
        parts += [f"{d}>={n}" for d, n in sorted(self.builder.needs.items(), key=str)]
        if self.signature is not None:
            parts.append("signature" + signature_text(self.signature))
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:20]


def _texts(kind: str, exprs: object) -> tuple[list[object], bool]:
    """The expressions, and whether a list was given (only jacobian takes one)."""
    if kind == "jacobian" and isinstance(exprs, list | tuple):
        if not exprs:
            raise SymdiffError("jacobian takes an expression or a non-empty list of expressions")
        return list(exprs), True
    return [exprs], False


def request_for(kind: str, exprs: object, wrt: object, options: Options,
                shapes: object, occurs: bool = True) -> TensorRequest:
    """Validate and parse a builder call (no derivation yet).

    The arguments and ``wrt`` follow :mod:`symdiff.arguments`: a traced function's parameters
    in the ``def``'s order (its signature is the compiled function's), else every variable
    sorted by name; an explicit ``wrt`` name must be a variable of the expression (a
    ``ParseError`` otherwise; not checked with ``occurs=False``, for ``derive``) and have a
    shape. A traced function given to ``jacobian`` may
    return a tuple of arrays of one shape: the rows, stacked as for a list of expressions.
    """
    if kind not in KINDS:
        raise UnsupportedError(f"{kind} is not available for tensor expressions (shapes=); "
                               "use hessian, or grad of a directional derivative")
    parsed_shapes = parse_shapes(shapes)
    items, many = _texts(kind, exprs)
    b = Builder()
    texts: list[object] = []
    roots: list[Node] = []
    signatures: list[inspect.Signature] = []
    functions: list[object] = []
    captures = Captures()
    for item in items:
        if is_function(item) or isinstance(item, Structured):
            fn, layout = (item.fn, item.layout) if isinstance(item, Structured) else (item, None)
            nodes, sig, listed = trace_tensor(fn, parsed_shapes, b, many=kind == "jacobian",
                                              captures=captures, layout=layout)
            many = many or listed
            signatures.append(sig)
            functions.append(fn)
            texts += [item] * len(nodes)
            roots += nodes
        else:
            texts.append(item)
            roots.append(parse_tensor(item, parsed_shapes, b))
    signature = combine_signatures(signatures, functions) if signatures else None
    label = traced_name(functions, len(items) == 1) if functions else ""
    if captures.items:  # what is computed from bound arrays alone: once per binding
        roots = hoist(b, roots, captures)
    found = variables(roots)
    if signature is not None:
        check_parameters(signature, found, label)
    wrt_names: tuple[str, ...] = ()
    single = False
    if kind != "value":
        wrt_names, single = resolve_wrt(wrt, signature, found, items,
                                        TENSOR_FUNCTIONS | scalar_functions, label, occurs)
        for w in wrt_names:
            if w not in parsed_shapes:
                raise ShapeError(f"wrt name {w!r} has no shape: add it to shapes=")
    if kind == "hvp":
        if len(wrt_names) != 1:
            raise UnsupportedError(
                "a tensor hvp takes one wrt variable (the direction _v has its shape); "
                f"got {len(wrt_names)}: put the variables in one array, or use hessian")
        parsed_shapes = {**parsed_shapes, DIRECTION: parsed_shapes[wrt_names[0]]}
    names = tuple(signature.parameters) if signature is not None else tuple(found)
    params = _parameters(kind, names, wrt_names, ordered=signature is not None)
    return TensorRequest(kind, texts, many, wrt_names, single, options, parsed_shapes, b, roots,
                         params, signature, tuple(captures.items), tuple(captures.folded.items()))


def _parameters(kind: str, names, wrt: Sequence[str], ordered: bool = False) -> tuple[str, ...]:
    """The generated function's parameters: a traced function's parameters in order (when
    ``ordered``), else every variable and wrt name sorted; then the direction ``_v`` of a
    Hessian-vector product."""
    params = tuple(names) if ordered else tuple(sorted(set(names) | set(wrt)))
    return params + ((DIRECTION,) if kind == "hvp" else ())
