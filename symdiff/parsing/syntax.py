"""How Python syntax is described and grouped: the messages for refused constructs, operator and
comparison spellings, and which binary operators form one left-associative chain."""

from __future__ import annotations

import ast
from collections.abc import Callable

import sympy as sp

CONSTRUCTS: dict[type[ast.AST], str] = {
    ast.Attribute: "attribute access ('a.b') is not supported",
    ast.Subscript: "subscripts ('a[i]') need shapes= (the tensor layer)",
    ast.Slice: "slices are not supported",
    ast.Lambda: "lambda expressions are not supported",
    ast.ListComp: "list comprehensions are not supported",
    ast.SetComp: "set comprehensions are not supported",
    ast.DictComp: "dict comprehensions are not supported",
    ast.GeneratorExp: "generator expressions are not supported",
    ast.Starred: "starred expressions ('*a') are not supported",
    ast.JoinedStr: "f-strings are not supported",
    ast.FormattedValue: "f-strings are not supported",
    ast.NamedExpr: "assignment expressions (':=') are not supported",
    ast.IfExp: "conditional expressions ('a if c else b') are not supported; use where(c, a, b)",
    ast.Dict: "dicts are not supported",
    ast.List: "lists are not supported",
    ast.Tuple: "tuples are not supported; write a single expression",
    ast.Set: "sets are not supported",
    ast.Await: "'await' is not supported",
    ast.Yield: "'yield' is not supported",
    ast.YieldFrom: "'yield from' is not supported",
}

BIN_SYMBOLS: dict[type[ast.operator], str] = {
    ast.Add: "+",
    ast.Sub: "-",
    ast.Mult: "*",
    ast.Div: "/",
    ast.Pow: "**",
    ast.FloorDiv: "//",
    ast.Mod: "%",
    ast.MatMult: "@",
    ast.LShift: "<<",
    ast.RShift: ">>",
    ast.BitOr: "|",
    ast.BitAnd: "&",
    ast.BitXor: "^",
}
BIN_NOTES: dict[type[ast.operator], str] = {
    ast.MatMult: " (a matrix product needs shapes=: the tensor layer)",
    ast.FloorDiv: " (use '/')",
    ast.BitAnd: " (it joins comparisons in the condition of where(), each in parentheses: "
                "where((x > 0) & (y < 1), a, b))",
    ast.BitOr: " (it joins comparisons in the condition of where(), each in parentheses: "
               "where((x > 0) | (y < 1), a, b))",
}
CHAINS: dict[type[ast.operator], str] = {
    ast.Add: "additive",
    ast.Sub: "additive",
    ast.Mult: "multiplicative",
    ast.Div: "multiplicative",
    ast.FloorDiv: "multiplicative",
    ast.Mod: "multiplicative",
    ast.MatMult: "multiplicative",
}
COMPARISONS: dict[type[ast.cmpop], tuple[str, Callable[..., sp.Basic] | None]] = {
    ast.Lt: ("<", sp.Lt),
    ast.LtE: ("<=", sp.Le),
    ast.Gt: (">", sp.Gt),
    ast.GtE: (">=", sp.Ge),
    ast.Eq: ("==", None),
    ast.NotEq: ("!=", None),
    ast.Is: ("is", None),
    ast.IsNot: ("is not", None),
    ast.In: ("in", None),
    ast.NotIn: ("not in", None),
}
UNARY_SYMBOLS: dict[type[ast.unaryop], str] = {
    ast.USub: "-",
    ast.UAdd: "+",
    ast.Not: "not",
    ast.Invert: "~",
}
