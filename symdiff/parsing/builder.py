"""The builder: translates an allow-listed ``ast`` tree into SymPy, node by node, checking every
limit (the checks are :class:`~symdiff.parsing.guards.BuildChecks`) and refusing every construct
outside the grammar."""

from __future__ import annotations

import ast
import sys
import time
from collections.abc import Callable
from typing import ClassVar

import sympy as sp

from ..errors import SymdiffError
from ..simplify.quick import addition as quick_addition
from ..simplify.quick import power
from ..simplify.quick import product as quick_product
from ..simplify.quick import total as quick_total
from .budget import OverBudget
from .conditions import chain, read_condition
from .functions import CONSTANTS, FUNCTION_SPECS, TENSOR_FUNCTIONS, FunctionSpec
from .guards import BuildChecks
from .hints import unknown_function, variables
from .limits import LIMITS
from .sizes import exact_float, log10_abs, root_digits
from .syntax import BIN_NOTES, BIN_SYMBOLS, CHAINS, COMPARISONS, CONSTRUCTS, UNARY_SYMBOLS

# Runs of + - or * / up to this long are combined left to right, exactly as Python would.
_SEQUENTIAL_RUN = 32


def _sum(left: sp.Expr, right: sp.Expr) -> sp.Expr:
    """``left + right``: for two expressions of SymPy's own priority that are not both numbers
    that is ``Add(left, right)`` (``Expr.__add__``), made by :func:`quick.addition`; anything
    else by ``+`` itself."""
    plain = (isinstance(left, sp.Expr) and isinstance(right, sp.Expr)
             and left._op_priority == right._op_priority == sp.Expr._op_priority
             and not (left.is_Number and right.is_Number))
    return quick_addition((left, right)) if plain else left + right


