"""The elementwise functions: one row each, holding everything about it (see the fields of Fn).

A row says which names a string may call the function by, which SymPy class its node is, its
derivative rule (as a student reads it), how it prints as NumPy code, which NumPy functions
tracing maps to it, whether tensor code may apply it in place, where it is smooth (for the
tests), and which numbers need care when parsing. The consumers read the rows: the rule table
(:data:`symdiff.engine.rules.RULES`), the printer, verify's allow-list and runtime's helper table,
the
parser, tracing (``trace.FUNCTIONS``/``UFUNCS``), :mod:`symdiff.math` and the tensor emitter;
``tests/test_registry.py`` checks that none keeps a list of its own.

The package's modules: :mod:`~symdiff.registry.schema` (what a row is: ``Fn``, ``Domain``, the
lazy namespaces, ``head_class``), :mod:`~symdiff.registry.rows` (the table ``ROWS``, the module
to read) and :mod:`~symdiff.registry.queries` (the views the consumers read: ``by_name``,
``numpy_names``, ``helper_dependencies``, ``markdown``, ...). Everything is importable from
``symdiff.registry``; ``python -m symdiff.registry markdown --write`` writes the docs' table
(docs/functions.md); :mod:`~symdiff.registry.checks` checks each row as it is made.

Importing this package needs the standard library only: SymPy, NumPy and
:mod:`symdiff.functions` are reached through lazy namespaces, and a row touches them only
inside a ``lambda``, so ``symdiff.math`` and ``symdiff.verify`` may read the table and stay
cheap to import.
"""


from .checks import RowError
from .queries import (
    GRAMMAR,
    arity,
    by_class_name,
    by_name,
    call_passes,
    helper_dependencies,
    in_place_ufuncs,
    instruction_ufuncs,
    keywords,
    markdown,
    numpy_names,
    parse_names,
    print_template,
    signature,
    standard_names,
    traced_numpy,
    traced_scipy,
    usage,
)
from .rows import ROWS, SIGMOID_CLIP
from .schema import Domain, Fn, Partials, build_fn, head_class, on, unary

__all__ = [
    "GRAMMAR",
    "ROWS",
    "SIGMOID_CLIP",
    "Domain",
    "Fn",
    "Partials",
    "RowError",
    "arity",
    "build_fn",
    "by_class_name",
    "by_name",
    "call_passes",
    "head_class",
    "helper_dependencies",
    "in_place_ufuncs",
    "instruction_ufuncs",
    "keywords",
    "markdown",
    "numpy_names",
    "on",
    "parse_names",
    "print_template",
    "signature",
    "standard_names",
    "traced_numpy",
    "traced_scipy",
    "unary",
    "usage",
]
