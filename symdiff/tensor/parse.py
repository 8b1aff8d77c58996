"""Tensor expression strings -> tensor graph, through an ``ast`` allow-list (never ``eval``).

The text goes through the scalar parser's own front end (:mod:`symdiff.parsing`): its character
scan (ASCII only, no strings, bracket depth, literal length, ``^`` as ``**``), Python's
``ast.parse``, and its node-count and depth limits, with the same ``ParseError`` positions and
caret lines. A sub-expression without variables (``2*pi``, ``log(2)``) is handed to the scalar
parser whole, so every limit on constants applies. The rest is translated node by node:

* ``+ - * / **`` and the scalar layer's functions (``sin``, ``exp``, ``sigmoid``, ``where``,
  ``max(a, b)``, ...) are elementwise with NumPy broadcasting; a chain of them becomes one
  ``map`` node whose SymPy expression the scalar rule table differentiates;
* ``a @ b``, ``a.T``, ``a[i]``, ``a[:, j]``, ``a[1:3]`` (integer literals only), ``a[[0, 2, 2]]``,
  ``a[:, [1, 0]]`` (lists of them: a gather, NumPy's advanced indexing);
* ``sum``/``mean``/``max``/``min``/``logsumexp``/``prod(a, axis=k, keepdims=False)`` (``axis``
  an int or a tuple; omitted: every axis), ``softmax(a, axis=-1)``, ``transpose(a, perm)``,
  ``reshape(a, shape)`` (entries: ints, ``-1``, dimension names and products of them),
  ``repeat(a, n, axis=k)``.

Every variable must have a shape in ``shapes=`` (``()`` for a scalar); shapes are checked at
each operation, and a mismatch is a :class:`~symdiff.errors.ShapeError` naming the operation,
both shapes and the text, e.g. ``matmul: shapes (n, d) and (k,) do not align (in 'X @ v')``.
"""

from __future__ import annotations

import ast
import functools
import math
import time
from collections.abc import Callable
from typing import Any, NoReturn

import sympy as sp

from .. import parsing as scalar
from ..codegen import naming
from ..errors import ParseError, ShapeError, SymdiffError, UnsupportedError
from ..parsing.conditions import condition_pattern
from ..parsing.functions import FUNCTION_SPECS, FunctionSpec
from ..parsing.hints import did_you_mean
from ..parsing.syntax import BIN_NOTES
from . import families
from .families import gather
from .ir import Node
from .literals import Literals
from .ops import Builder
from .shapes import Shape, broadcast
from .values import Elem, Values

