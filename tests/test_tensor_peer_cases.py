"""NumPy gradient cases of the kind peers test (autograd's test_numpy / test_systematic style):
each function ``f`` of arrays, non-scalar outputs included, is checked as ``sum(w * f(x))`` with a
random weight ``w`` passed as an argument, against central differences."""

from __future__ import annotations

import numpy as np
import pytest

import symdiff as sd

R = np.random.default_rng(0).standard_normal
_NAN = np.array([0.0, np.nan, np.inf, -np.inf])
_MASK = R((4, 5)) > 0
_C = R((3, 2))

CASES = {
    "split": (lambda x: np.split(x, 2)[0] * np.split(x, 2)[1], [R(10)]),
    "split indices axis 1": (lambda x: np.split(x, [1, 3], axis=1)[2], [R((2, 5))]),
    "array_split": (lambda x: np.array_split(x, 3)[0], [R(7)]),
    "atleast_3d vector": (lambda x: np.atleast_3d(x), [R(4)]),
    "atleast_3d matrix": (lambda x: np.atleast_3d(x), [R((2, 4))]),
    "real and imag": (lambda x: np.real(x) * 2 + np.imag(x), [R(5)]),
    "nan_to_num with constants": (lambda x: np.sin(np.nan_to_num(x + _NAN)), [R(4)]),
    "trace offset non-square": (lambda x: np.trace(x, offset=3), [R((10, 11))]),
    "trace offset 4-D": (lambda x: np.trace(x, offset=-2), [R((5, 6, 4, 3))]),
    "sort": (lambda x: np.sort(x), [R(7)]),
    "partition": (lambda x: np.partition(x, 3), [R(7)]),
    "flip slices": (lambda x: x[::-1, 2:4, :], [R((5, 6, 4))]),
    "mixed fancy index": (lambda x: x[3, 2:, [1, 3]], [R((5, 6, 4))]),
    "repeated index": (lambda x: x[[0, 1, 0]], [R(3)]),
    "where constant mask": (lambda x, y: np.where(_MASK, x, y), [R((4, 5)), R((4, 5))]),
    "var keepdims ddof": (lambda x: np.var(x, axis=1, keepdims=True, ddof=2), [R((3, 4))]),
    "tensordot pairs": (lambda x, y: np.tensordot(x, y, axes=[(1, 0), (2, 1)]),
                        [R((2, 3, 4)), R((2, 2, 3, 4))]),
    "np.array of scalars": (lambda x: np.array([x, x * 1.0, x + 2.5]), [np.array(3.0)]),
    "np.array 2-D of scalars": (
        lambda x: np.array([[x, x * 1.0, x + 2.5], [x**2, x, x / 2.0]]), [np.array(3.0)]),
    "np.array of arrays": (lambda x: np.array([[2 * x, x + 1], [x, x]]), [R((3, 2))]),
    "np.array fan-out": (lambda x: np.array([x, x * 1.0]) + np.array([x, x * 1.0]),
                         [np.array(1.5)]),
    "np.array of one traced value": (lambda x: np.array(x), [np.array(3.0)]),
    "np.r_": (lambda x: np.r_[x, x], [R((3, 2))]),
    "np.r_ with a constant": (lambda x: np.r_[x, _C], [R((3, 2))]),
    "np.c_": (lambda x: np.c_[x, _C, x], [R((3, 2))]),
    "conjugate": (lambda x: np.conj(x) * x, [R(5)]),
    "einsum three operands": (lambda x, y, z: np.einsum("ijk,lji,lli->lki", x, y, z),
                              [R((3, 4, 4)), R((4, 4, 3)), R((4, 4, 3))]),
}


def test_np_array_of_a_large_traced_array_points_to_stack():
    with pytest.raises(sd.UnsupportedError, match=r"np.stack"):
        sd.grad(lambda x: np.sum(np.array([x, x])), shapes={"x": (40, 40)})


def _central(g, args: list[np.ndarray], k: int, eps: float = 1e-6) -> np.ndarray:
    out = np.zeros_like(args[k])
    for i in np.ndindex(args[k].shape):
        plus = [a.copy() for a in args]
        minus = [a.copy() for a in args]
        plus[k][i] += eps
        minus[k][i] -= eps
        out[i] = (g(*plus) - g(*minus)) / (2 * eps)
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_peer_case(name):
    f, args = CASES[name]
    names = [f"a{i}" for i in range(len(args))]
    w = np.random.default_rng(2).standard_normal(np.shape(f(*args)))
    namespace = {"np": np, "f": f}
    exec(f"def g({', '.join(names)}, w):\n    return np.sum(w * f({', '.join(names)}))",
         namespace)
    g = namespace["g"]
    shapes = {n: np.shape(a) for n, a in zip(names, args, strict=True)} | {"w": w.shape}
    got = sd.grad(g, wrt=names, shapes=shapes)(*args, w)
    for k in range(len(args)):
        want = _central(lambda *a: g(*a, w), list(args), k)
        np.testing.assert_allclose(got[k], want, rtol=1e-5, atol=1e-6, err_msg=f"argument {k}")
