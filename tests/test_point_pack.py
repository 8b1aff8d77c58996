"""The packed point path (:mod:`symdiff.codegen.pack`): at one point of many names, alike
lines computed as NumPy vector operations on one register. Checked against ``sympy.diff`` and
the array path on random programs of alike and unlike lines (edge lines, repeated symbols,
constants that differ per line, integer powers, exp/log/sin), chains (running products), nested
results, poles; that the cost model chooses it for many names and not for few (the source, never
a time); that the verifier accepts it and refuses what it does not write."""

from __future__ import annotations

import re

import numpy as np
import pytest
import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import symdiff as sd
from symdiff.codegen import pack
from symdiff.codegen.printer import CodePrinter
from symdiff.runtime import _at_packed
from symdiff.verify import VerificationError, check_module


@pytest.fixture
def packed(monkeypatch):
    """Every elementwise build takes the packed point path where it can."""
    monkeypatch.setattr(pack, "FORCE", True)


def _names(n: int) -> list[str]:
    return [f"x{i}" for i in range(n)]


def _check(text: str, names: list[str], point: np.ndarray, *, rtol: float = 1e-12) -> None:
    """``sd.grad`` at ``point`` on the packed path: 0-d float64 arrays in wrt order, equal to
    ``sympy.diff`` of the text and to the array path (up to the order of long sums)."""
    g = sd.grad(text, wrt=names, cache=False)
    assert "return _at_packed(_packed, (" in g.source
    got = g(**{n: float(v) for n, v in zip(names, point, strict=True)})
    assert len(got) == len(names)
    assert all(type(a) is np.ndarray and a.shape == () and a.dtype == np.float64 for a in got)
    arrays = g(**{n: np.array([v, v]) for n, v in zip(names, point, strict=True)})
    symbols = sp.symbols(names, real=True)
    expr = sp.sympify(text, locals=dict(zip(names, symbols, strict=True)))
    reference = sp.lambdify(symbols, [sp.diff(expr, s) for s in symbols], "numpy")
    want = np.array(reference(*point), dtype=float)
    scale = 1 + np.abs(want)
    np.testing.assert_allclose(np.stack(got), want, rtol=rtol, atol=rtol * scale.max())
    np.testing.assert_allclose(np.stack(got), np.stack(arrays)[:, 0], rtol=rtol,
                               atol=rtol * scale.max())


#: Term families, each a function of (i, j, c): names x_i, x_j and an int constant c.
TERMS = [
    lambda i, j, c: f"{c}*x{i}*x{j}",
    lambda i, j, c: f"exp({c}*x{i})/{abs(c) + 1}",
    lambda i, j, c: f"log(1 + x{i}**2)*{c}",
    lambda i, j, c: f"sin(x{i})*x{j}",
    lambda i, j, c: f"(x{i} - {c})**3",
    lambda i, j, c: f"x{i}*x{i}*x{j} + {c}",
    lambda i, j, c: f"100*(x{j} - x{i}**2)**2 + (1 - x{i})**2",
    lambda i, j, c: f"x{j}/(x{i}**2 + {abs(c) + 1})",
    lambda i, j, c: f"erf(x{i})*sqrt(1 + x{j}**2)",
    lambda i, j, c: f"tanh({c}*x{i} + x{j})",
]


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    n=st.integers(8, 16),
    families=st.lists(st.integers(0, len(TERMS) - 1), min_size=1, max_size=2),
    constants=st.lists(st.integers(-5, 5).filter(bool), min_size=24, max_size=24),
    odd=st.integers(0, len(TERMS) - 1),
    seed=st.integers(0, 2**16),
)
def test_random_programs_of_alike_and_unlike_lines_match_sympy_and_the_array_path(
        n, families, constants, odd, seed):
    """Alike terms over consecutive names (their first and last differ: edge lines), constants
    that differ per line, one unlike term on its own; fractional powers too (``sqrt``'s
    derivative), which the plain point path leaves to NumPy scalars."""
    pack.FORCE = True
    try:
        terms = [TERMS[f](i, (i + 1) % n, constants[i]) for f in families for i in range(n)]
        terms.append(TERMS[odd](0, n - 1, 7))
        rng = np.random.default_rng(seed)
        _check(" + ".join(terms), _names(n), rng.uniform(0.5, 1.5, n))
    finally:
        pack.FORCE = None