REDUCTIONS = frozenset({"sum", "mean", "max", "min", "logsumexp", "prod"})
TENSOR_FUNCTIONS = REDUCTIONS | {"softmax", "transpose", "reshape", "repeat"}
_CONSTANTS = frozenset({"pi", "e"})
_ELEMENTWISE: dict[type[ast.operator], tuple[str, Callable[[Any, Any], Any]]] = {
    ast.Add: ("add", lambda a, b: a + b),
    ast.Sub: ("subtract", lambda a, b: a - b),
    ast.Mult: ("multiply", lambda a, b: a * b),
    ast.Div: ("divide", lambda a, b: a / b),
    ast.Pow: ("power", lambda a, b: a**b),
}
_SYMBOLS = {ast.FloorDiv: "//", ast.Mod: "%", ast.LShift: "<<", ast.RShift: ">>",
            ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^"}
_RUNS = {ast.Add: "+", ast.Sub: "+", ast.Mult: "*", ast.Div: "*", ast.MatMult: "*",
         ast.FloorDiv: "*", ast.Mod: "*"}
_COMPARE = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_NOT_FINITE = (sp.zoo, sp.oo, -sp.oo, sp.nan)


@functools.lru_cache(maxsize=256)
def _template(name: str, arity: int, condition: str | None) -> sp.Expr:
    """The scalar layer's expression for ``name(a0, ..., a{arity-1})`` (in real symbols); for
    ``where``, ``condition`` is the condition in the placeholders before the two values."""
    if condition is not None:
        return scalar.parse(f"where({condition}, a{arity - 2}, a{arity - 1})")
    return scalar.parse(f"{name}({', '.join(f'a{i}' for i in range(arity))})")


class _Parser(Literals, Values):
    """Translates the allow-listed syntax tree into tensor nodes."""

    def __init__(self, src: Any, shapes: dict[str, Shape], builder: Builder):
        Values.__init__(self, builder)
        self.src = src
        self.shapes = shapes
        self.dims = {s.name: s for shape in shapes.values() for d in shape
                     if not isinstance(d, int) for s in d.free_symbols}
        self.names: set[str] = set()
        self.constant: set[int] = set()
        self.deadline = time.thread_time() + scalar.LIMITS.get("max_milliseconds", 1000) / 1000

    # -- errors ------------------------------------------------------------------------------------
    def fail(self, message: str, node: ast.AST | int) -> NoReturn:
        position = node if isinstance(node, int) else self.src.position(node)
        raise ParseError(message, self.src.original, position)

    def where(self, node: ast.AST) -> str:
        start = self.src.position(node)
        end = self.src.original_offset(self.src.end(node))
        text = " ".join(self.src.original[start:end].split())
        return f" (in {text if len(text) <= 60 else text[:57] + '...'!r})"

    # -- dispatch ----------------------------------------------------------------------------------
    def mark_constants(self, tree: ast.AST) -> None:
        """Remember which sub-trees have no variables (they go to the scalar parser whole)."""
        calls = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        order: list[ast.AST] = []
        stack = [tree]
        while stack:
            node = stack.pop()
            order.append(node)
            stack.extend(ast.iter_child_nodes(node))
        for node in reversed(order):
            children = list(ast.iter_child_nodes(node))
            if isinstance(node, ast.Name):
                ok = node.id in _CONSTANTS or id(node) in calls
            elif isinstance(node, ast.Call):
                ok = isinstance(node.func, ast.Name) and node.func.id in scalar.FUNCTIONS
            else:
                ok = not isinstance(node, ast.Attribute | ast.Subscript | ast.MatMult)
            if ok and all(id(c) in self.constant for c in children):
                self.constant.add(id(node))

    def build(self, node: ast.AST) -> Elem:
        if time.thread_time() > self.deadline:
            self.fail("expression is too expensive to build (limit max_milliseconds)", node)
        if isinstance(node, ast.expr) and id(node) in self.constant:
            return self.scalar_constant(node)
        handler = getattr(self, f"visit_{type(node).__name__}", None)
        if handler is None:
            self.fail(f"{_describe(node)} is not supported", node)
        return handler(node)

    def scalar_constant(self, node: ast.AST) -> Elem:
        start = self.src.position(node)
        end = self.src.original_offset(self.src.end(node))
        try:
            value = scalar.parse(self.src.original[start:end])
        except ParseError as exc:
            offset = start + (exc.position or 0)
            raise ParseError(exc.reason, self.src.original, offset) from None
        return Elem(value, ())

    # -- leaves ------------------------------------------------------------------------------------
    def visit_Name(self, node: ast.Name) -> Elem:
        name = node.id
        if name in TENSOR_FUNCTIONS or name in scalar.FUNCTIONS or name in families.SPELLINGS:
            self.fail(f"{name!r} is a function; call it as {name}(...)", node)
        try:
            scalar.check_identifier(name)
        except ParseError as exc:  # a traced function's bound constant reads back as a variable
            if not (naming.CONSTANT.match(name) and name in self.shapes):
                self.fail(exc.reason, node)
        if name not in self.shapes:
            raise ShapeError(
                f"variable {name!r} has no shape: add it to shapes= (use () for a scalar)"
                f"{self.where(node)}"
            )
        self.names.add(name)
        if len(self.names) > scalar.LIMITS.get("max_names", 200):
            self.fail("too many distinct variable names (limit max_names)", node)
        return self.elem(self.b.var(name, self.shapes[name]))

    # -- operators ---------------------------------------------------------------------------------
    def visit_UnaryOp(self, node: ast.UnaryOp) -> Elem:
        if isinstance(node.op, ast.USub | ast.UAdd):
            value = self.build(node.operand)
            return Elem(-value.expr if isinstance(node.op, ast.USub) else value.expr, value.shape)
        self.fail(f"operator {'not' if isinstance(node.op, ast.Not) else '~'!r} is not "
                  "supported", node)

    def visit_BinOp(self, node: ast.BinOp) -> Elem:
        kind = _RUNS.get(type(node.op))
        if kind is None:
            return self.binary(node, self.build(node.left), self.build(node.right))
        run: list[ast.BinOp] = []
        left: ast.AST = node
        while isinstance(left, ast.BinOp) and _RUNS.get(type(left.op)) == kind:
            run.append(left)
            left = left.left
        value = self.build(left)
        for item in reversed(run):
            value = self.binary(item, value, self.build(item.right))
        return value

    def binary(self, node: ast.BinOp, left: Elem, right: Elem) -> Elem:
        op = type(node.op)
        if op is ast.MatMult:
            product = self.b.matmul(self.tensor(left), self.tensor(right), self.where(node))
            return self.elem(product)
        if op not in _ELEMENTWISE:
            symbol = _SYMBOLS.get(op, op.__name__)
            note = BIN_NOTES.get(op, "") if op is not ast.MatMult else ""
            self.fail(f"operator {symbol!r} is not supported{note}",
                      self.src.find_between(node.left, node.right, symbol))
        name, combine = _ELEMENTWISE[op]
        shape = broadcast(name, left.shape, right.shape, where=self.where(node))
        numbers = left.expr.is_number and right.expr.is_number
        if op is ast.Pow:
            if numbers:
                self.fail("this power is constant only after cancelling variables; "
                          "write the constant directly", node)
            self.check_power(left.expr, right.expr, node)
        if op is ast.Div and right.expr.is_zero:
            self.fail("division by zero", self.src.find_between(node.left, node.right, "/"))
        return self.checked(combine(left.expr, right.expr), shape, node)

    def check_power(self, base: sp.Expr, exponent: sp.Expr, node: ast.BinOp) -> None:
        """A numeric exponent is bounded, and so are the numbers it raises (SymPy expands
        ``(2*x)**k`` to ``2**k * x**k``)."""
        if not exponent.is_number:
            return
        limit = scalar.LIMITS.get("max_exponent", 1000)
        try:
            magnitude = abs(float(exponent))
        except (TypeError, ValueError, OverflowError):
            magnitude = float("inf")
        if not magnitude <= limit:
            self.fail(f"exponent is larger than {limit} (limit max_exponent)", node)
        digits = max((abs(math.log10(abs(int(r.p))) - math.log10(int(r.q)))
                      for r in base.atoms(sp.Rational) if r != 0), default=0.0)
        if digits * magnitude > scalar.LIMITS.get("max_constant_digits", 500):
            self.fail("the power has too many digits (limit max_constant_digits)", node)

    def checked(self, expr: sp.Expr, shape: Shape, node: ast.AST) -> Elem:
        """Refuse values that are not finite or carry oversized numbers."""
        if expr.has(*_NOT_FINITE):
            self.fail("this is infinite or undefined", node)
        limit = scalar.LIMITS.get("max_constant_digits", 500)
        for part in (expr, *expr.args):
            if part.is_Rational and max(len(str(abs(part.p))), len(str(part.q))) > limit:
                self.fail(f"constant has more than {limit} digits (limit max_constant_digits)",
                          node)
        return Elem(expr, shape)

    def visit_Compare(self, node: ast.Compare) -> Elem:
        self.fail("comparisons are only allowed as the condition of where(cond, a, b)", node)

    def visit_BoolOp(self, node: ast.BoolOp) -> Elem:
        word = "and" if isinstance(node.op, ast.And) else "or"
        self.fail(f"{word!r} is only allowed in the condition of where(cond, a, b)", node)

    # -- attribute and subscript -------------------------------------------------------------------
    def visit_Attribute(self, node: ast.Attribute) -> Elem:
        if node.attr != "T":
            self.fail("attribute access ('a.b') is not supported; only '.T' (transpose)", node)
        value = self.tensor(self.build(node.value))
        return self.elem(self.b.transpose(value, None, self.where(node)))

    def visit_Subscript(self, node: ast.Subscript) -> Elem:
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        index: list[Any] = []
        for item in items:
            if isinstance(item, ast.Slice):
                parts = (item.lower, item.upper, item.step)
                start, stop, step = (None if p is None else self.integer(p) for p in parts)
                if step == 0:
                    self.fail("slice step cannot be zero", item)
                index.append((start, stop, step))
            elif isinstance(item, ast.List):  # a[[0, 2, 3]]: a gather
                index.append([self.integer(i, "expected an integer literal") for i in item.elts])
            else:
                index.append(self.integer(item, "indices must be integer literals, lists of "
                                                "them or slices (a[1], a[:, [0, 2]], a[1:3])"))
        value = self.tensor(self.build(node.value))
        if not any(isinstance(item, list) for item in index):
            return self.elem(self.b.index(value, tuple(index), self.where(node)))
        key = tuple(slice(*item) if isinstance(item, tuple) else item for item in index)
        try:
            return self.elem(gather.fancy_index(self.b, value, key, self.where(node)))
        except UnsupportedError as exc:
            self.fail(str(exc), node)

    # -- calls -------------------------------------------------------------------------------------
    def visit_Call(self, node: ast.Call) -> Elem:
        func = node.func
        if not isinstance(func, ast.Name):
            self.fail("method calls are not supported; only calls of a function name", node)
        name = func.id
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                self.fail("starred arguments ('*a') are not supported", arg)
        keywords: dict[str, ast.AST] = {}
        for kw in node.keywords:
            if kw.arg is None:
                self.fail("keyword unpacking ('**kwargs') is not supported", kw.value)
            if kw.arg in keywords:
                self.fail(f"keyword argument {kw.arg!r} repeated", kw)
            keywords[kw.arg] = kw
        elementwise_extremum = name in ("max", "min") and len(node.args) > 1
        if name in TENSOR_FUNCTIONS and not elementwise_extremum:
            return self.tensor_call(node, name, keywords)
        if name in scalar.FUNCTIONS:
            return self.scalar_call(node, name, keywords)
        if name in families.SPELLINGS:
            return self.family_call(node, name, keywords)
        if name in _CONSTANTS:
            self.fail(f"{name!r} is a constant, not a function", func)
        known = TENSOR_FUNCTIONS | scalar.FUNCTIONS | set(families.SPELLINGS)
        self.fail(f"unknown function {name!r}{did_you_mean(name, known)}", func)

    def scalar_call(self, node: ast.Call, name: str, keywords: dict[str, ast.AST]) -> Elem:
        positional = list(node.args)
        spec = FUNCTION_SPECS[name]
        for key, kw in keywords.items():
            if key in spec.keywords and len(positional) == spec.min_args:
                positional.append(kw.value)  # type: ignore[attr-defined]
            else:
                self.fail(f"{name}() got an unexpected keyword argument {key!r}", kw)
        if len(positional) > scalar.LIMITS.get("max_args", 20):
            self.fail(f"{name}() has too many arguments (limit max_args)", node)
        condition = None
        if name == "where" and positional:
            condition, sides = condition_pattern(positional[0], _COMPARE, self.fail)
            positional = [*sides, *positional[1:]]
        if spec.constant:  # arguments that must be numbers (heaviside's value at 0)
            return self.constant_call(node, name, spec, positional)
        try:
            template = _template(name, len(positional), condition)
        except ParseError as exc:
            self.fail(exc.reason, node.func)
        values = [self.build(arg) for arg in positional]
        shape = broadcast(name, *(v.shape for v in values), where=self.where(node))
        if all(v.expr.is_number for v in values):
            self.fail(f"this {name}() is constant only after cancelling variables; "
                      "write the constant directly", node)
        replacements = {sp.Symbol(f"a{i}", real=True): v.expr for i, v in enumerate(values)}
        return self.checked(template.xreplace(replacements), shape, node)

    def constant_call(self, node: ast.Call, name: str, spec: FunctionSpec,
                      positional: list[ast.AST]) -> Elem:
        """A function some of whose arguments must be numbers: a template of symbols would fail
        its check, so it is built from the arguments themselves (plan P14)."""
        if not spec.min_args <= len(positional) <= (spec.max_args or len(positional)):
            self.fail(f"{name}() takes {spec.usage} ({len(positional)} given)", node.func)
        values = [self.build(arg) for arg in positional]
        refused = spec.check(*(v.expr for v in values))
        if refused is not None:
            self.fail(refused[1], positional[refused[0]])
        shape = broadcast(name, *(v.shape for v in values), where=self.where(node))
        if all(v.expr.is_number for v in values):
            self.fail(f"this {name}() is constant only after cancelling variables; "
                      "write the constant directly", node)
        return self.checked(spec.build(*(v.expr for v in values)), shape, node)

    def family_call(self, node: ast.Call, name: str, keywords: dict[str, ast.AST]) -> Elem:
        """A call of a family operation (:mod:`symdiff.tensor.families`): arrays are
        expressions, the other arguments literals (ints, tuples, strings, booleans)."""
        kw = {k: getattr(v, "value", v) for k, v in keywords.items()}

        def static(arg: ast.AST) -> Any:
            if (isinstance(arg, ast.Name) and naming.CONSTANT.match(arg.id)
                    and len(self.shapes.get(arg.id, ())) == 1):  # take(x, _c0): bound positions
                return gather.BoundIndex(arg.id, self.shapes[arg.id][0])
            try:
                return ast.literal_eval(arg)
            except ValueError:
                self.fail(f"{name}(): expected a constant (a number, tuple or string)", arg)

        def unpack(arg: ast.AST) -> Any:
            return list(arg.elts) if isinstance(arg, ast.List | ast.Tuple) else arg

        try:
            built = families.call(
                families.SPELLINGS[name], self.b, tuple(node.args), kw,
                array=lambda arg: self.tensor(self.build(arg)), static=static,
                where=self.where(node), unpack=unpack,
            )
        except (ParseError, ShapeError):
            raise
        except SymdiffError as exc:
            self.fail(str(exc), node.func)
        return self.elem(built)

    def tensor_call(self, node: ast.Call, name: str, keywords: dict[str, ast.AST]) -> Elem:
        allowed = {
            "softmax": {"axis"}, "transpose": {"axes"}, "repeat": {"axis"}, "reshape": set(),
        }.get(name, {"axis", "keepdims"})
        for key, kw in keywords.items():
            if key not in allowed:
                self.fail(f"{name}() got an unexpected keyword argument {key!r}", kw)
        arity = {"transpose": (1, 2), "reshape": (2, 2), "repeat": (2, 2)}.get(name, (1, 1))
        if not arity[0] <= len(node.args) <= arity[1]:
            usage = {"transpose": "(a) or (a, axes)", "reshape": "(a, shape)",
                     "repeat": "(a, repeats, axis=k)"}.get(name, "(a, axis=...)")
            self.fail(f"{name}() takes {usage}; {len(node.args)} positional arguments given",
                      node.func)
        value = self.tensor(self.build(node.args[0]))
        where = self.where(node)
        kw = {k: getattr(v, "value", v) for k, v in keywords.items()}
        if name in REDUCTIONS:
            axis = self.axes(kw["axis"]) if "axis" in kw else None
            keepdims = self.boolean(kw["keepdims"]) if "keepdims" in kw else False
            return self.elem(self.b.reduce(name, value, axis, keepdims, where))
        if name == "softmax":
            axis = self.integer(kw["axis"]) if "axis" in kw else -1
            return self.elem(self.b.softmax(value, axis, where))
        if name == "transpose":
            perm_node = node.args[1] if len(node.args) > 1 else kw.get("axes")
            perm = None if perm_node is None else self.int_tuple(perm_node)
            return self.elem(self.b.transpose(value, perm, where))
        if name == "reshape":
            return self.elem(self.b.reshape(value, self.shape_literal(node.args[1]), where))
        if "axis" not in kw:
            self.fail("repeat() needs axis=k", node)
        repeats = self.dim(node.args[1])
        return self.elem(self.b.repeat(value, repeats, self.integer(kw["axis"]), where))


def _describe(node: ast.AST) -> str:
    names = {ast.Lambda: "lambda", ast.IfExp: "'a if c else b'", ast.NamedExpr: "':='",
             ast.Dict: "a dict", ast.Set: "a set", ast.List: "a list", ast.Tuple: "a tuple",
             ast.ListComp: "a comprehension", ast.GeneratorExp: "a generator",
             ast.JoinedStr: "an f-string", ast.Starred: "'*'"}
    return names.get(type(node), type(node).__name__)


def parse_tensor(text: object, shapes: dict[str, Shape], builder: Builder) -> Node:
    """Parse ``text`` into a tensor node of ``builder``, checking shapes from ``shapes``."""
    if not isinstance(text, str):
        raise ParseError(
            f"tensor expressions must be strings, not {type(text).__module__}."
            f"{type(text).__qualname__}"
        )
    limit = scalar.LIMITS.get("max_length", 10_000)
    if len(text) > limit:
        raise ParseError(f"expression is longer than {limit} characters (limit max_length)",
                         text, limit)
    if not text.strip():
        raise ParseError("empty expression", text, 0)
    src = scalar.scan(text)
    try:
        tree = ast.parse(src.transformed, mode="eval")
    except SyntaxError as exc:
        raise scalar.syntax_error(exc, src) from None
    except (RecursionError, MemoryError, ValueError, OverflowError):
        raise ParseError("expression is too deeply nested or too long for Python's parser",
                         text, 0) from None
    scalar.check_tree(tree, src)
    parser = _Parser(src, shapes, builder)
    parser.mark_constants(tree.body)
    try:
        return parser.tensor(parser.build(tree.body))
    except RecursionError:
        raise ParseError("expression is too complex to build", text, 0) from None


__all__ = ["TENSOR_FUNCTIONS", "parse_tensor"]
