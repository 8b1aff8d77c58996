"""Simplification policy and common-subexpression elimination. Pure functions of SymPy trees.

Two audiences: people read :func:`simplify_for_people` (SymPy's ``simplify``, each of its phases
bounded by a :class:`Budget` of counts, so that no expression can stall a build); the machine
gets :func:`stable_forms` (exact rewrites to numerically stable functions),
:func:`zero_power_logs` (``u**v*log(u)`` is 0 where ``u**v`` is 0) and
:func:`shared_subexpressions` (CSE across every output at once, with deterministic temporary
names ``_t0, _t1, ...``).

Modules: ``budget`` (:class:`Budget` and the counts it limits), ``phases``
(:func:`simplify_for_people`: SymPy's phases within the budget), ``stable`` (:func:`stable_forms`
and :data:`STABLE_REWRITES`), ``zero_power`` (:func:`zero_power_logs`) and ``cse``
(:func:`shared_subexpressions`); ``measure`` (:func:`count_ops`: SymPy's measure, linear in the
DAG).
"""

from __future__ import annotations

from .budget import (
    SIMPLIFY_MAX_OPS,
    Budget,
    expansion_terms,
    operation_nodes,
    own_free_symbols,
    polynomial_degree,
)
from .cse import TEMP_PREFIX, shared_subexpressions
from .measure import count_ops, fraction
from .phases import simplify_for_people
from .stable import STABLE_REWRITES, stable_forms
from .zero_power import zero_power_log, zero_power_logs

__all__ = [
    "SIMPLIFY_MAX_OPS",
    "STABLE_REWRITES",
    "TEMP_PREFIX",
    "Budget",
    "count_ops",
    "expansion_terms",
    "fraction",
    "operation_nodes",
    "own_free_symbols",
    "polynomial_degree",
    "shared_subexpressions",
    "simplify_for_people",
    "stable_forms",
    "zero_power_log",
    "zero_power_logs",
]