def test_a_product_of_names_accumulates_its_prefix_and_suffix_products(packed):
    """The gradient's prefix and suffix products are chains: one running product each, bit
    for bit the products of the plain path (NumPy accumulates in the same order)."""
    n = 30
    text = "*".join(_names(n))
    g = sd.grad(text, wrt=_names(n), cache=False)
    assert g.source.count("_np.multiply.accumulate(") == 2
    point = np.random.default_rng(4).uniform(0.9, 1.1, n)
    got = np.stack(g(*point[[int(a[1:]) for a in g.args]].tolist()))
    arrays = np.stack(g(**{f"x{i}": np.array([v]) for i, v in enumerate(point)}))[:, 0]
    np.testing.assert_array_equal(got, arrays)
    want = [np.prod(np.delete(point, i)) for i in range(n)]
    np.testing.assert_allclose(got, want, rtol=1e-13)


def test_a_chain_of_one_repeated_leaf_accumulates_a_vector(packed):
    """``t_k = t_{k-1}*a`` reads the same register element every line: the running product
    still gathers a vector of them (a scalar would not accumulate)."""
    a, b = sp.symbols("a b", real=True)
    chain = sp.symbols("_t0:6")
    lines = [(chain[0], a * b)] + [(chain[k], chain[k - 1] * a) for k in range(1, 6)]
    made = pack.packed_point(lines, [chain[5], chain[2] + b], [0, 1], ["a", "b"],
                             CodePrinter)
    assert made is not None
    code, _ = made
    assert "_np.multiply.accumulate(" in "\n".join(code.body)
    namespace = {"_np": np}
    exec("\n".join([*code.constants, code.source("f")]), namespace)
    got = _at_packed(namespace["_packed"], (1.5, 0.5), code.size, 2)
    assert got == (1.5**6 * 0.5, 1.5**3 * 0.5 + 0.5)


def test_long_sums_reduce_and_a_quadratic_form_gathers_its_coefficients(packed):
    n = 12
    rng = np.random.default_rng(0)
    a = rng.integers(-9, 10, size=(n, n))
    text = " + ".join(f"{int(a[i, j])}*x{i}*x{j}" for i in range(n) for j in range(n)
                      if a[i, j])
    g = sd.grad(text, wrt=_names(n), cache=False)
    assert "_np.add.reduceat(" in g.source
    _check(text, _names(n), rng.uniform(-1, 1, n))
    _check("log(" + " + ".join(f"exp(x{i})" for i in range(n)) + ")", _names(n),
           rng.uniform(-1, 1, n))


def test_value_and_grad_keeps_its_nesting_and_float64_scalars_take_the_packed_path(packed):
    n = 10
    text = " + ".join(f"{i + 1}*(x{i} - x{(i + 1) % n})**2" for i in range(n))
    vg = sd.value_and_grad(text, wrt=_names(n), cache=False)
    assert "_at_packed(" in vg.source
    point = np.random.default_rng(1).uniform(-1, 1, n)
    args = np.asarray(point[[int(a[1:]) for a in vg.args]])
    value, grads = vg(*args)  # NumPy float64 scalars
    value0, grads0 = vg(*(np.asarray(v) for v in args))  # 0-d arrays: the array path
    assert type(value) is np.ndarray and value.shape == () and type(grads) is tuple
    np.testing.assert_allclose(value, value0, rtol=1e-13)
    np.testing.assert_allclose(np.stack(grads), np.stack(grads0), rtol=1e-13, atol=1e-13)
    one = sd.grad(text, wrt="x3", cache=False)  # one output: one 0-d array
    got = one(*args)
    assert type(got) is np.ndarray and got.shape == ()
    np.testing.assert_allclose(got, grads0[3], rtol=1e-13)


def test_poles_give_numpy_s_values_not_exceptions(packed):
    n = 8
    text = " + ".join(f"1/x{i}" for i in range(n))
    g = sd.grad(text, wrt=_names(n), cache=False)
    assert "_at_packed(" in g.source
    with np.errstate(divide="ignore"):
        got = g(*([0.0] + [1.0] * (n - 1)))
    assert got[0] == -np.inf and got[1] == -1.0


def test_the_cost_model_packs_many_names_and_not_a_few():
    """The source says which path a build took (never a time)."""
    def rosenbrock(n):
        return " + ".join(f"100*(x{i + 1} - x{i}**2)**2 + (1 - x{i})**2" for i in range(n - 1))

    few = sd.grad(rosenbrock(4), wrt=_names(4), cache=False).source
    many = sd.grad(rosenbrock(60), wrt=_names(60), cache=False).source
    assert "_elementwise(_formulas, (x0, x1, x2, x3), threads=threads)" in few
    assert "_packed" not in few
    assert "_at_packed(_packed" in many and "def _packed(_r):" in many
    assert "floats=False" in many
    # the register of 60 inputs in natural order, the alike lines as slices of it
    assert "(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11," in many
    assert "_r[1:60]" in many and "_r[0:59]" in many


