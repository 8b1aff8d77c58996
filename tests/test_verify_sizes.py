"""The verifier bounds the sizes a generated module writes as constants: no allocation of a
constant shape beyond ``MAX_CONSTANT_ELEMENTS``, no repeated sequence, no huge packed
register; what the templates produce passes."""

from __future__ import annotations

import pytest

import symdiff as sd
from symdiff.verify import VerificationError, check_module
from symdiff.verify.sizes import MAX_CONSTANT_ELEMENTS

SHAPES = {"X": ("n", 3), "y": ("n",), "w": (3,)}
TENSOR = sd.grad("sum(log(1 + exp(-y * (X @ w))))", wrt="w", shapes=SHAPES).source
SCALAR = sd.grad("sin(x)*exp(y)/(1 + x**2)", wrt=["x", "y"]).source


def in_tensor(line: str) -> str:
    marker = "    _t0 = X @ w\n"
    assert marker in TENSOR
    return TENSOR.replace(marker, f"{marker}    {line}\n", 1)


def in_scalar(line: str) -> str:
    """``line`` in the formulas of an elementwise module, or (a ``return`` line) in place of its
    public function's call of ``_elementwise``."""
    call = "    return _elementwise(_formulas, (x, y), threads=threads)\n"
    assert call in SCALAR
    if line.startswith("return "):
        return SCALAR.replace(call, f"    {line}\n", 1)
    marker = "    _t0 = _np.exp(y)\n"
    assert marker in SCALAR
    return SCALAR.replace(marker, marker + f"    {line}\n", 1)


#: (a statement that passes, the same with a constant shape beyond the bound).
SIZED = [
    ("_t9 = _np.full((200, 200, 200), 1.0)", "_t9 = _np.full((20000, 20000, 20000), 1.0)"),
    ("_t9 = _np.zeros((1000, 1000, 10))", "_t9 = _np.zeros((100000, 100000, 10))"),
    ("_t9 = _np.empty((2**10, 2**10))", "_t9 = _np.empty((2**20, 2**20))"),
    ("_t9 = _np.zeros(10**6)", "_t9 = _np.zeros(10**12)"),
    ("_t9 = _np.eye(1000)", "_t9 = _np.eye(10**6)"),
    ("_t9 = _np.eye(700, 700)", "_t9 = _np.eye(70000, 70000)"),
    ("_t9 = _np.repeat(w, 10)", "_t9 = _np.repeat(w, 10**10)"),
    ("_t9 = _np.broadcast_to(w, (10, 3))", "_t9 = _np.broadcast_to(w, (10**6, 10**6))"),
    ("_t9 = _np.full((_t0, 100, 100), 1.0)", "_t9 = _np.full((_t0, 100000, 100000), 1.0)"),
]


@pytest.mark.parametrize(("fine", "huge"), SIZED)
def test_huge_constant_shapes_are_refused(fine, huge):
    check_module(in_tensor(fine))
    with pytest.raises(VerificationError, match="constant shape of more than"):
        check_module(in_tensor(huge))


@pytest.mark.parametrize("line", ["_t9 = _np.full((20000,)*3, 1.0)", "_t9 = (3,) * 4",
                                  "_t9 = 4 * (3,)", "_t9 = _np.zeros([0] * 2)"])
def test_a_repeated_sequence_is_refused(line):
    with pytest.raises(VerificationError):
        check_module(in_tensor(line))


@pytest.mark.parametrize(("fine", "huge"), [
    ("_t9 = _np.zeros(10**6)", "_t9 = _np.zeros(10**12)"),
    ("_t9 = _np.zeros((2**20,))", "_t9 = _np.zeros((2**40,))"),
    ("return _elementwise(_formulas, (x, y), threads=threads, leading=(200, 200, 200))",
     "return _elementwise(_formulas, (x, y), threads=threads, leading=(20000, 20000, 20000))"),
])
def test_huge_constant_shapes_are_refused_in_elementwise_modules(fine, huge):
    check_module(in_scalar(fine))
    with pytest.raises(VerificationError, match="constant shape of more than"):
        check_module(in_scalar(huge))


def test_a_huge_packed_register_is_refused():
    names = [f"x{i}" for i in range(60)]
    source = sd.grad(" + ".join(f"exp({n})" for n in names)).source
    call = next(line for line in source.splitlines() if "_at_packed(_packed, (" in line)
    size = call.split("), ", 1)[1].split(",", 1)[0]
    check_module(source)
    with pytest.raises(VerificationError):
        check_module(source.replace(call, call.replace(f"), {size},", f"), {2**40},", 1)))


def test_tuples_that_are_not_shapes_are_not_bounded():
    """Indices and nests are tuples of ints too; only shapes are sizes."""
    check_module(in_tensor("_t9 = _np.take(w, (70000, 80000, 90000), axis=0)"))


def test_declared_shapes_build_up_to_the_bound():
    g = sd.hessian("sum(w**3)", wrt="w", shapes={"w": (2000,)})  # a 2000 x 2000 constant
    assert g(w=__import__("numpy").ones(2000)).shape == (2000, 2000)
    too_big = int(MAX_CONSTANT_ELEMENTS**0.5) + 1
    with pytest.raises(sd.SymdiffError, match="declare dimensions this large by name"):
        sd.hessian("sum(w**3)", wrt="w", shapes={"w": (too_big,)}, cache=False)
