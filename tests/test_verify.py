"""Generated code is checked against what the templates can produce before it runs."""

from __future__ import annotations

import pathlib

import pytest

import symdiff as sd
from symdiff import cache
from symdiff.verify import VerificationError, check_module

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"

BASE = sd.grad("sin(x)*exp(y)/(1 + x**2) + erf(x)", wrt=["x", "y"]).source


@pytest.mark.parametrize("path", sorted(GOLDEN.glob("*.py")), ids=lambda p: p.stem)
def test_every_golden_module_passes(path):
    check_module(path.read_text())


@pytest.mark.parametrize(
    "expr",
    [
        "max(x, y, 0)*relu(z) + where(x > y, x**2, log(1 + y**2))",
        "gamma(x) + loggamma(y) + atan2(y, x) + sigmoid(x*y) + softplus(x)",
    ],
)
@pytest.mark.parametrize("mode", ["forward", "reverse"])
def test_generated_modules_pass(expr, mode):
    check_module(sd.value_and_grad(expr, mode=mode).source)
    check_module(sd.hessian(expr, wrt=["x", "y"]).source)
    check_module(sd.jacobian([expr, "x*y"], wrt=["x", "y"], mode=mode).source)


SIGNATURE = "def grad_f(x, y, *, threads=None):"
#: The one import of the runtime helpers.
IMPORT = "from symdiff.runtime import _elementwise"
#: The public function's body: the formulas handed to the runtime.
CALL = "    return _elementwise(_formulas, (x, y), threads=threads, floats=False)\n"


def _inject_into_formulas(line: str) -> str:
    marker = "    _t0 = "
    assert marker in BASE.split("def _formulas", 1)[1]
    head, formulas = BASE.split("def _formulas", 1)
    return head + "def _formulas" + formulas.replace(marker, f"    {line}\n{marker}", 1)


def _inject_into_function(line: str) -> str:
    assert CALL in BASE
    return BASE.replace(CALL, f"    {line}\n" + CALL, 1)


@pytest.mark.parametrize(
    "tampered",
    [
        "import os\n" + BASE,
        BASE.replace("import numpy as _np", "import numpy as np\nimport numpy as _np"),
        BASE + "\nprint('hello')\n",
        BASE + "\ndef grad_f2(x):\n    return x\n",
        BASE + "\ndef _erf(x):\n    return x\n",  # no helper is defined in a module
        BASE.replace(SIGNATURE, "@staticmethod\n" + SIGNATURE),
        BASE.replace(SIGNATURE, "def grad_f(x, y=1, *, threads=None):"),
        BASE.replace(SIGNATURE, "def grad_f(x, *y, threads=None):"),
        BASE.replace(SIGNATURE, "def grad_f(x, y, *, threads=1):"),
        BASE.replace(SIGNATURE, "def grad_f(x, y, *, threads=None, other=None):"),
        BASE.replace(SIGNATURE, "def grad_f(x, y, *, other=None):"),
        BASE.replace(SIGNATURE, "def grad_f(x, y, **threads):"),
        # the one import of runtime helpers, and nothing else
        BASE.replace(IMPORT, IMPORT + ", _in_blocks"),
        BASE.replace(IMPORT, IMPORT + " as _erf"),
        BASE.replace(IMPORT, IMPORT + "\n" + IMPORT),
        BASE.replace(IMPORT, "from symdiff.runtime import *"),
        BASE.replace(IMPORT, "from symdiff import runtime"),
        BASE.replace(IMPORT, "from .runtime import _elementwise"),
        BASE.replace(IMPORT, "from os import _elementwise"),
        BASE.replace(IMPORT, "from symdiff.runtime.blocks import _elementwise"),
        BASE.replace(IMPORT, "import symdiff.runtime"),
        # the formulas' parameter of where outputs go
        BASE.replace("_out=(None, None)", "_out=(None, print)"),
        BASE.replace("_out=(None, None)", "_out=None"),
        BASE.replace("_out=(None, None)", "_out=()"),
        BASE.replace("(x, y, _out=(None, None))", "(x, y=1, _out=(None, None))"),
        BASE.replace("(x, y, _out=(None, None))", "(x, _out=(None, None), y=(None,))"),
        BASE.replace(CALL, CALL.replace("threads=threads", "threads=open")),
        BASE.replace(CALL, CALL.replace("floats=False", "dtype=float")),
        BASE.replace(CALL, CALL.replace("_formulas", "print")),
        _inject_into_function("_t = _np.sin(x, out=x)"),
        _inject_into_function("_t = _np.sin(x, out=_out[0])"),
        _inject_into_formulas("_t = _np.sin(x, out=x)"),
        _inject_into_formulas("_t = _np.sin(x, out=_out)"),
        _inject_into_formulas("_t = _np.sin(x, out=_out[_t0])"),
        _inject_into_formulas("_t = _np.sin(x, out=_out[0:1])"),
        _inject_into_formulas("_t = _erf(x, out=_out[0])"),
        _inject_into_formulas("_t = _np.multiply"),
        _inject_into_formulas("_t = _np.multiply(x, x)"),
        _inject_into_formulas("_t = _np.multiply(x, x, out=x)"),
        _inject_into_formulas("_t = _np.multiply(x, x, out=_out[0], where=x)"),
        _inject_into_formulas("_t = x if _out is None else y"),
        _inject_into_formulas("if _out is None:\n        _t = x\n    else:\n        _t = y"),
        _inject_into_formulas("_out = (x, y)"),
        _inject_into_function("_t = open('/tmp/x', 'w')"),
        _inject_into_function("_t = __import__('os')"),
        _inject_into_function("_t = x.__class__"),
        _inject_into_function("_t = _np.load('/tmp/x')"),
        _inject_into_function("_t = eval('1')"),
        _inject_into_function("_t = exec"),
        _inject_into_function("_t = getattr(x, 'shape')"),
        _inject_into_function("_t = (lambda: 1)()"),
        _inject_into_function("_t = [i for i in x]"),
        _inject_into_function("_t = 'text'"),
        _inject_into_function("_t = x[0]"),
        _inject_into_function("_t = x // 2"),
        _inject_into_function("_t = _np.asarray(x, order='F')"),
        _inject_into_function("for _i in x: pass"),
        _inject_into_function("global _g"),
        _inject_into_function("_np.sin(x)"),
        _inject_into_function("del x"),
        _inject_into_function("x.shape = (1,)"),
        _inject_into_function("with _np.errstate(): pass"),
        _inject_into_function("_t = _elementwise"),
        _inject_into_function(
            "if x.__class__ is float:\n        return _elementwise(_formulas, (x, y))"),
        "def grad_f(x, y):\n    return x\n\ndef f(x):\n    return x\n",
        "this is not python",
    ],
)
def test_tampered_modules_are_refused(tampered):
    with pytest.raises(VerificationError):
        check_module(tampered)


