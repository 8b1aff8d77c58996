"""input_text writes what the parser reads back as the same expression, for every registry row:
recipes store expressions this way, so a row the parser could not read back would make
``explain()`` of a cached function ask for ``expr=`` or, worse, read another expression."""

from __future__ import annotations

import pytest

from symdiff import SymdiffError, registry
from symdiff.engine.inputtext import input_text
from symdiff.parsing import parse

ARGUMENTS = ("x", "x*y + 1", "x, y", "x, y, z", "2, x", "x, 0.5")


def _parsed_calls(name: str) -> list:
    calls = []
    for args in ARGUMENTS:
        try:
            calls.append(parse(f"{name}({args})"))
        except SymdiffError:  # this arity is not the row's
            continue
    return calls


@pytest.mark.parametrize("name", sorted(registry.parse_names()))
def test_every_function_name_reads_back_as_the_same_expression(name: str) -> None:
    calls = _parsed_calls(name)
    assert calls, f"no argument list of {ARGUMENTS} parses for {name!r}"
    for expr in calls:
        assert parse(input_text(expr)) == expr, (name, input_text(expr))


def test_sinc_is_written_as_the_user_wrote_it() -> None:
    assert input_text(parse("sinc(2*x)")) == "sinc(2*x)"
    written = input_text(parse("ceil(x) + mod(x, y)"))
    assert written in {"ceil(x) + mod(x, y)", "mod(x, y) + ceil(x)"}
