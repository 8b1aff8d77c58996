"""What a registry row must hold, checked when the row is made (at ``import symdiff``), so a row
with a missing or inconsistent field fails at once with an error that names the row and the
field, instead of a puzzling error elsewhere (or a wrong value) later.

Only what can be said without SymPy or NumPy is checked here (importing the registry needs the
standard library only); ``tests/test_registry.py`` and ``tests/test_registry_rows.py`` check the
rest (the partials against ``sympy.diff``, the printed code against the numbers).
"""

from __future__ import annotations

import re
import string
from typing import Any

#: The printer methods a row may name with ``method=``; each prints a call of the row's ufunc.
METHODS = frozenset({"nested", "heaviside", "sinc"})

_PARAM = re.compile(r"\*?[a-z][a-z0-9_]*(=None)?")


class RowError(TypeError):
    """A registry row (symdiff/registry/rows.py) lacks a field or has inconsistent ones."""


def row_label(row: Any) -> str:
    """How errors name a row: its first name, or its head for an internal node."""
    names = row.names if isinstance(row.names, tuple) else ()
    return names[0] if names and isinstance(names[0], str) else (row.head or "<unnamed>")


def template_indices(template: str) -> list[int]:
    """The argument positions ``{0}``, ``{1}``, ... a template prints, in order of appearance."""
    indices = []
    for _, field, spec, conversion in string.Formatter().parse(template):
        if field is None:
            continue
        if not field.isdigit() or spec or conversion:
            raise ValueError(f"{{{field}}} is not an argument position such as {{0}}")
        indices.append(int(field))
    return indices


def check_row(row: Any, head_modules: frozenset[str]) -> None:
    """Raise :class:`RowError` naming the row and the field when the row is not complete."""
    problem = _problem(row, head_modules)
    if problem is not None:
        field, why = problem
        raise RowError(
            f"registry row {row_label(row)!r} (symdiff/registry/rows.py): field {field}: {why}"
        )


def _problem(row: Any, head_modules: frozenset[str]) -> tuple[str, str] | None:
    names = row.names
    if not isinstance(names, tuple) or not all(
        isinstance(n, str) and n.isidentifier() and n.isascii() for n in names
    ):
        return "names", "must be a tuple of identifiers, e.g. ('sec',) (mind the comma)"
    if not isinstance(row.head, str) or row.head.rpartition(":")[0] not in head_modules:
        prefixes = ", ".join(repr(p + ":") for p in sorted(head_modules) if p)
        return "head", f"must be a SymPy class name, optionally prefixed by one of {prefixes}"
    params = row.params.split(", ") if isinstance(row.params, str) else [""]
    if not all(_PARAM.fullmatch(p) for p in params) or any(p.startswith("*") for p in params[:-1]):
        return "params", "must be like 'x', 'y, x', 'x, base=None' or 'a, b, *more'"
    least = sum(1 for p in params if "=" not in p and not p.startswith("*"))
    most = None if params[-1].startswith("*") else len(params)
    if row.head and (row.partials is None or not row.rule or not row.identity.startswith("d")):
        missing = "partials" if row.partials is None else "rule" if not row.rule else "identity"
        return missing, (
            "a row with a node of its own needs partials= (its derivative), rule= (the rule's "
            "name in derivations) and identity= (the rule as one line starting with 'd')"
        )
    if not row.head and row.partials is not None:
        return "partials", "a row without a node of its own (head '') is derived as what it builds"
    if sum(map(bool, (row.helper, row.template, row.method))) > 1:
        return "helper", "a row prints in one way: helper=, template= or method=, not several"
    if row.head and not (row.ufunc or row.helper or row.template):
        return "ufunc", "a row with a node needs a way to print: ufunc=, helper= or template="
    if not row.head and row.names and not row.identity:
        return "identity", "a row without a node of its own says what it is derived as, for the "
        "function table ('as the power `x**(1/2)`')"
    if row.method is not None and (row.method not in METHODS or not row.ufunc):
        return "method", f"must be one of {sorted(METHODS)}, with ufunc= set"
    if row.template is not None:
        try:
            indices = template_indices(row.template)
        except ValueError as error:
            return "template", str(error)
        if most is None or sorted(set(indices)) != list(range(most)):
            return "template", (
                f"must use each argument {{0}} .. {{{(most or 1) - 1}}} of params "
                f"{row.params!r} (got {row.template!r}); write the arguments bare: the printer "
                "brackets them where the template needs it"
            )
    if row.names and not (row.ufunc or row.helper or row.numeric):
        return "numeric", (
            f"symdiff.math.{names[0]} needs what it computes on numbers: give numeric= (a "
            "function of NumPy arrays), since the row has no ufunc= or helper= to call"
        )
    if row.helper_deps and not row.helper:
        return "helper_deps", "only a row with helper= has helpers that helper calls"
    if row.in_place and (not row.ufunc or row.helper or row.template or row.method):
        return "in_place", "only a row printed as its plain ufunc may apply it in place"
    if row.standard and not row.ufunc:
        return "standard", "is the Array API name of ufunc=, which the row lacks"
    if (row.traced or row.scipy) and not row.names:
        return "traced", "only a row with names may be the target of tracing"
    if bool(row.doc) != bool(names):
        return "doc", "every row with names (and only those) has doc= (symdiff.math's docstring)"
    if row.nesting not in (1, 2):
        return "nesting", "must be 1 or 2"
    domain = row.domain
    if domain is None or not isinstance(getattr(domain, "args", None), tuple):
        return "domain", "needs domain=on(...): an interval per argument, for the tests"
    if len(domain.args) < least or (most is not None and len(domain.args) != most):
        return "domain", f"needs one interval per argument of params {row.params!r}"
    if not all(isinstance(a, tuple) and len(a) == 2 and a[0] <= a[1] for a in domain.args):
        return "domain", "each interval is (low, high) with low <= high"
    fixed = {i for i, (lo, hi) in enumerate(domain.args) if lo == hi}
    if fixed != set(row.constant):
        return "constant", "lists exactly the arguments whose domain interval is a number (c, c)"
    if not set(row.int_args) <= set(row.constant):
        return "int_args", "only arguments listed in constant= may be printed as integers"
    return None
