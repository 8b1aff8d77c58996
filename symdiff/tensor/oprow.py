"""The row types of the tensor operation families (:mod:`symdiff.tensor.families`).

An operation added as a family row is *one* :class:`OpRow` (what a node of that op is: its
reverse and forward rules, its NumPy statement, its text and LaTeX) plus one :class:`Spelling`
per name a user writes for it (``cumsum(x, axis=0)`` in the string language, ``np.cumsum`` and
``x.cumsum()`` when tracing). The tables of the layer (:data:`~symdiff.tensor.vjp.TENSOR_VJPS`,
:data:`~symdiff.tensor.jvp.TENSOR_JVPS`, the emitter's statements, the formula printers, the
verifier's NumPy names, the parser's and the tracer's functions) read the rows; nothing else
needs editing to add an operation.

This module holds only types, so that the families can import the builder while the tables
import the families.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .ir import Node
from .ops import Builder

#: Reverse mode: ``(builder, node, adjoint of node, simplify)`` -> one adjoint per operand
#: (None: no contribution).
VJPRuleFn = Callable[[Builder, Node, Node, bool], tuple[Node | None, ...]]
#: Forward mode: ``(builder, node, one tangent per operand (None: zero), simplify)`` -> the
#: node's tangent (trailing batch axis; None: zero).
JVPRuleFn = Callable[[Builder, Node, Sequence[Node | None], bool], Node | None]
#: ``(node, code of each operand, target name)`` -> the statements ``(target, code)`` that compute
#: the node into ``target`` (usually one line ``[(target, "_np.cumsum(a, axis=0)")]``).
EmitFn = Callable[[Node, list[str], str], list[tuple[str, str]]]
#: ``(node, operand text with brackets where needed, operand text without)`` -> printed form.
FormulaFn = Callable[[Node, list[str], list[str]], str]


def call_latex(name: str, *parts: str) -> str:
    """``\\operatorname{name}(parts)``: the LaTeX of a family op written as a call."""
    return rf"\operatorname{{{name}}}\left({', '.join(parts)}\right)"


@dataclass(frozen=True)
class OpRow:
    """Everything the tensor layer knows about one node op."""

    op: str
    rule: str  # the reverse rule's name as steps show it ("cumsum (reversed cumsum)")
    identity: str  # its identity in text, with G the adjoint ("A_bar = flip(cumsum(flip(G)))")
    vjp: VJPRuleFn
    jvp: JVPRuleFn
    emit: EmitFn
    text: FormulaFn
    latex: FormulaFn
    #: ``_np.<name>`` the emitted statements use ("cumsum", "linalg.det").
    numpy_names: frozenset[str] = field(default_factory=frozenset)
    #: ``(builder, node, index) -> Node | None``: a slice of the node built without it, when
    #: possible (:data:`symdiff.tensor.simplify.INDEX_RULES`).
    index: Callable[[Builder, Node, tuple[Any, ...]], Node | None] | None = None
    #: Runtime helpers (:mod:`symdiff.runtime`) the statements call ("_gram").
    helpers: frozenset[str] = field(default_factory=frozenset)


class Param(Enum):
    """How a spelling's parameter is read from the user's text or traced call."""

    ARRAY = "array"  # an array (or number): a Node
    ARRAYS = "arrays"  # a list/tuple of arrays: a tuple of Nodes
    STATIC = "static"  # a Python constant: int, tuple of ints, str, bool or None


@dataclass(frozen=True)
class Spelling:
    """One name a user writes for a family operation.

    ``build(builder, *args, where=..., **kwargs)`` makes the node; its parameters are read as
    ``params`` says (parameters not listed are :attr:`Param.STATIC`). It is called with
    positional and keyword arguments exactly as the user wrote them (Python binds them, so a
    wrong call is a ``TypeError`` that the parser and the tracer turn into a clear error).
    """

    name: str  # the string-language name ("cumsum"); "" if it has none
    build: Callable[..., Node]
    usage: str  # for messages: "cumsum(a, axis=None)"
    params: dict[str, Param] = field(default_factory=dict)
    numpy: tuple[Any, ...] = ()  # NumPy functions traced to it (np.cumsum)
    methods: tuple[str, ...] = ()  # ndarray methods traced to it ("cumsum")
    #: Its backward rule in words, for a spelling built from other ops that has no row of its
    #: own (a pool is windows and a max): ``derive(shapes=)`` heads the rules of its parts with
    #: it and ``graph(shapes=)`` shows it at the node it returns ("" : the returned node's row
    #: says it, as for ``conv2d``).
    identity: str = ""

    def kind(self, parameter: str) -> Param:
        """How ``parameter`` is read."""
        return self.params.get(parameter, Param.STATIC)


__all__ = [
    "EmitFn", "FormulaFn", "JVPRuleFn", "OpRow", "Param", "Spelling", "VJPRuleFn", "call_latex",
]
