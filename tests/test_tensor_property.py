"""Property tests of the tensor layer over random shapes: ``@`` between vectors, matrices and
stacks of matrices (with broadcast stack axes), elementwise broadcasting and reductions, each
gradient against central differences and forward mode against reverse mode."""

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

import symdiff as sd
from tests.tensor_cases import central_gradient


def assert_gradients(expr, declared, seed, forward_rtol):
    """At normal random arrays of the ``declared`` shapes (from ``seed``): reverse mode against
    central differences, forward mode against reverse mode."""
    rng = np.random.default_rng(seed)
    args = {name: rng.normal(size=shape) for name, shape in declared.items()}
    names = list(declared)
    f = sd.compile(expr, shapes=declared)
    reverse = sd.grad(expr, wrt=names, shapes=declared)(**args)
    forward = sd.grad(expr, wrt=names, shapes=declared, mode="forward")(**args)
    # central differences of f carry a rounding error of about |f| eps / h = |f| 2e-10
    atol = 1e-6 + 1e-9 * abs(float(f(**args)))
    for name, r, fw in zip(names, reverse, forward, strict=True):
        assert r.shape == args[name].shape
        np.testing.assert_allclose(r, central_gradient(f, args, name), rtol=1e-5, atol=atol)
        np.testing.assert_allclose(fw, r, rtol=forward_rtol, atol=1e-12)


@st.composite
def matmul_shapes(draw):
    """Shapes of A and B for A @ B: each a vector, a matrix or a stack (1 or 2 stack axes,
    sizes 1 or 2 so that stacks broadcast against each other)."""
    k, n, m = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    a_rank, b_rank = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    stack = st.lists(st.sampled_from([1, 2]), min_size=0, max_size=2)
    a = (k,) if a_rank == 1 else (*draw(stack)[: a_rank - 2], n, k)
    b = (k,) if b_rank == 1 else (*draw(stack)[: b_rank - 2], k, m)
    return a, b


FUNCTIONS = ["sin({})", "({})**2", "tanh({})", "exp({}/4)"]


@settings(max_examples=35, deadline=None)
@given(shapes=matmul_shapes(), outer=st.sampled_from(FUNCTIONS), seed=st.integers(0, 2**16))
def test_matmul_gradients_of_every_rank_match_central_differences(shapes, outer, seed):
    a_shape, b_shape = shapes
    expr = f"sum({outer.format('A @ B')})"
    assert_gradients(expr, {"A": a_shape, "B": b_shape}, seed, forward_rtol=1e-10)


@st.composite
def broadcast_pair(draw):
    """Two shapes that broadcast: a full shape and one with some axes dropped or set to 1."""
    full = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    lead = draw(st.integers(0, len(full) - 1))
    other = tuple(1 if draw(st.booleans()) else d for d in full[lead:])
    return full, other


@settings(max_examples=35, deadline=None)
@given(shapes=broadcast_pair(), axis=st.sampled_from([None, 0, -1]),
       reduction=st.sampled_from(["sum", "mean", "max", "logsumexp", "prod"]),
       seed=st.integers(0, 2**16))
# f is 2.6e5 here, so central differences are off by ~4e-6 in entries of size 1e-3 (a CI run)
@example(shapes=((1, 2, 3), (2, 1)), axis=-1, reduction="prod", seed=3)
# a 1x1 identity seed broadcast against y of shape (1,) was taken for I_2 (a CI run)
@example(shapes=((2,), (1,)), axis=None, reduction="sum", seed=0)
def test_broadcast_and_reductions_match_central_differences(shapes, axis, reduction, seed):
    x_shape, y_shape = shapes
    inner = f"{reduction}(x * y + sin(y), axis={axis})" if axis is not None else \
        f"{reduction}(x * y + sin(y))"
    expr = f"sum(exp({inner} / 3))"
    assert_gradients(expr, {"x": x_shape, "y": y_shape}, seed, forward_rtol=1e-9)



@st.composite
def view_chain(draw, shape):
    """A chain of one to three view operations on an array of ``shape`` (slices with steps,
    negative indices, transposes, reshapes, repeats, sums keeping dims), in the input
    language, and the shape it ends with."""
    shape = list(shape)
    text = "x"
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["slice", "transpose", "reshape", "repeat", "sum", "index"]))
        axis = draw(st.integers(0, len(shape) - 1))
        parts = [":"] * len(shape)
        if kind == "slice" and shape[axis] >= 2:
            start = draw(st.integers(0, shape[axis] - 1))
            stop = draw(st.integers(start + 1, shape[axis]))
            step = draw(st.sampled_from([1, 2]))
            parts[axis] = f"{start}:{stop}:{step}"
            text = f"({text})[{', '.join(parts)}]"
            shape[axis] = len(range(start, stop, step))
        elif kind == "transpose" and len(shape) >= 2:
            perm = tuple(draw(st.permutations(list(range(len(shape))))))
            text = f"transpose({text}, {perm})"
            shape = [shape[p] for p in perm]
        elif kind == "reshape":
            size = int(np.prod(shape))
            text = f"reshape({text}, ({size},))"
            shape = [size]
        elif kind == "repeat":
            text = f"repeat({text}, 2, axis={axis})"
            shape[axis] *= 2
        elif kind == "sum" and len(shape) >= 2:
            text = f"sum({text}, axis={axis}, keepdims=True)"
            shape[axis] = 1
        elif kind == "index" and len(shape) >= 2:
            parts[axis] = str(draw(st.integers(-shape[axis], shape[axis] - 1)))
            text = f"({text})[{', '.join(parts)}]"
            del shape[axis]
    return text, tuple(shape)


@settings(max_examples=45, deadline=None)
@given(data=st.data(), seed=st.integers(0, 2**16))
def test_chains_of_view_operations_match_central_differences(data, seed):
    """Slices (with steps and negative indices), transposes, reshapes, repeats and sums in
    random chains, the chain used twice (a branch): gradients against central differences,
    forward mode against reverse mode."""
    shape = tuple(data.draw(st.lists(st.integers(2, 4), min_size=1, max_size=3)))
    text, _ = data.draw(view_chain(shape))
    expr = f"sum(sin({text}) * {text})"
    assert_gradients(expr, {"x": shape}, seed, forward_rtol=1e-9)
