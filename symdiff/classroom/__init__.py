"""The classroom: what ``symdiff serve`` and ``symdiff derive --html`` show a class.

Built on the public API (:func:`symdiff.derive`, :func:`symdiff.graph`, :func:`symdiff.compile`,
:func:`symdiff.grad`) and the views of a derivation (its lines, rules, identities and parts),
never on a second differentiator:

- :mod:`.mathml`: expressions (as written, too) as MathML Core, typeset by the browser;
- :mod:`.walkthrough`: a derivation's lines revealed one at a time, each after a hint;
- :mod:`.lesson`: what was understood of an input, and its derivatives up to the 5th
  (partial ones too) as walkthroughs;
- :mod:`.answers`: a student's answer checked (symbolically and at random points);
- :mod:`.practice`: exercises by rule and difficulty, the same for the same seed;
- :mod:`.plot` and :mod:`.figures`: the plot of f and f', the computational graph, the code;
- :mod:`.page`: self-contained HTML pages (a derivation, a worksheet).
"""

from __future__ import annotations

from .answers import Verdict, check
from .page import derivation_page, worksheet_page
from .practice import RULES, Exercise, exercises

__all__ = ["RULES", "Exercise", "Verdict", "check", "derivation_page", "exercises",
           "worksheet_page"]