def _leaves(tree, found):
    for item in tree:
        _leaves(item, found) if type(item) is tuple else found.append(item)
    return found


def test_at_packed_nests_the_outputs_as_told():
    def packed(r):
        r[3:6] = r[0:3] * 2
        return r[3:6]

    for nest, want in ((3, (2.0, 4.0, 6.0)), ((0, 2), (2.0, (4.0, 6.0))),
                       ((1, (0, 1)), ((2.0,), (4.0, (6.0,))))):
        got = _at_packed(packed, (1.0, np.float64(2.0), 3.0), 6, nest)
        assert got == want
        flat = _leaves(got, [])
        assert all(type(a) is np.ndarray and a.shape == () for a in flat)
        flat[0][()] = 5.0  # each output its own element, writable
        assert flat[1] == 4.0
    single = _at_packed(lambda r: r[0:1] * 3, (2.0,), 1, 0)
    assert type(single) is np.ndarray and single.shape == () and single == 6.0


# -- the verifier ---------------------------------------------------------------------------------
def _packed_module(packed_body: str, constants: str = "_ix0 = _np.array([1, 0])",
                   call: str = "_at_packed(_packed, (x, y), 4, 2)") -> str:
    return (
        "import numpy as _np\nfrom symdiff.runtime import _at_packed, _elementwise\n\n"
        f"{constants}\n\n\ndef grad_f(x, y, *, threads=None):\n"
        "    if (x.__class__ is float or x.__class__ is _np.float64) and "
        "(y.__class__ is float or y.__class__ is _np.float64):\n"
        f"        return {call}\n"
        "    return _elementwise(_formulas, (x, y), threads=threads, floats=False)\n\n\n"
        "def _formulas(x, y, _out=(None, None)):\n    return (y, x)\n\n\n"
        f"def _packed(_r):\n{packed_body}\n"
    )


GOOD = "    _r[2:4] = _np.exp(_r[_ix0])*2.5\n    return _r[2:4]"


def test_the_verifier_accepts_the_packed_path():
    check_module(_packed_module(GOOD))
    check_module(_packed_module(
        "    _r[2:3] = _np.add.reduceat(_r[0:2], _ix0)\n"
        "    _r[3:5] = _np.multiply.accumulate(_r[1::-1])\n    return _r[_ix0]"))
    # stores with ``out=`` a run of the register, and 0-d constants
    check_module(_packed_module(
        "    _np.subtract(_r[0:2] * _cv1, _np.exp(_r[_ix0]), out=_r[2:4])\n"
        "    _np.exp(_r[2:4], out=_r[4:6])\n"
        "    _np.multiply.accumulate(_r[0:2], out=_r[6:8])\n    return _r[4:8]",
        "_ix0 = _np.array([1, 0])\n_cv1 = _np.array(200.0)"))


OUT = "    _np.subtract(_r[0:2], 2.5, out={})\n    return _r[2:4]"


@pytest.mark.parametrize("body, constants", [
    (OUT.format("x"), None),  # out= only a run of the register: never an argument
    (OUT.format("_r[_ix0]"), None),
    (OUT.format("_r[2]"), None),
    (OUT.format("_r"), None),
    ("    _np.subtract(_r[0:2], 2.5, out=_r[2:4], where=x)\n    return _r[2:4]", None),
    ("    _np.subtract(out=_r[2:4])\n    return _r[2:4]", None),
    ("    _np.save(_r[0:2], out=_r[2:4])\n    return _r[2:4]", None),  # only allowed functions
    ("    print(_r[0:2], out=_r[2:4])\n    return _r[2:4]", None),
    ("    _np.add(_np.load(_r[0:2]), 1, out=_r[2:4])\n    return _r[2:4]", None),  # operands too
    ("    _r[0:2].fill(1)\n    return _r[2:4]", None),
    (GOOD, "_ix0 = _np.array([1, 0])\n_cv1 = _np.array(x)"),  # a 0-d constant is a number
    (GOOD, "_ix0 = _np.array([1, 0])\n_cv1 = _np.array('a')"),
])
def test_the_verifier_refuses_stores_and_constants_the_packed_path_does_not_write(body,
                                                                                   constants):
    with pytest.raises(VerificationError):
        check_module(_packed_module(body, constants or "_ix0 = _np.array([1, 0])"))


