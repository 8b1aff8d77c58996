"""A ``wrt`` name that is not a variable always lists the variables, and gets a did-you-mean
when it is close to one: another case (``X``), one edit (``xx``, ``x2``, ``yx``), two for long
names, or for one letter a neighbouring key (``z`` for ``x``)."""

from __future__ import annotations

import pytest

import symdiff as sd
from symdiff.parsing.closeness import close_names, edit_distance


@pytest.mark.parametrize(("expr", "wrt", "hint"), [
    ("x**2 + y", "z", "; did you mean 'x'?"),
    ("x**2 + y", "xx", "; did you mean 'x'?"),
    ("x**2 + y", "X", "; did you mean 'x'?"),
    ("x**2 + y", "x1", "; did you mean 'x'?"),
    ("x1 + x2 + x3", "x", "; did you mean 'x1', 'x2' or 'x3'?"),
    ("alpha*beta", "alpah", "; did you mean 'alpha'?"),
    ("sigma_w*lam", "sigma_v", "; did you mean 'sigma_w'?"),
    ("x*y", "q", ""),
    ("alpha*beta", "gamma_", ""),
])
def test_every_unknown_name_lists_the_variables_and_the_close_ones(expr, wrt, hint):
    with pytest.raises(sd.ParseError) as info:
        sd.grad(expr, wrt=wrt)
    variables = ", ".join(sorted(str(s) for s in sd.parse(expr).free_symbols))
    assert str(info.value) == (
        f"wrt name {wrt!r} does not occur in the expression (its variables: {variables}){hint}"
    )


def test_a_traced_function_and_a_tensor_expression_get_the_same_hints():
    def f(x, y):
        return x * y

    with pytest.raises(sd.ParseError, match=r"its parameters: x, y\); did you mean 'x'\?$"):
        sd.grad(f, wrt="z")
    with pytest.raises(sd.ParseError, match=r"its variables: w, x\); did you mean 'w'\?$"):
        sd.grad("sum(w*x)", wrt="W", shapes={"w": ("n",), "x": ("n",)})


def test_edit_distance_counts_swaps_of_neighbours_as_one():
    assert edit_distance("xy", "yx") == 1
    assert edit_distance("alpha", "alpah") == 1
    assert edit_distance("kitten", "sitting") == 3
    assert edit_distance("", "abc") == 3


def test_close_names_orders_closest_first_and_keeps_few():
    assert close_names("X", ["y", "x"]) == ["x"]
    assert close_names("z", ["x", "y"]) == ["x"]  # z and x are neighbouring keys
    assert close_names("a", ["q", "w", "s", "z", "p"]) == ["q", "w", "s"]
    assert close_names("theta", ["beta", "theta1", "Theta"]) == ["Theta", "theta1"]
