"""What a traced function computes from its bound constants alone: computed once per binding,
not at every call.

With the arrays a function reads by name traced as constants (:mod:`symdiff.tensor.closed`),
``(X - X.mean(axis=0)) / X.std(axis=0)`` or ``np.sum(x)`` is part of the graph; evaluated by
the generated function it would be recomputed at every call. :func:`hoist` takes each such part
out (a node computed from bound arrays and numbers only, other than a view of one array, used by
the rest of the graph): it becomes a *derived* bound constant (kind ``"derived"``), whose value a
generated NumPy function, the :class:`~symdiff.constants.Prelude`, computes from the constants
it reads, now and again whenever :meth:`CompiledFunction.bind` rebinds one of them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ..codegen import naming
from ..constants import Bound, Prelude
from ..recipe import function_name
from .captures import Captures
from .emit import Program
from .families.gather import BoundIndex
from .ir import VIEWS, Node, serialize, topological
from .module import emit_module
from .ops import Builder


def _own(node: Node, kinds: dict[str, str], pure: dict[int, bool]) -> bool:
    """Whether ``node`` is computed from bound arrays and numbers only (its arguments are)."""
    if node.op == "const":
        return kinds.get(node.name) == "array"
    if node.op == "fill":
        return True
    if node.op in ("var", "eye") or any(isinstance(a, BoundIndex) for a in node.attrs):
        return False
    return all(isinstance(d, int) for d in node.shape) and all(pure[id(a)] for a in node.args)


def _view_of_leaf(node: Node) -> bool:
    """Whether ``node`` is a bound array or number, or views of one (``X.T``, ``X[:, 0]``)."""
    while node.op in VIEWS:
        (node, *_) = node.args
    return node.op in ("const", "fill")


def hoist(b: Builder, roots: list[Node], captures: Captures) -> list[Node]:
    """``roots`` with each part computed from bound constants alone replaced by a derived bound
    constant (added to ``captures``, computed now); ``roots`` itself when there is none."""
    kinds = {c.name: c.kind for c in captures.items}
    order = topological(roots)
    pure: dict[int, bool] = {}
    for node in order:
        pure[id(node)] = _own(node, kinds, pure)
    wanted = {id(r) for r in roots}
    wanted |= {id(a) for n in order if not pure[id(n)] for a in n.args}
    parts = [n for n in order if pure[id(n)] and id(n) in wanted and not _view_of_leaf(n)]
    if not parts:
        return roots
    values, prelude = _prelude(parts, captures)
    labels = {c.name: c.label for c in captures.items}
    replaced: dict[int, Node] = {}
    for index, (part, value) in enumerate(zip(parts, values, strict=True)):
        name = naming.constant(len(captures.items))
        sources = tuple(dict.fromkeys(labels[n.name] for n in topological([part])
                                      if n.op == "const"))
        bound = Bound(name, name, _kept(value), sources, "derived", prelude=prelude,
                      output=index)
        captures.items.append(bound)
        replaced[id(part)] = b.constant(name, bound.shape, bound.dtype)
    for node in order:
        if id(node) not in replaced and any(id(a) in replaced for a in node.args):
            args = tuple(replaced.get(id(a), a) for a in node.args)
            replaced[id(node)] = b.node(node.op, args, node.attrs, node.shape)
    roots = [replaced.get(id(r), r) for r in roots]
    read = {n.name for n in topological(roots) if n.op == "const"}
    read |= {a.name for n in topological(roots) for a in n.attrs if isinstance(a, BoundIndex)}
    captures.items[:] = [c if c.name in read or c.kind != "array" else replace(c, passed=False)
                         for c in captures.items]
    return roots


def _prelude(parts: list[Node], captures: Captures) -> tuple[list[Any], Prelude]:
    """The values of ``parts`` and the prelude computing them from the bound arrays."""
    used = {n.name for n in topological(parts) if n.op == "const"}
    inputs = tuple(c for c in captures.items if c.name in used)
    key = serialize(parts) + "".join(f"\n{c.name} {c.dtype}" for c in inputs)
    prelude = _MADE.get(key)
    if prelude is None:
        prelude = _MADE[key] = _made(parts, inputs)
    return list(prelude.run({c.name: c.value for c in inputs})), prelude


#: The preludes made in this process, by the graph they compute (their source is a pure
#: function of it).
_MADE: dict[str, Prelude] = {}


def _made(parts: list[Node], inputs: tuple[Bound, ...]) -> Prelude:
    outputs = [(naming.output_entry((i,)), part) for i, part in enumerate(parts)]
    program = Program(
        name=function_name("value"),
        title="Values computed from the bound constants alone (once per binding)",
        expression="",
        params=tuple(c.name for c in inputs),
        shapes={c.name: c.shape for c in inputs},
        outputs=outputs,
        result="(" + ", ".join(name for name, _ in outputs) + ",)",
        mode="value",
    )
    return Prelude(emit_module(program), program.name, program.params)


def _kept(value: Any) -> np.ndarray:
    array = np.array(value)
    array.setflags(write=False)
    return array


__all__ = ["hoist"]