def test_vector_stores_compute_into_the_register_and_integers_are_0_d_constants(packed):
    """A vector group's last operation writes into its run (``out=``), a single value is
    assigned; an integer of a vector (not a product's sign) is one shared 0-d float64
    constant, an exponent stays a literal; the values stay those of ``sympy.diff``."""
    n = 12
    text = " + ".join(f"100*(x{i + 1} - x{i}**2)**2 + (1 - x{i})**2" for i in range(n - 1))
    source = sd.grad(text, wrt=_names(n), cache=False).source
    packed_body = source[source.index("def _packed(_r):"):]
    packed_body = packed_body.split("\n\n\n")[0]
    assert "out=_r[" in packed_body and "_r[0]" in packed_body
    constants = [line for line in source.splitlines() if line.startswith("_cv")]
    assert "_cv0 = _np.array(200.0)" in constants
    assert len(constants) == len({line.split(" = ")[1] for line in constants})  # shared
    assert re.search(r"\*\* ?2\b", packed_body) and not re.search(r"\*\* ?_cv", packed_body)
    _check(text, _names(n), np.random.default_rng(3).uniform(0.5, 1.5, n))


@pytest.mark.parametrize("body, constants, call", [
    ("    _t = _r[0:2]\n    return _t", None, None),  # stores only into runs of _r
    ("    _r[2:4] = _r[_ix9]\n    return _r[2:4]", None, None),  # an unknown constant
    ("    _r[2:4] = _r[[0, 1]]\n    return _r[2:4]", None, None),  # a list index
    ("    _r[2:4] = _np.load(_r)\n    return _r[2:4]", None, None),
    ("    _r[2:4] = _r[0:2].sum()\n    return _r[2:4]", None, None),
    ("    _r[2:4] = _r[0:2]", None, None),  # no return
    (GOOD, "_ix0 = _np.array(['a'])", None),  # constants are numbers
    (GOOD, "_ix0 = _np.array([1, 0], dtype=object)", None),
    (GOOD, "_ix0 = _np.array(range(2))", None),
    (GOOD, "_ix0 = _np.array([1, 0])\n_ix0 = _np.array([0, 1])", None),
    (GOOD, None, "_at_packed(print, (x, y), 4, 2)"),
    (GOOD, None, "_at_packed(_packed, (x, x), 4, 2)"),  # every parameter once
    (GOOD, None, "_at_packed(_packed, (x, y), n, 2)"),
    (GOOD, None, "_at_packed(_packed, (x, y), 4, 'a')"),
])
def test_the_verifier_refuses_what_the_packed_path_does_not_write(body, constants, call):
    source = _packed_module(body, constants or "_ix0 = _np.array([1, 0])",
                            call or "_at_packed(_packed, (x, y), 4, 2)")
    with pytest.raises(VerificationError):
        check_module(source)


@pytest.mark.parametrize("code, rewritten", [
    ("_r[0:2]*_r[2:4] - 2.5", "_np.subtract(_r[0:2] * _r[2:4], 2.5, out=_r[4:6])"),
    ("1/_r[0:2]", "_np.divide(1, _r[0:2], out=_r[4:6])"),
    ("-_r[0:2]", "_np.negative(_r[0:2], out=_r[4:6])"),
    ("_np.exp(_r[0:2])", "_np.exp(_r[0:2], out=_r[4:6])"),
    ("_np.arctan2(_r[0:2], _r[2:4])", "_np.arctan2(_r[0:2], _r[2:4], out=_r[4:6])"),
    ("_np.multiply.accumulate(_r[1:3])", "_np.multiply.accumulate(_r[1:3], out=_r[4:6])"),
    ("_np.add.reduceat(_r[0:4], _ix0)", "_np.add.reduceat(_r[0:4], _ix0, out=_r[4:6])"),
    ("_r[0:2]**2", None),  # NumPy squares x**2 quicker than power
    ("_np.sinc(_r[0:2])", None),  # not a ufunc
    ("_erf(_r[0:2])", None),  # a helper
    ("_r[0:2]", None),
])
def test_a_store_computes_its_last_ufunc_into_the_run_with_the_same_values(code, rewritten):
    from symdiff.codegen.store import store

    def special_erf(x):
        return np.tanh(x)  # any function: the store leaves a helper's call as it is

    statement = store("_r[4:6]", code)
    assert statement == (rewritten or f"_r[4:6] = {code}")
    values = []
    for text in (statement, f"_r[4:6] = {code}"):
        namespace = {"_np": np, "_erf": special_erf, "_ix0": np.array([0, 2]),
                     "_r": np.array([0.3, 1.7, -0.4, 2.2, 0.0, 0.0])}
        exec(text, namespace)
        values.append(namespace["_r"])
    assert values[0][4:].all()  # written
    np.testing.assert_array_equal(values[0], values[1])
