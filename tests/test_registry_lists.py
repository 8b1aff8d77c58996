"""No symdiff module keeps a list of elementwise functions of its own.

Everything about an elementwise function lives in its registry row (symdiff/registry/); the
parser, the printer, verify, tracing, symdiff.math and the tensor emitter derive their tables
from the rows. A hand-written display such as ``{np.sin: sp.sin, np.cos: sp.cos, ...}`` or
``("relu", "sigmoid", "softplus")`` outside the registry is a second list that the next row
would have to be added to by hand, so this test reads every module with ``ast`` and fails on a
literal set, list, tuple or dict with three or more entries that name row functions, naming
``file:line``.

An entry names a row function when it is one of the rows' names (a string, ``sp.<Head>``,
``np.<ufunc>``, or a bare class name such as ``relu``), or is a tuple, list or call holding one
directly (``("sin", sp.sin)``, ``Spec("sin", sp.sin)``), so that tables of pairs are caught
too. Names that also mean structure are left out (:data:`STRUCTURAL`).
"""

from __future__ import annotations

import ast
import textwrap

from symdiff import registry as R
from symdiff.verify import STRUCTURAL_NUMPY_NAMES

from .conftest import ROOT

PACKAGE = ROOT / "symdiff"

#: Names that are not (only) row functions: the NumPy names of array structure and reductions
#: that generated code uses anyway (verify's structural allow-list: ``max``, ``min``, ``sum``,
#: ``where``, ``sqrt`` for any ``x**(1/2)``, the constants ``e``/``pi``, ...) and the grammar's
#: ``where``. ``maximum``/``minimum`` stay in: NumPy's reducing ufuncs name them, but only two.
STRUCTURAL = STRUCTURAL_NUMPY_NAMES | R.GRAMMAR | {"max", "min", "sqrt"}
#: The class names of the rows' SymPy nodes (``Max``, ``log1p``, ``relu``).
HEADS = frozenset(row.head.rpartition(":")[2] for row in R.ROWS if row.head)
#: Every name of a row function: string names, NumPy names (printed and traced), class names.
NAMES = (
    R.parse_names()
    | {name for row in R.ROWS for name in (row.ufunc, *row.traced) if name}
    | HEADS
) - STRUCTURAL
#: Displays allowed to name three or more row functions anyway, ``(path, line text)`` -> why.
#: Empty: every list the scan found has been replaced by a view of the rows. A justified
#: exception goes here with its reason; an entry the scan no longer finds fails the test.
ALLOWED: dict[tuple[str, str], str] = {
    ("symdiff/classroom/practice.py", 'SYLLABUS = ("sin", "cos", "tan", "exp", "log")'):
        "the functions of a first course that practice exercises use: a syllabus, which a new "
        "row must not extend",
    ("symdiff/teach/textbook.py", "TRIG_DEFINITIONS = {sp.tan: \"tan = sin/cos\", sp.sec: "
     "\"sec = 1/cos\", sp.csc: \"csc = 1/sin\","):
        "the definitions by sines and cosines a textbook states when it renames a quotient: "
        "the names a final form may bring in, not the functions symdiff knows",
}


def _name(node: ast.AST) -> str | None:
    """The row function ``node`` names by itself, if any."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if node.value in NAMES else None
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        return node.attr if node.attr in NAMES else None
    if isinstance(node, ast.Name):
        return node.id if node.id in HEADS - STRUCTURAL else None
    return None


def _entry(node: ast.AST | None) -> str | None:
    """The row function an entry of a display names: itself, or one of its direct parts."""
    if node is None:  # ``**spread`` in a dict
        return None
    if isinstance(node, ast.Tuple | ast.List):
        parts: list[ast.AST] = list(node.elts)
    elif isinstance(node, ast.Call):
        parts = [*node.args, *(k.value for k in node.keywords)]
    else:
        parts = []
    return next(filter(None, map(_name, [node, *parts])), None)


def _exempt(tree: ast.Module) -> set[int]:
    """Displays that are the value of ``__all__`` (a module's exports, not a table)."""
    return {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign | ast.AnnAssign)
        and any(
            isinstance(t, ast.Name) and t.id == "__all__"
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        )
    }


def own_lists(source: str) -> list[tuple[int, list[str]]]:
    """``(line, names)`` for each display in ``source`` with three or more entries that name
    row functions."""
    tree = ast.parse(source)
    exempt = _exempt(tree)
    found = []
    for node in ast.walk(tree):
        if id(node) in exempt:
            continue
        if isinstance(node, ast.Dict):
            entries = [_entry(k) or _entry(v) for k, v in zip(node.keys, node.values, strict=True)]
        elif isinstance(node, ast.Set | ast.List | ast.Tuple):
            entries = [_entry(e) for e in node.elts]
        else:
            continue
        names = [e for e in entries if e]
        if len(names) >= 3:
            found.append((node.lineno, names))
    return sorted(found)


def test_no_module_keeps_its_own_list():
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative.startswith("symdiff/registry/"):
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for line, names in own_lists("\n".join(lines)):
            found[(relative, lines[line - 1].strip())] = f"{relative}:{line}: {', '.join(names)}"
    offences = [where for key, where in found.items() if key not in ALLOWED]
    assert offences == [], "read these from the registry rows instead:\n" + "\n".join(offences)
    assert set(ALLOWED) <= set(found), "allowed lists that are gone: drop them from ALLOWED"


def test_the_scan_finds_lists_of_row_functions():
    source = textwrap.dedent(
        """
        UFUNCS = {np.sin: sp.sin, np.cos: sp.cos, np.add: operator.add, np.exp: sp.exp}
        NAMES = ("sin", "cosh", "relu")
        PAIRS = [("erf", f), ("erfc", g), ("gamma", h)]
        SPECS = [Spec("log", 1), Spec("exp", 2), Spec(name="tan")]
        KINKS = isinstance(e, (sp.Max, sp.Min, sp.Abs))
        CLASSES = {relu, sigmoid, softplus}
        STRUCTURE = ("max", "min", "sqrt", "where", "sum")
        TWO = {"sin": 1, "cos": 2}
        ARITHMETIC = {np.add: 1, np.multiply: 2, np.power: 3}
        MESSAGE = "sin, cos, tan"
        __all__ = ["sin", "cos", "tan"]
        """
    )
    assert own_lists(source) == [
        (2, ["sin", "cos", "exp"]),
        (3, ["sin", "cosh", "relu"]),
        (4, ["erf", "erfc", "gamma"]),
        (5, ["log", "exp", "tan"]),
        (6, ["Max", "Min", "Abs"]),
        (7, ["relu", "sigmoid", "softplus"]),
    ]


def test_the_names_cover_every_kind_of_row_name():
    assert {"sin", "arcsin", "log1p", "fabs", "fmax", "Max", "Heaviside", "relu"} <= NAMES
    assert not NAMES & {"max", "min", "sqrt", "where", "sum", "e", "pi"}