class ExpressionBuilder(BuildChecks):
    """Translates an allow-listed ``ast`` tree into SymPy, one handler per node type."""

    _HANDLERS: ClassVar[dict[type[ast.AST], Callable[[ExpressionBuilder, ast.AST], sp.Expr]]]

    def build(self, node: ast.AST) -> sp.Expr:
        """Build ``node`` (dispatching on its type) and check the value it stands for."""
        handler = self._HANDLERS.get(type(node))
        if handler is None:
            if isinstance(node, ast.Subscript) or (
                isinstance(node, ast.Attribute) and node.attr == "T"
            ):
                what = "indexing ('a[i]')" if isinstance(node, ast.Subscript) else "'.T'"
                self.fail(f"{what} {self.needs_shapes()}", node)
            self.fail(CONSTRUCTS.get(type(node), f"{type(node).__name__} is not supported"), node)
        if time.thread_time() > self.deadline:
            self.fail(self.over_budget(), node)
        outer = sys.getprofile()  # the hook of parsing.budget while a watched parent is built
        if self.hook is not None:
            sys.setprofile(self.hook if id(node) in self.watched else None)
        try:
            value = handler(self, node)
            self.check_value(value, node)
            self.record(node, value)
        except SymdiffError:
            raise
        except OverBudget as exc:  # raised inside SymPy (see parsing.budget): no calls here
            if exc.node is None:
                exc.node = node
            raise
        except (RecursionError, MemoryError):
            self.fail("expression is too complex to evaluate", node)
        except (ArithmeticError, ValueError, TypeError) as exc:
            self.fail(f"cannot evaluate this: {str(exc) or type(exc).__name__}", node)
        finally:
            if self.hook is not None:
                sys.setprofile(outer)  # a builtin: the hook raises on Python calls when over
        return value
    # -- leaves --------------------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> sp.Expr:
        name = node.id
        if name in CONSTANTS:
            return CONSTANTS[name]
        if name in FUNCTION_SPECS:
            self.fail(f"{name!r} is a function; call it as {name}(...)", node)
        return self.symbol(name, node)

    def visit_Constant(self, node: ast.Constant) -> sp.Expr:
        value = node.value
        if isinstance(value, bool) or value is None:
            self.fail(f"{value} is not supported", node)
        if isinstance(value, int):
            if abs(value) >= 10 ** LIMITS["max_int_digits"]:
                self.fail(f"integer has more than {LIMITS['max_int_digits']} digits", node)
            return sp.Integer(value)
        if isinstance(value, float):
            exact = exact_float(self.src.segment(node))
            if exact is None:
                self.fail(
                    f"number is too large or too small to keep exactly "
                    f"(limit max_constant_digits = {LIMITS['max_constant_digits']})",
                    node,
                )
            return exact
        if isinstance(value, complex):
            self.fail("complex numbers are not supported", node)
        if value is Ellipsis:
            self.fail("'...' is not supported", node)
        kind = "bytes literals" if isinstance(value, bytes) else "string literals"
        self.fail(f"{kind} are not supported", node)

    # -- operators -----------------------------------------------------------------------

    def visit_UnaryOp(self, node: ast.UnaryOp) -> sp.Expr:
        if isinstance(node.op, ast.USub):
            return -self.build(node.operand)
        if isinstance(node.op, ast.UAdd):
            return self.build(node.operand)
        symbol = UNARY_SYMBOLS.get(type(node.op), type(node.op).__name__)
        self.fail(f"operator {symbol!r} is not supported", node)

    def visit_BinOp(self, node: ast.BinOp) -> sp.Expr:
        kind = CHAINS.get(type(node.op))
        if kind is None:
            self.check_operator(node)
            base, exponent = self.build(node.left), self.build(node.right)
            self.guard(node)
            self.check_power(base, exponent, node)
            return power(base, exponent)
        # A left-leaning run of same-precedence operators is built iteratively.
        run: list[ast.BinOp] = []
        left: ast.AST = node
        while isinstance(left, ast.BinOp) and CHAINS.get(type(left.op)) == kind:
            run.append(left)
            left = left.left
        run.reverse()
        if kind == "additive":
            return self.add_run(left, run)
        return self.multiply_run(node, left, run)

    def check_operator(self, node: ast.BinOp) -> None:
        if isinstance(node.op, ast.Pow | ast.Add | ast.Sub | ast.Mult | ast.Div):
            return
        symbol = BIN_SYMBOLS.get(type(node.op), type(node.op).__name__)
        note = BIN_NOTES.get(type(node.op), "")
        if isinstance(node.op, ast.MatMult):
            note = f": a matrix product is a tensor operation and {self.needs_shapes()}"
        self.fail(f"operator {symbol!r} is not supported{note}", self.operator_position(node))

    def operator_position(self, node: ast.BinOp) -> int:
        symbol = BIN_SYMBOLS.get(type(node.op), "")
        return self.src.find_between(node.left, node.right, symbol)

    def add_run(self, first: ast.AST, run: list[ast.BinOp]) -> sp.Expr:
        """``a + b - c ...``, combined like :meth:`multiply_run`."""
        operands = [(first, self.build(first))]
        for item in run:
            term = self.build(item.right)
            operands.append((item, -term if isinstance(item.op, ast.Sub) else term))
        if len(operands) <= _SEQUENTIAL_RUN:
            total = operands[0][1]
            for item, term in operands[1:]:
                total = _sum(total, term)
                self.check_size(total, item)
            return total
        terms: list[sp.Expr] = []
        constant = sp.Integer(0)
        for item, term in operands:
            if term.is_Rational:
                constant += term
                self.check_size(constant, item)
            else:
                terms.append(term)
        return quick_total(terms, constant)

    def multiply_run(self, node: ast.BinOp, first: ast.AST, run: list[ast.BinOp]) -> sp.Expr:
        """``a * b / c ...``: left to right as Python would (SymPy's canonical form depends on
        the order: ``2*(x + y)*x`` is ``x*(2*x + 2*y)``), or in one ``Mul`` for long runs, which
        SymPy would otherwise re-flatten at every step. Guards SymPy's merging of numeric roots
        (``sqrt(a)*sqrt(b)`` becomes ``sqrt(a*b)``, whose square factors it then searches for).
        """
        operands: list[tuple[ast.AST, sp.Expr]] = [(first, self.build(first))]
        for item in run:
            self.check_operator(item)
            factor = self.build(item.right)
            if isinstance(item.op, ast.Div):
                if factor.is_zero if factor.is_number else factor == 0:
                    self.fail("division by zero", self.operator_position(item))
                factor = power(factor, sp.S.NegativeOne)
            operands.append((item, factor))
        self.guard(node)
        under_roots = 0
        for item, factor in operands:
            under_roots += root_digits(factor)
            if under_roots > LIMITS["max_constant_digits"]:
                self.fail(
                    "the numbers under roots in this product have more than "
                    f"{LIMITS['max_constant_digits']} digits together (limit max_constant_digits)",
                    item,
                )
        if len(operands) <= _SEQUENTIAL_RUN:
            product = operands[0][1]
            for item, factor in operands[1:]:
                product = quick_product(product, factor)
                self.check_size(product, item)
        else:
            factors: list[sp.Expr] = []
            coefficient = sp.Integer(1)
            for item, factor in operands:
                if factor.is_Rational:
                    coefficient *= factor
                    self.check_size(coefficient, item)
                else:
                    factors.append(factor)
            product = sp.Mul(coefficient, *factors)
        if product.is_number and not product.is_Rational:
            # Bound the magnitude so that later numeric comparisons (Max, where, assumptions)
            # never need huge precision, e.g. sin(exp(1000)*exp(1000)*...).
            limit = LIMITS["max_constant_digits"]
            if log10_abs(product) > limit:
                self.fail(f"constant is larger than 10**{limit} (limit max_constant_digits)", node)
        return product

    def visit_BoolOp(self, node: ast.BoolOp) -> sp.Expr:
        word = "and" if isinstance(node.op, ast.And) else "or"
        self.fail(f"{word!r} is only allowed in the condition of where(cond, a, b)", node)

    def visit_Compare(self, node: ast.Compare) -> sp.Expr:
        self.comparison(node)  # raises with the most specific message
        self.fail("comparisons are only allowed as the condition of where(cond, a, b)", node)

    def comparison(self, node: ast.Compare) -> sp.Basic:
        """Build a ``<``, ``<=``, ``>`` or ``>=`` comparison; a chained one (``0 < x < 1``)
        is the ``And`` of its links, each compared value built once (as Python evaluates it)."""
        left = node.left
        for op, right in zip(node.ops, node.comparators, strict=True):
            symbol, build = COMPARISONS.get(type(op), (type(op).__name__, None))
            if build is None:
                self.fail(
                    f"comparison {symbol!r} is not supported; use < <= > >= inside where()",
                    self.src.find_between(left, right, symbol.split()[0]),
                )
            left = right
        values = [self.build(node.left), *(self.build(c) for c in node.comparators)]
        self.guard(node)
        return chain(node, values)

    # -- calls ---------------------------------------------------------------------------

    def visit_Call(self, node: ast.Call) -> sp.Expr:
        func = node.func
        if isinstance(func, ast.Attribute):
            self.fail("method calls ('a.f(...)') are not supported; only calls of a function name",
                      node)
        if not isinstance(func, ast.Name):  # "2(x + 1)", "(a + b)(a - b)"
            self.build(func)  # what the left part holds is refused first: "(lambda: 1)()"
            opening = self.src.transformed.find("(", self.src.end(func))
            left = " ".join(self.src.segment(func).split())
            left = left if isinstance(func, ast.Constant | ast.Call) else f"({left})"
            self.fail(
                "implicit multiplication is not supported: write "
                f"{left if len(left) <= 20 else '...'}*(...)",
                self.src.original_offset(opening) if opening >= 0 else node,
            )
        name = func.id
        if name in CONSTANTS:
            self.fail(f"{name!r} is a constant, not a function (to multiply, write {name}*(...))",
                      func)
        spec = FUNCTION_SPECS.get(name)
        if spec is None:
            self.fail(unknown_function(name, self.src.original, variables(self.tree)), func)
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                self.fail("starred arguments ('*a') are not supported", arg)
        base = self.keyword_base(name, spec, node)
        given = len(node.args) + (base is not None)
        too_many = spec.max_args is not None and given > spec.max_args
        if len(node.args) < spec.min_args or too_many:
            hint = ""
            if name in TENSOR_FUNCTIONS:  # max(x): the largest element of an array
                hint = f"; {name}(a, axis=k) over an array's elements {self.needs_shapes()}"
            self.fail(f"{name}() takes {spec.usage} ({given} given){hint}", func)
        if name == "where":
            return self.where(node, spec)
        if spec.max_args is None and len(node.args) > LIMITS["max_args"]:
            self.fail(
                f"{name}() has more than {LIMITS['max_args']} arguments (limit max_args)", node
            )
        args = [self.build(arg) for arg in node.args]
        if base is not None:
            args.append(self.build(base))
        refused = spec.check(*args) if spec.check else None
        if refused is not None:
            index, why = refused
            self.fail(why, [*node.args, base][index])
        if spec.max_args is None:
            self.check_argument_count(spec, args, node)
        self.guard(node)
        self.check_growth(name, spec, args[0], node)
        return spec.build(*args)

    def keyword_base(self, name: str, spec: FunctionSpec, node: ast.Call) -> ast.AST | None:
        """The ``base=`` keyword of ``log`` (its one optional parameter, the only keyword
        any function takes); any other keyword is an error."""
        base = None
        for kw in node.keywords:
            if kw.arg is None:
                self.fail("keyword unpacking ('**kwargs') is not supported", kw.value)
            if not spec.keywords:
                hint = ""
                if name in TENSOR_FUNCTIONS and kw.arg in ("axis", "keepdims"):
                    hint = f"; {name}(a, {kw.arg}=...) {self.needs_shapes()}"
                self.fail(f"{name}() takes no keyword arguments (got {kw.arg!r}){hint}", kw)
            if kw.arg not in spec.keywords:
                self.fail(f"{name}() got an unexpected keyword argument {kw.arg!r}", kw)
            if base is not None or len(node.args) > 1:
                self.fail(f"{name}() got multiple values for {kw.arg!r}", kw)
            base = kw.value
        return base

    def where(self, node: ast.Call, spec: FunctionSpec) -> sp.Expr:
        cond_node, yes_node, no_node = node.args
        cond = read_condition(cond_node, self.comparison, self.fail)
        if cond.has(sp.Piecewise):  # SymPy would solve it as a set: exponential time
            self.fail(
                "a where() inside the condition of a where() is not supported; "
                "nest where() in the values instead",
                cond_node,
            )
        yes, no = self.build(yes_node), self.build(no_node)
        self.guard(node)
        return spec.build(cond, yes, no)


ExpressionBuilder._HANDLERS = {
    ast.Name: ExpressionBuilder.visit_Name,
    ast.Constant: ExpressionBuilder.visit_Constant,
    ast.UnaryOp: ExpressionBuilder.visit_UnaryOp,
    ast.BinOp: ExpressionBuilder.visit_BinOp,
    ast.BoolOp: ExpressionBuilder.visit_BoolOp,
    ast.Compare: ExpressionBuilder.visit_Compare,
    ast.Call: ExpressionBuilder.visit_Call,
}
