"""Parsing for teaching: the expression as written (:mod:`symdiff.parsing.written`).

:func:`parse_as_written` first parses the text as :func:`symdiff.parse` does (every check,
limit and refusal is that parser's), then reads the same syntax tree again into written nodes:
the order of terms and factors, subtraction and division, powers of quotients and products,
and numbers where and as the student typed them. Nothing is evaluated: the tree only holds the
parser's values. Function calls keep their written arguments when the function is a plain
application of its class (``sin``, ``exp``, ``log(x)``, ...), ``sqrt(u)`` is the power
``u**(1/2)`` printed as ``sqrt``; ``max``/``min`` (whose arguments SymPy sorts) and the other
names of a function (``ln``, ``arctan``, ...) are :class:`~symdiff.parsing.written.Called` nodes,
as typed, and ``log(u, b)`` (which
SymPy makes ``log(u)/log(b)``) a :class:`~symdiff.parsing.written.BaseLog`; a call the parser
rewrites otherwise (``where``, ``sinc``) is kept as the parser builds it.

The written tree is used only if it stands for exactly the parser's expression
(:func:`~symdiff.parsing.written.canonical`); otherwise the canonical expression is returned for
both, and the derivation is that of SymPy's form, as before.
"""

from __future__ import annotations

import ast
from typing import NoReturn

import sympy as sp

from .conditions import chain, read_condition
from .entry import read_text
from .functions import CONSTANTS, FUNCTION_SPECS
from .limits import PARSER_RECURSION_LIMIT, recursion_limit
from .sizes import exact_float
from .syntax import CHAINS
from .written import (
    BaseLog,
    Called,
    Literal,
    Negation,
    Power,
    Product,
    Quotient,
    SignedSum,
    canonical_values,
)


def parse_as_written(text: str) -> tuple[sp.Expr, sp.Expr]:
    """``(written, canonical)``: the expression as typed and as :func:`symdiff.parse` reads it.

    Raises what :func:`symdiff.parse` raises (this is that parser's reading, and its tree).
    ``written`` is ``canonical`` itself when the written tree would not stand for exactly that
    expression (see the module docstring).
    """
    value, src, tree = read_text(text)
    with recursion_limit(PARSER_RECURSION_LIMIT):
        try:
            written = _Writer(src.transformed).build(tree.body)
        except (RecursionError, ValueError, TypeError, ArithmeticError):
            return value, value
    if canonical_values()(written) != value:
        return value, value
    return written, value


class _Writer:
    """Reads an ``ast`` tree that :func:`symdiff.parse` accepted into written nodes."""

    def __init__(self, transformed: str) -> None:
        self.text = transformed
        self.value = canonical_values()

    def build(self, node: ast.AST) -> sp.Expr:
        if isinstance(node, ast.Name):
            if node.id == "e":
                return Literal.of(CONSTANTS["e"], "e")
            if node.id in CONSTANTS:
                return CONSTANTS[node.id]
            return sp.Symbol(node.id, real=True)
        if isinstance(node, ast.Constant):
            if isinstance(node.value, float):
                literal = ast.get_source_segment(self.text, node) or repr(node.value)
                exact = exact_float(literal)
                if exact is None:
                    raise ValueError(literal)
                return Literal.of(exact, literal)
            return sp.Integer(node.value)
        if isinstance(node, ast.UnaryOp):
            operand = self.build(node.operand)
            return Negation(operand) if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        raise ValueError(type(node).__name__)  # the parser refused it already

    def _binary(self, node: ast.BinOp) -> sp.Expr:
        if isinstance(node.op, ast.Pow):
            return Power(self.build(node.left), self.build(node.right))
        kind = CHAINS[type(node.op)]  # a left-leaning run of + - or of * /, read as one
        run: list[ast.BinOp] = []
        left: ast.AST = node
        while isinstance(left, ast.BinOp) and CHAINS.get(type(left.op)) == kind:
            run.append(left)
            left = left.left
        run.reverse()
        first = self.build(left)
        if kind == "additive":
            signs = [1] + [1 if isinstance(item.op, ast.Add) else -1 for item in run]
            return SignedSum.of(signs, [first, *(self.build(item.right) for item in run)])
        factors = [first]
        for item in run:
            right = self.build(item.right)
            if isinstance(item.op, ast.Div):
                factors = [Quotient(_product(factors), right)]
            else:
                factors.append(right)
        return _product(factors)

    def _comparison(self, node: ast.Compare) -> sp.Basic:
        """A comparison as the scalar parser builds it (a chained one is the ``And``)."""
        sides = (node.left, *node.comparators)
        return chain(node, [self.value(self.build(side)) for side in sides])

    def _call(self, node: ast.Call) -> sp.Expr:
        assert isinstance(node.func, ast.Name)
        name = node.func.id
        spec = FUNCTION_SPECS[name]
        if name == "where":
            condition = read_condition(node.args[0], self._comparison, _unreachable)
            branches = (self.value(self.build(arg)) for arg in node.args[1:])
            return spec.build(condition, *branches)
        args = [self.build(arg) for arg in node.args]
        args += [self.build(kw.value) for kw in node.keywords]
        values = [self.value(a) for a in args]
        built = spec.build(*values)
        if name == "sqrt":
            return sp.Pow(args[0], sp.S.Half, evaluate=False)
        if name in ("log", "ln") and len(args) == 2:
            return BaseLog(*args)  # log(x, 2) as typed, not log(x)/log(2)
        function = Called.FUNCTIONS.get(name)
        if function is not None and isinstance(built, function) and len(built.args) == len(args):
            return Called.of(name, args)  # min(x, 1), ln(x) as typed, not Min(1, x), log(x)
        if isinstance(built, sp.Function) and built.args == tuple(values):
            try:
                return built.func(*args, evaluate=False)
            except TypeError:
                return built
        return built


def _unreachable(message: str, node: ast.AST) -> NoReturn:
    raise AssertionError(f"{message} (the scalar parser has accepted this text)")


def _product(factors: list[sp.Expr]) -> sp.Expr:
    return factors[0] if len(factors) == 1 else Product(*factors)
