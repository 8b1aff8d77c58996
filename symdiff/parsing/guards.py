"""The checks of the expression builder: every limit on the values it builds (digits, size,
nesting of constants, exponents, names, time), and how it reports a refusal.

:class:`BuildChecks` holds the builder's state (symbols, deadline, what was built) and is the
base of :class:`~symdiff.parsing.builder.ExpressionBuilder`, which adds the node handlers.
"""

from __future__ import annotations

import ast
import math
import time
from typing import NoReturn

import sympy as sp

from ..errors import ParseError
from .budget import make_hook, watched_nodes
from .functions import FunctionSpec
from .hints import needs_shapes, variables
from .limits import LIMITS, budget_seconds
from .names import check_identifier
from .sizes import (
    NON_FINITE,
    log10_abs,
    log10_int,
    node_nesting,
    numerically_real,
    rational_digits,
    value_depth,
)
from .source import Source


class BuildChecks:
    """The state and limit checks of an expression build; see the module docstring."""

    def __init__(self, src: Source, tree: ast.AST | None = None):
        self.src = src
        self.tree = tree  # the whole expression, for the examples in messages
        self.symbols: dict[str, sp.Symbol] = {}
        # CPU time of this thread: a busy machine must not cut off a legal input.
        self.deadline = time.thread_time() + budget_seconds(len(src.original))
        self.built: set[int] = set()  # ids of the nodes built so far
        self.constant_depth: dict[int, int] = {}  # node id -> nesting, for numeric values
        self.finite: set[sp.Basic] = set()  # values seen to have no oo, -oo, zoo or nan in them
        # The nodes built under the profile hook that enforces the deadline inside SymPy.
        self.watched = watched_nodes(tree) if tree is not None else frozenset()
        self.hook = make_hook(self.deadline) if self.watched else None

    # -- helpers -------------------------------------------------------------------------

    def fail(self, message: str, node: ast.AST | int) -> NoReturn:
        position = node if isinstance(node, int) else self.src.position(node)
        raise self.src.error(message, position)
    def over_budget(self) -> str:
        """Why a build that used its CPU-time budget was refused."""
        return (
            "expression is too expensive to evaluate exactly "
            f"(over {budget_seconds(len(self.src.original)) * 1000:.0f} ms, "
            "limit max_milliseconds plus max_microseconds_per_char)"
        )

    def needs_shapes(self) -> str:
        """``needs shapes=, e.g. ...``: the hint for an operation of the tensor layer."""
        return needs_shapes(self.src.original, variables(self.tree))

    def check_size(self, value: sp.Basic, node: ast.AST) -> None:
        """Refuse exact rationals (the value or its direct arguments) with too many digits."""
        for part in (value, *value.args):
            if part.is_Rational and rational_digits(part) > LIMITS["max_constant_digits"]:
                self.fail(
                    f"constant has more than {LIMITS['max_constant_digits']} digits "
                    "(limit max_constant_digits)",
                    node,
                )

    def check_value(self, value: sp.Basic, node: ast.AST) -> None:
        """Refuse oversized exact numbers and constants that are not finite real numbers."""
        if value.is_Symbol:
            return
        self.check_size(value, node)
        if not isinstance(value, sp.Expr):
            return
        if self.has_non_finite(value):
            if value.is_number:
                self.fail(f"{self.shown(node)} is not a finite real number", node)
            self.fail(
                f"{self.shown(node)} is infinite or undefined for some values (SymPy: {value})",
                node,
            )
        if value.is_number and not value.is_Rational:
            real = assumed_real(value)
            if real is False or (real is None and not numerically_real(value)):
                self.fail(f"{self.shown(node)} is not a finite real number", node)

    def shown(self, node: ast.AST) -> str:
        """The text of ``node`` for a message, on one line, cut at 60 characters."""
        shown = " ".join(self.src.segment(node).split())
        return shown if len(shown) <= 60 else shown[:57] + "..."

    def has_non_finite(self, value: sp.Basic) -> bool:
        """``value.has(*NON_FINITE)``, each distinct subexpression looked at once over the whole
        build (``has`` walks the tree below every value built: its size times its depth)."""
        stack = [value]
        seen: list[sp.Basic] = []
        while stack:
            part = stack.pop()
            if part in self.finite:
                continue
            if not part.args and any(part == bad for bad in NON_FINITE):
                return True
            seen.append(part)
            stack.extend(part.args)
        self.finite.update(seen)
        return False

    def operand_depths(self, node: ast.AST) -> tuple[bool, int]:
        """Whether every built operand of ``node`` is a number, and their deepest nesting."""
        every, deepest = True, 0
        stack = list(ast.iter_child_nodes(node))
        while stack:
            child = stack.pop()
            if id(child) not in self.built:  # keywords, comparisons, runs of + or *
                stack.extend(ast.iter_child_nodes(child))
                continue
            depth = self.constant_depth.get(id(child))
            if depth is None:
                every = False
            else:
                deepest = max(deepest, depth)
        return every, deepest

    def record(self, node: ast.AST, value: sp.Expr) -> None:
        self.built.add(id(node))
        if value.is_Rational or value.is_Symbol:
            depth = 0 if value.is_Rational else None
        elif value.is_number:
            every, deepest = self.operand_depths(node)
            # A constant made from variables that cancelled, e.g. (x + c) - x: measure it.
            depth = node_nesting(node) + deepest if every else value_depth(value)
        else:
            depth = None
        if depth is not None:
            self.constant_depth[id(node)] = depth

    def guard(self, node: ast.AST) -> None:
        """Refuse to let SymPy evaluate a deeply nested constant (exponential time in SymPy)."""
        every, deepest = self.operand_depths(node)
        limit = LIMITS["max_constant_depth"]
        if every and deepest + node_nesting(node) > limit:
            self.fail(
                f"constant sub-expression is nested more than {limit} functions deep "
                "(limit max_constant_depth; SymPy's exact evaluation would take too long)",
                node,
            )

    def check_growth(self, name: str, spec: FunctionSpec, arg: sp.Expr, node: ast.AST) -> None:
        """Refuse ``exp``-like functions of numbers too large to keep exact."""
        if spec.grows and arg.is_number:
            limit = LIMITS["max_exponent"]
            if log10_abs(arg) > math.log10(limit):
                self.fail(
                    f"the argument of {name}() is larger than {limit} (limit max_exponent)", node
                )

    def check_power(self, base: sp.Expr, exponent: sp.Expr, node: ast.BinOp) -> None:
        """Bound a power whose base and exponent are both numbers before SymPy folds it."""
        if not (base.is_number and exponent.is_number):
            return
        limit, max_digits = LIMITS["max_exponent"], LIMITS["max_constant_digits"]
        where = self.src.find_between(node.left, node.right, "**")
        size = log10_abs(exponent)
        if size > math.log10(limit):
            self.fail(f"exponent is larger than {limit} (limit max_exponent)", where)
        magnitude = 10.0**size
        if base.is_Rational:
            if base.p == 0 or abs(base.p) == base.q:  # 0, 1 and -1 stay small
                return
            digits = max(log10_int(abs(int(base.p))), log10_int(int(base.q)))
        else:
            rationals = [abs(log10_abs(r)) for r in base.atoms(sp.Rational) if r != 0]
            digits = max([abs(log10_abs(base)), *rationals])
        if magnitude * digits > max_digits:
            self.fail(
                f"the power has more than {max_digits} digits (limit max_constant_digits)", where
            )

    def symbol(self, name: str, node: ast.AST) -> sp.Symbol:
        sym = self.symbols.get(name)
        if sym is None:
            try:
                check_identifier(name)
            except ParseError as exc:
                self.fail(exc.reason, node)
            if len(self.symbols) >= LIMITS["max_names"]:
                self.fail(
                    f"more than {LIMITS['max_names']} distinct variable names (limit max_names)",
                    node,
                )
            sym = self.symbols[name] = sp.Symbol(name, real=True)
        return sym
    def check_argument_count(self, spec: FunctionSpec, args: list[sp.Expr], node: ast.Call) -> None:
        """Bound min/max arguments, counting those of nested min/max SymPy would merge."""
        merged = sum(len(a.args) if isinstance(a, spec.build) else 1 for a in args)
        limit = LIMITS["max_args"]
        if merged > limit:
            name = getattr(node.func, "id", "function")
            self.fail(f"{name}() has more than {limit} arguments (limit max_args)", node)


def assumed_real(value: sp.Expr) -> bool | None:
    """SymPy's ``is_extended_real`` of a constant, or None when asking it raises.

    Some queries evaluate the number, and whether they do depends on the order SymPy tries its
    handlers in, which follows string hashes: ``floor(exp(700))`` raised ``PrecisionExhausted``
    under some hash seeds only. An unanswered query is "unknown", decided numerically after.
    """
    try:
        return value.is_extended_real
    except ArithmeticError:
        return None

