"""symdiff.cli.options and .output: option values, the one-line error and the debug switch."""

from __future__ import annotations

import argparse

import pytest

from symdiff.cli.options import shapes_keyword, wrt_option
from symdiff.cli.output import debugging, error_line, first_line
from symdiff.errors import ParseError, SymdiffError


def test_wrt_is_what_wrt_is_in_python():
    assert wrt_option("x") == "x"
    assert wrt_option(" x ") == "x"
    assert wrt_option("x,") == ["x"]
    assert wrt_option(" x , y ") == ["x", "y"]
    for bad in ("x,,y", ",x", ",", ""):
        with pytest.raises(argparse.ArgumentTypeError, match="empty"):
            wrt_option(bad)


def test_shapes_reach_the_api_only_when_given():
    assert shapes_keyword(argparse.Namespace(shapes=None)) == {}
    assert shapes_keyword(argparse.Namespace()) == {}  # commands without --shapes
    assert shapes_keyword(argparse.Namespace(shapes="X=n,2;s=")) == {
        "shapes": {"X": ("n", 2), "s": ()}
    }


def test_an_error_is_one_line_naming_the_options_not_the_keywords():
    error = SymdiffError("say which one with wrt=; shapes= as well\nsecond line")
    assert error_line(error) == "say which one with --wrt; --shapes as well"
    assert error_line(SymdiffError("wrt=['x'] is fine")) == "wrt=['x'] is fine"  # a value follows
    assert first_line("") == ""


def test_a_parse_error_line_gives_the_position():
    line = error_line(ParseError("unknown function 'sinn'", position=3))
    assert line.endswith("(at position 3)") and "\n" not in line


@pytest.mark.parametrize(
    "value, on", [("", False), ("0", False), ("off", False), (" No ", False), ("1", True),
                  ("yes", True)]
)
def test_debugging_reads_the_environment(monkeypatch, value, on):
    monkeypatch.setenv("SYMDIFF_DEBUG", value)
    assert debugging() is on