def test_a_forged_cache_entry_with_a_valid_checksum_is_refused_and_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("SYMDIFF_CACHE_DIR", str(tmp_path / "cache"))
    cache.reset_store()
    from symdiff import pipeline
    from symdiff import request_index as warm

    g = sd.grad("x**2*y", wrt="x")
    canary = tmp_path / "canary"
    entry = cache.open_store().get("module", g.key)  # the recipe line, then the source
    call = "    return _elementwise("
    forged = entry.replace(call, f"    open({str(canary)!r}, 'w').write('ran')\n{call}")
    assert forged != entry
    cache.open_store().put("module", g.key, forged)  # the store computes a valid checksum
    pipeline.clear_memo()
    warm.forget()
    again = sd.grad("x**2*y", wrt="x")
    assert again(3.0, 2.0) == 12.0
    assert not canary.exists()
    assert "canary" not in again.source
    cache.reset_store()


def test_a_sum_of_thousands_of_terms_is_checked_without_recursion():
    terms = " + ".join(f"x*{i}" for i in range(2500))  # Python's own parser stops near 3,000
    source = (
        "import numpy as _np\n\n\ndef f(x):\n    x = _np.asarray(x)\n"
        f"    _t0 = {terms}\n    return _t0\n"
    )
    check_module(source)
    with pytest.raises(VerificationError, match="unexpected call"):
        check_module(source.replace("x*2499", "open(x)"))


def test_titles_print_long_sums_briefly_and_short_ones_in_full():
    import sympy as sp

    from symdiff.codegen.printer import brief_text

    x = sp.symbols("x0:40")
    assert brief_text(sum(x)) == "x0 + x1 + x10 + x11 + ...(36 more terms)"
    assert brief_text(x[0] + x[1] * x[2]) == "x0 + x1*x2"
    assert "more terms" in sd.grad(" + ".join(map(str, x))).source.splitlines()[0]


@pytest.mark.parametrize(
    "statement, ok",
    [("del _t0", True), ("del _t0, _t1", True), ("del x", False), ("del _np", False),
     ("del _t0[0]", False)],
)
def test_only_temporaries_may_be_deleted(statement, ok):
    source = (
        "import numpy as _np\n\n\ndef f(x):\n    x = _np.asarray(x)\n"
        f"    _t0 = x*2\n    _t1 = x*3\n    _t2 = _t0 + _t1\n    {statement}\n    return _t2\n"
    )
    if ok:
        check_module(source)
    else:
        with pytest.raises(VerificationError):
            check_module(source)


@pytest.mark.parametrize(
    "body, ok",
    [
        ("    _t0 = x*2\n    return _t0\n", True),
        ("    return _t0\n", False),  # never bound
        ("    _t0 = _np.sin(_t9)\n    return _t0\n", False),  # a name no statement binds
        ("    _t0 = _np.sin(_z0) + x\n    return _t0\n", False),
        ("    _t0 = x*2\n    _t0 = _t0 + x\n    return _t0\n", True),
    ],
)
def test_a_generated_name_is_bound_before_it_is_read(body, ok):
    """The emitter once printed ``_w_bar[1:] = _z0 + _z1`` without building ``_z0``: a name
    no statement binds, which Python looks up in the module's globals. (A local read before it
    is bound raises UnboundLocalError, which is loud: not checked.)"""
    source = f"import numpy as _np\n\n\ndef f(x):\n    x = _np.asarray(x)\n{body}"
    if ok:
        check_module(source)
    else:
        with pytest.raises(VerificationError, match="no statement binds it"):
            check_module(source)

