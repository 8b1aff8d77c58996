"""The elementwise functions: one row each, holding everything about it (see the fields of Fn).

A row says which names a string may call the function by, which SymPy class its node is, its
derivative rule (as a student reads it), how it prints as NumPy code, which NumPy functions
tracing maps to it, whether tensor code may apply it in place, where it is smooth (for the
tests), and which numbers need care when parsing. The consumers read the rows: the rule table
(:data:`symdiff.rules.RULES`), the printer, verify's allow-list and runtime's helper table, the
parser, tracing (``trace.FUNCTIONS``/``UFUNCS``), :mod:`symdiff.math` and the tensor emitter;
``tests/test_registry.py`` checks that none keeps a list of its own (issue #14).

Importing this module needs the standard library only: SymPy, NumPy and
:mod:`symdiff.functions` are reached through lazy namespaces, and a row touches them only
inside a ``lambda``, so ``symdiff.math`` and ``symdiff.verify`` may read the table and stay
cheap to import.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


class _Lazy:
    """A module imported on first attribute access; each attribute then cached."""

    def __init__(self, module: str) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        value = getattr(importlib.import_module(self._module), name)
        setattr(self, name, value)
        return value


sp = _Lazy("sympy")
np = _Lazy("numpy")
F = _Lazy("symdiff.functions")
CF = _Lazy("sympy.codegen.cfunctions")
errors = _Lazy("symdiff.errors")
#: Where a row's ``head`` is looked up: ``"sin"`` in SymPy, ``"CF:log1p"`` in
#: ``sympy.codegen.cfunctions``, ``"NN:logaddexp"`` in ``sympy.codegen.numpy_nodes``,
#: ``"F:relu"`` in :mod:`symdiff.functions`.
_HEAD_MODULES = {
    "": "sympy",
    "CF": "sympy.codegen.cfunctions",
    "NN": "sympy.codegen.numpy_nodes",
    "F": "symdiff.functions",
}

#: ``sigmoid(u)`` in tensor code is ``1/(1 + exp(min(-u, SIGMOID_CLIP)))``: one ``exp``, which
#: never overflows in float32 or float64 (the value of ``symdiff.tensor.emit.SIGMOID_CLIP``).
SIGMOID_CLIP = 88
#: Call forms of the string grammar that are not functions of their own.
GRAMMAR = frozenset({"where"})

Partials = Callable[..., tuple[Any, ...]]


@dataclass(frozen=True)
class Domain:
    """Where a function is smooth and finite, for the generated tests.

    ``args`` is an open interval per parameter (for ``*more`` functions, per argument of the
    sample call); an interval ``(c, c)`` stands for the number ``c``, for a parameter that must
    be a number. ``kinks(*args)`` gives SymPy expressions that vanish where the function has a
    kink or a jump (tests keep away from those points). ``at`` holds the documented gradients
    at special points, ``(point, gradient)`` of the function of bare variables (``abs'(0) =
    0``, ties of ``max`` split evenly): the tests check them exactly.
    """

    args: tuple[tuple[float, float], ...]
    kinks: Callable[..., tuple[Any, ...]] | None = None
    at: tuple[tuple[tuple[float, ...], tuple[float, ...]], ...] = ()


def on(
    *args: tuple[float, float],
    kinks: Callable[..., tuple[Any, ...]] | None = None,
    at: tuple[tuple[tuple[float, ...], tuple[float, ...]], ...] = (),
) -> Domain:
    """``Domain(args, kinks, at)``, short enough for a row."""
    return Domain(tuple(args), kinks, at)


@dataclass(frozen=True)
class Fn:
    """One elementwise function. Only ``names``/``head`` are positional in the table.

    ``params``, ``build``, ``constant`` and ``check`` describe the call as a string writes it;
    ``partials``, ``int_args`` and the printing fields describe the SymPy node it builds (one
    argument for ``log(x, base)``, which builds ``log(x)/log(base)``).
    """

    # -- what it is and how it is written
    names: tuple[str, ...]  # string names, canonical first, then aliases; () = internal node
    head: str  # class of its SymPy node (see _HEAD_MODULES); "" = sugar for another node
    params: str = "x"  # "x" | "y, x" | "x, base=None" | "a, b, *more": arity, keywords, usage
    build: Callable[..., Any] | None = None  # constructor of the node, when not the head class
    constant: tuple[int, ...] = ()  # argument positions that must be numbers
    check: Callable[..., tuple[int, str] | None] | None = None  # parse check: (arg index, why)
    # -- derivative, as a student reads it
    rule: str = ""
    identity: str = ""
    partials: Partials | None = None  # node args -> one partial each; None = must not vary
    # -- generated code and tracing
    ufunc: str | None = None  # NumPy name: printed "_np.<ufunc>(...)" (unless helper/template)
    traced: tuple[str, ...] = ()  # further NumPy functions traced to this row
    helper: str | None = None  # runtime helper printed "<helper>(...)" and pasted into modules
    helper_deps: tuple[str, ...] = ()  # helpers that helper calls
    template: str | None = None  # printed form with {0}, {1}, ... for the printed arguments
    method: str | None = None  # printer method for an irregular form ("nested", "heaviside")
    int_args: tuple[int, ...] = ()  # argument positions printed as int literals
    numeric: Callable[..., Any] | None = None  # symdiff.math on numbers, when not ufunc/helper
    in_place: bool = False  # tensor code may apply the ufunc with out= onto a fresh array
    tensor_form: Callable[..., Any] | None = None  # exact rewrite used only in tensor code
    # -- numeric care and tests
    grows: bool = False  # parsing refuses number arguments above max_exponent
    nesting: int = 1  # weight towards max_constant_depth (SymPy evaluates via a rewrite)
    reference: Callable[..., Any] | None = None  # in SymPy primitives, for sympy.diff in tests
    domain: Domain | None = None
    doc: str = ""  # docstring of symdiff.math.<name>


# -- partials and other pieces the rows share ------------------------------------------------------
def unary(derivative: Callable[[Any], Any]) -> Partials:
    """Adapt ``u -> f'(u)`` to the table's ``*args -> (partials...)`` form."""
    return lambda u: (derivative(u),)


def _tie_shares(*args: Any) -> tuple[Any, ...]:
    """Partials of ``max(*args)``: 1 for the largest argument, split evenly on ties."""
    if len(args) == 2:
        a, b = args
        return sp.Heaviside(a - b, sp.S.Half), sp.Heaviside(b - a, sp.S.Half)
    return tuple(F.tie_share(a, *args) for a in args)


def _min_shares(*args: Any) -> tuple[Any, ...]:
    """Partials of ``min(*args)``: those of ``max`` of the negated arguments."""
    return _tie_shares(*(-a for a in args))


def _atan2_partials(y: Any, x: Any) -> tuple[Any, Any]:
    r2 = x**2 + y**2
    return x / r2, -y / r2


def _logaddexp_partials(a: Any, b: Any) -> tuple[Any, Any]:
    return F.sigmoid(a - b), F.sigmoid(b - a)


def _polygamma_partials(n: Any, u: Any) -> tuple[None, Any]:
    return None, sp.polygamma(n + 1, u)


def _log(x: Any, base: Any = None) -> Any:
    return sp.log(x) if base is None else sp.log(x, base)


def _log_numeric(x: Any, base: Any = None) -> Any:
    return np.log(x) if base is None else np.log(x) / np.log(base)


def _log_base_check(x: Any, base: Any = None) -> tuple[int, str] | None:
    if base is not None and base.is_number and (base.is_positive is False or base == 1):
        return 1, "the base of log must be a positive number other than 1"
    return None


_HEAVISIDE_X2 = "the second argument of heaviside (its value at 0) must be a number"


def _heaviside_check(x1: Any, x2: Any) -> tuple[int, str] | None:
    return None if x2.is_number and x2.is_extended_real else (1, _HEAVISIDE_X2)


def _heaviside(x1: Any, x2: Any) -> Any:
    """``Heaviside(x1, x2)`` (NumPy's signature); ``x2`` printed as a float, so a number."""
    if _heaviside_check(x1, x2) is not None:
        raise errors.UnsupportedError(_HEAVISIDE_X2)
    return sp.Heaviside(x1, x2)


def _unique_max_indicator(a: Any, *args: Any) -> Any:
    """tie_share away from ties: 1 where ``a`` is the maximum, else 0."""
    # a against the others: Eq(a, Max(*args)) lets SymPy move terms across (Eq(y*(x - 1),
    # Max(...) - 2)), and the two sides then round differently where it should hold exactly.
    if a not in args:
        return sp.Piecewise((1, sp.Eq(a, sp.Max(*args))), (0, True))
    others = list(args)
    others.remove(a)
    return sp.Piecewise((1, a - sp.Max(*others) > 0), (0, True)) if others else sp.S.One


def _at_zero(u: Any, *rest: Any) -> tuple[Any, ...]:
    return (u,)


def _at_integers(u: Any) -> tuple[Any, ...]:
    return (sp.sin(sp.pi * u),)


def _at_origin(a: Any, b: Any) -> tuple[Any, ...]:
    return (a**2 + b**2,)


def _sinc_reference(n: int, u: Any) -> Any:
    t = sp.Dummy("t")
    return sp.diff(sp.sin(t) / t, t, n).subs(t, u)


def _ties(*args: Any) -> tuple[Any, ...]:
    return tuple(p - q for i, p in enumerate(args) for q in args[i + 1 :])


def _zero(u: Any) -> Any:
    return sp.S.Zero


TRIG, ITRIG = "trigonometric", "inverse trigonometric"
HYP, IHYP = "hyperbolic", "inverse hyperbolic"
_VECTORIZED = "(vectorized, as in generated code)"

# -- the table (in the order of the rule table, which notebook 01 shows) ---------------------------
ROWS: tuple[Fn, ...] = (
    Fn(("sin",), "sin", ufunc="sin", in_place=True,
       rule=TRIG, identity="d/du sin(u) = cos(u)", partials=unary(lambda u: sp.cos(u)),
       domain=on((-1, 5)), doc="Sine (``np.sin`` on numbers)."),
    Fn(("cos",), "cos", ufunc="cos", in_place=True,
       rule=TRIG, identity="d/du cos(u) = -sin(u)", partials=unary(lambda u: -sp.sin(u)),
       domain=on((-4, 4)), doc="Cosine (``np.cos`` on numbers)."),
    Fn(("tan",), "tan", ufunc="tan", in_place=True,
       rule=TRIG, identity="d/du tan(u) = 1 + tan(u)^2",
       partials=unary(lambda u: 1 + sp.tan(u) ** 2),
       domain=on((-0.75, 0.75)), doc="Tangent (``np.tan`` on numbers)."),
    Fn(("asin", "arcsin"), "asin", ufunc="arcsin",
       rule=ITRIG, identity="d/du asin(u) = 1/sqrt(1 - u^2)",
       partials=unary(lambda u: 1 / sp.sqrt(1 - u**2)),
       domain=on((-0.5, 0.5)), doc="Inverse sine (``np.arcsin`` on numbers)."),
    Fn(("acos", "arccos"), "acos", ufunc="arccos",
       rule=ITRIG, identity="d/du acos(u) = -1/sqrt(1 - u^2)",
       partials=unary(lambda u: -1 / sp.sqrt(1 - u**2)),
       domain=on((-0.65, 0.65)), doc="Inverse cosine (``np.arccos`` on numbers)."),
    Fn(("atan", "arctan"), "atan", ufunc="arctan",
       rule=ITRIG, identity="d/du atan(u) = 1/(1 + u^2)", partials=unary(lambda u: 1 / (1 + u**2)),
       domain=on((-3, 12)), doc="Inverse tangent (``np.arctan`` on numbers)."),
    Fn(("atan2", "arctan2"), "atan2", params="y, x", ufunc="arctan2",
       rule=ITRIG, identity="d atan2(y, x) = (x dy - y dx)/(x^2 + y^2)", partials=_atan2_partials,
       domain=on((1, 10), (-3, 3)),
       doc="The angle of the point ``(x, y)``, in ``(-pi, pi]`` "
           "(``np.arctan2(y, x)`` on numbers)."),
    Fn(("sinh",), "sinh", ufunc="sinh", in_place=True, grows=True,
       rule=HYP, identity="d/du sinh(u) = cosh(u)", partials=unary(lambda u: sp.cosh(u)),
       domain=on((-4, 4)), doc="Hyperbolic sine (``np.sinh`` on numbers)."),
    Fn(("cosh",), "cosh", ufunc="cosh", in_place=True, grows=True,
       rule=HYP, identity="d/du cosh(u) = sinh(u)", partials=unary(lambda u: sp.sinh(u)),
       domain=on((-2, 3)), doc="Hyperbolic cosine (``np.cosh`` on numbers)."),
    Fn(("tanh",), "tanh", ufunc="tanh", in_place=True,
       rule=HYP, identity="d/du tanh(u) = 1 - tanh(u)^2",
       partials=unary(lambda u: 1 - sp.tanh(u) ** 2),
       domain=on((-6, 6)), doc="Hyperbolic tangent (``np.tanh`` on numbers)."),
    Fn(("asinh", "arcsinh"), "asinh", ufunc="arcsinh",
       rule=IHYP, identity="d/du asinh(u) = 1/sqrt(u^2 + 1)",
       partials=unary(lambda u: 1 / sp.sqrt(u**2 + 1)),
       domain=on((-9, 9)), doc="Inverse hyperbolic sine (``np.arcsinh`` on numbers)."),
    Fn(("acosh", "arccosh"), "acosh", ufunc="arccosh",
       rule=IHYP, identity="d/du acosh(u) = 1/sqrt(u^2 - 1)",
       partials=unary(lambda u: 1 / sp.sqrt(u**2 - 1)),
       domain=on((1.5, 9.5)), doc="Inverse hyperbolic cosine (``np.arccosh`` on numbers)."),
    Fn(("atanh", "arctanh"), "atanh", ufunc="arctanh",
       rule=IHYP, identity="d/du atanh(u) = 1/(1 - u^2)", partials=unary(lambda u: 1 / (1 - u**2)),
       domain=on((-0.75, 0.75)), doc="Inverse hyperbolic tangent (``np.arctanh`` on numbers)."),
    Fn(("exp",), "exp", ufunc="exp", in_place=True, grows=True,
       rule="exponential", identity="d/du exp(u) = exp(u)", partials=unary(lambda u: sp.exp(u)),
       domain=on((-6, 6)), doc="Exponential (``np.exp`` on numbers)."),
    Fn(("exp2",), "CF:exp2", ufunc="exp2", grows=True,
       rule="exponential", identity="d/du exp2(u) = exp2(u) log(2)",
       partials=unary(lambda u: CF.exp2(u) * sp.log(2)), reference=lambda u: 2**u,
       domain=on((-6, 6)), doc="``2**x`` (``np.exp2`` on numbers)."),
    Fn(("log", "ln"), "log", params="x, base=None", build=_log, check=_log_base_check,
       ufunc="log", numeric=_log_numeric, in_place=True,
       rule="logarithm", identity="d/du log(u) = 1/u", partials=unary(lambda u: 1 / u),
       domain=on((0.35, 7), (1.5, 8)),
       doc="Natural logarithm, or the logarithm to ``base`` (``np.log(x) / np.log(base)``)."),
    Fn(("log2",), "CF:log2", ufunc="log2",
       rule="logarithm", identity="d/du log2(u) = 1/(u log(2))",
       partials=unary(lambda u: 1 / (u * sp.log(2))), reference=lambda u: sp.log(u) / sp.log(2),
       domain=on((0.35, 7)), doc="Base-2 logarithm (``np.log2`` on numbers)."),
    Fn(("log10",), "CF:log10", ufunc="log10",
       rule="logarithm", identity="d/du log10(u) = 1/(u log(10))",
       partials=unary(lambda u: 1 / (u * sp.log(10))),
       reference=lambda u: sp.log(u) / sp.log(10),
       domain=on((0.35, 7)), doc="Base-10 logarithm (``np.log10`` on numbers)."),
    Fn(("sqrt",), "", build=lambda x: sp.sqrt(x), ufunc="sqrt",  # a power: printed, derived so
       domain=on((0.35, 7)), doc="Square root (``np.sqrt`` on numbers)."),
    Fn(("cbrt",), "F:cbrt", ufunc="cbrt",
       rule="power", identity="d/du cbrt(u) = 1/(3 cbrt(u)^2)  (inf at u = 0)",
       partials=unary(lambda u: 1 / (3 * F.cbrt(u) ** 2)),
       reference=lambda u: sp.sign(u) * sp.Abs(u) ** sp.Rational(1, 3),
       domain=on((-2, 2), kinks=_at_zero, at=(((0.0,), (math.inf,)),)),
       doc="Real cube root (``np.cbrt`` on numbers): ``cbrt(-8) = -2``; ``cbrt'(0) = inf``."),
    Fn(("log1p",), "CF:log1p", ufunc="log1p",
       rule="logarithm", identity="d/du log(1 + u) = 1/(1 + u)",
       partials=unary(lambda u: 1 / (1 + u)), reference=lambda u: sp.log(1 + u),
       domain=on((-0.25, 0.25)),
       doc="``log(1 + x)``, accurate for small ``x`` (``np.log1p`` on numbers)."),
    Fn(("expm1",), "CF:expm1", ufunc="expm1", grows=True,
       rule="exponential", identity="d/du (exp(u) - 1) = exp(u)",
       partials=unary(lambda u: sp.exp(u)), reference=lambda u: sp.exp(u) - 1,
       domain=on((-2, 1)),
       doc="``exp(x) - 1``, accurate for small ``x`` (``np.expm1`` on numbers)."),
    Fn(("logaddexp",), "NN:logaddexp", params="a, b", ufunc="logaddexp",
       rule="log-sum-exp",
       identity="d log(exp(a) + exp(b)) = sigmoid(a - b) da + sigmoid(b - a) db",
       partials=_logaddexp_partials, reference=lambda a, b: sp.log(sp.exp(a) + sp.exp(b)),
       domain=on((-9, 9), (-6, 6)),
       doc="``log(exp(a) + exp(b))``, computed without overflow (``np.logaddexp`` on numbers)."),
    Fn(("logaddexp2",), "NN:logaddexp2", params="a, b", ufunc="logaddexp2",
       rule="log-sum-exp",
       identity="d log2(2^a + 2^b) = sigmoid((a - b) log(2)) da + sigmoid((b - a) log(2)) db",
       partials=lambda a, b: (F.sigmoid((a - b) * sp.log(2)), F.sigmoid((b - a) * sp.log(2))),
       reference=lambda a, b: sp.log(2**a + 2**b) / sp.log(2),
       domain=on((-9, 9), (-6, 6)),
       doc="``log2(2**a + 2**b)``, computed without overflow (``np.logaddexp2`` on numbers)."),
    Fn(("hypot",), "CF:hypot", params="a, b", ufunc="hypot",
       rule="hypotenuse",
       identity="d hypot(a, b) = (a da + b db)/hypot(a, b)  (0 at a = b = 0)",
       partials=lambda a, b: (F.hypot_share(a, b), F.hypot_share(b, a)),
       reference=lambda a, b: sp.sqrt(a**2 + b**2),
       domain=on((-3, 3), (-2, 2), kinks=_at_origin, at=(((0.0, 0.0), (0.0, 0.0)),)),
       doc="``sqrt(a**2 + b**2)`` without overflow (``np.hypot`` on numbers); its gradient at "
           "the origin is 0."),
    Fn((), "F:hypot_share", params="a, b", helper="_hypot_share",
       rule="hypotenuse share",
       identity="d hypot_share(a, b) = (b^2 da - a b db)/hypot(a, b)^3",
       partials=lambda a, b: (b**2 / CF.hypot(a, b) ** 3, -a * b / CF.hypot(a, b) ** 3),
       reference=lambda a, b: a / sp.sqrt(a**2 + b**2),
       domain=on((-3, 3), (-2, 2), kinks=_at_origin)),
    Fn(("abs",), "Abs", ufunc="abs", traced=("fabs",), in_place=True,
       rule="absolute value", identity="d/du |u| = sign(u)  (0 at u = 0)",
       partials=unary(lambda u: sp.sign(u)),
       domain=on((-6, 6), kinks=_at_zero, at=(((0.0,), (0.0,)),)),
       doc="Absolute value (``np.abs`` on numbers); by convention ``abs'(0) = 0``."),
    Fn(("sign",), "sign", ufunc="sign",
       rule="sign", identity="d/du sign(u) = 0  (by convention, also at 0)", partials=unary(_zero),
       domain=on((-9, 9), kinks=_at_zero, at=(((0.0,), (0.0,)),)),
       doc="Sign: -1, 0 or 1 (``np.sign`` on numbers); its derivative is 0."),
    Fn(("heaviside",), "Heaviside", params="x1, x2", constant=(1,), build=_heaviside,
       check=_heaviside_check, ufunc="heaviside", method="heaviside",
       rule="step function", identity="d/du H(u) = 0  (by convention, also at 0)",
       partials=lambda u, *h0: (sp.S.Zero, *(None for _ in h0)),
       domain=on((-6, 6), (0.5, 0.5), kinks=_at_zero),
       doc="Step function: 0 for ``x1 < 0``, ``x2`` at 0, 1 for ``x1 > 0`` (``np.heaviside``; "
           "``x2`` must be a number); its derivative is 0."),
    Fn(("floor",), "floor", ufunc="floor",
       rule="step function", identity="d/du floor(u) = 0  (by convention, also at the jumps)",
       partials=unary(_zero), domain=on((-3, 3), kinks=_at_integers, at=(((1.0,), (0.0,)),)),
       doc="The largest integer ``<= x`` (``np.floor`` on numbers); its derivative is 0."),
    Fn(("ceil",), "ceiling", ufunc="ceil",
       rule="step function", identity="d/du ceil(u) = 0  (by convention, also at the jumps)",
       partials=unary(_zero), domain=on((-3, 3), kinks=_at_integers, at=(((1.0,), (0.0,)),)),
       doc="The smallest integer ``>= x`` (``np.ceil`` on numbers); its derivative is 0."),
    Fn(("mod", "remainder"), "Mod", params="a, b", ufunc="mod",
       rule="modulo",
       identity="d mod(a, b) = da - floor(a/b) db  (mod(a, b) = a - b floor(a/b); no delta at "
                "the jumps)",
       partials=lambda a, b: (sp.S.One, -sp.floor(a / b)),
       reference=lambda a, b: a - b * sp.floor(a / b),
       domain=on((-5, 5), (1, 3), kinks=lambda a, b: (sp.sin(sp.pi * a / b),)),
       doc="Remainder with the sign of ``b``, ``a - b*floor(a/b)`` (``np.mod``, Python's "
           "``%``); its derivative is ``da - floor(a/b) db``, with no delta at the jumps."),
    Fn(("erf",), "erf", helper="_erf", helper_deps=("_cody_erf",),
       rule="error function", identity="d/du erf(u) = 2/sqrt(pi) exp(-u^2)",
       partials=unary(lambda u: 2 / sp.sqrt(sp.pi) * sp.exp(-(u**2))),
       domain=on((-4, 4)), doc=f"Error function {_VECTORIZED}."),
    Fn(("erfc",), "erfc", build=lambda x: F.erfc(x), helper="_erfc", helper_deps=("_cody_erf",),
       rule="error function", identity="d/du erfc(u) = -2/sqrt(pi) exp(-u^2)",
       partials=unary(lambda u: -2 / sp.sqrt(sp.pi) * sp.exp(-(u**2))),
       domain=on((-3, 9)),
       doc="Complementary error function ``1 - erf(x)``, accurate where it is tiny "
           f"{_VECTORIZED}."),
    Fn(("sinc",), "sinc", build=lambda x: sp.sinc(sp.pi * x), ufunc="sinc", method="sinc",
       rule="sinc", identity="d/du sinc(u) = (cos(u) - sinc(u))/u  (0 at u = 0)",
       partials=unary(lambda u: F.sinc_d(1, u)),
       domain=on((-3, 3), kinks=_at_zero, at=(((0.0,), (0.0,)),)),  # closed forms: 0/0
       doc="NumPy's normalized ``sinc(x) = sin(pi x)/(pi x)``, 1 at 0 (``np.sinc`` on numbers); "
           "stored as SymPy's ``sinc(pi*x)``; ``sinc'(0) = 0``."),
    Fn((), "F:sinc_d", params="n, x", constant=(0,), helper="_sinc_d", int_args=(0,),
       rule="sinc", identity="d/du sinc_d(n, u) = sinc_d(n + 1, u)",
       partials=lambda n, u: (None, F.sinc_d(n + 1, u)),
       reference=lambda n, u: _sinc_reference(int(n), u),
       domain=on((1, 1), (-3, 3), kinks=lambda n, u: (u,))),
    Fn(("gamma",), "gamma", helper="_gamma", helper_deps=("_sinpi",), grows=True,
       rule="gamma function", identity="d/du gamma(u) = gamma(u) digamma(u)",
       partials=unary(lambda u: sp.gamma(u) * sp.polygamma(0, u)),
       domain=on((0.45, 7)), doc=f"Gamma function {_VECTORIZED}."),
    Fn(("loggamma",), "loggamma", helper="_loggamma", grows=True,
       rule="log-gamma", identity="d/du loggamma(u) = digamma(u)",
       partials=unary(lambda u: sp.polygamma(0, u)),
       domain=on((4.25, 13)), doc=f"``log(gamma(x))`` for ``x > 0`` {_VECTORIZED}."),
    Fn((), "polygamma", params="n, x", constant=(0,), helper="_polygamma", int_args=(0,),
       rule="polygamma", identity="d/du polygamma(n, u) = polygamma(n + 1, u)",
       partials=_polygamma_partials, domain=on((1, 1), (0.45, 7))),
    Fn(("max",), "Max", params="a, b, *more", ufunc="maximum", traced=("fmax",), method="nested",
       numeric=lambda *v: functools.reduce(np.maximum, v),
       rule="maximum", identity="d max(a, b) = [a > b] da + [b > a] db, ties split evenly",
       partials=_tie_shares,
       domain=on((-3, 3), (0, 4), (-1, 1), kinks=_ties,
                 at=(((1.0, 1.0), (0.5, 0.5)), ((2.0, 2.0, 2.0), (1 / 3, 1 / 3, 1 / 3)))),
       doc="The largest of two or more values (or of one list of them), elementwise."),
    Fn(("min",), "Min", params="a, b, *more", ufunc="minimum", traced=("fmin",), method="nested",
       numeric=lambda *v: functools.reduce(np.minimum, v),
       rule="minimum", identity="d min(a, b) = [a < b] da + [b < a] db, ties split evenly",
       partials=_min_shares,
       domain=on((-9, 9), (-3, 3), kinks=_ties, at=(((0.0, 0.0), (0.5, 0.5)),)),
       doc="The smallest of two or more values (or of one list of them), elementwise."),
    Fn(("relu",), "F:relu", template="_np.maximum({0}, 0.0)", numeric=lambda x: np.maximum(x, 0.0),
       rule="ReLU", identity="d/du relu(u) = [u > 0]  (0 at u = 0)",
       partials=unary(lambda u: sp.Heaviside(u, 0)), reference=lambda u: sp.Max(u, 0),
       domain=on((-7, 3), kinks=_at_zero, at=(((0.0,), (0.0,)),)),
       doc="Rectified linear unit ``max(x, 0)``; by convention ``relu'(0) = 0``."),
    Fn(("sigmoid",), "F:sigmoid", helper="_sigmoid", nesting=2,
       tensor_form=lambda u: 1 / (1 + sp.exp(sp.Min(-u, SIGMOID_CLIP))),
       rule="sigmoid", identity="d/du sigmoid(u) = sigmoid(u) (1 - sigmoid(u))",
       partials=unary(lambda u: F.sigmoid(u) * (1 - F.sigmoid(u))),
       reference=lambda u: 1 / (1 + sp.exp(-u)), domain=on((-16, 16)),
       doc="Logistic function ``1 / (1 + exp(-x))``, computed without overflow."),
    Fn(("softplus",), "F:softplus", template="_np.logaddexp(0.0, {0})",
       numeric=lambda x: np.logaddexp(0.0, x), nesting=2,
       rule="softplus", identity="d/du softplus(u) = sigmoid(u)",
       partials=unary(lambda u: F.sigmoid(u)), reference=lambda u: sp.log(1 + sp.exp(u)),
       domain=on((-8, 8)),
       doc="``log(1 + exp(x))``, computed without overflow (``np.logaddexp(0, x)``)."),
    Fn((), "F:tie_share", params="a, *args", helper="_argmax_share",
       rule="tie share", identity="d/du tie_share(u, ...) = 0  (piecewise constant)",
       partials=lambda *args: tuple(sp.S.Zero for _ in args), reference=_unique_max_indicator,
       domain=on((-3, 3), (-3, 3), (-2, 2), kinks=_ties)),
)


# -- reading the table -----------------------------------------------------------------------------
@functools.cache
def by_name() -> dict[str, Fn]:
    """Every name a string may call (canonical names and aliases) -> its row."""
    return {name: row for row in ROWS for name in row.names}


@functools.cache
def by_class_name() -> dict[str, Fn]:
    """The class name of each row's SymPy node (``"Max"``, ``"log1p"``, ``"relu"``) -> its row."""
    return {row.head.rpartition(":")[2]: row for row in ROWS if row.head}


def parse_names() -> frozenset[str]:
    """The function names of strings (the grammar's ``where`` aside)."""
    return frozenset(by_name())


@functools.cache
def _class(head: str) -> type:
    prefix, _, name = head.rpartition(":")
    return getattr(importlib.import_module(_HEAD_MODULES[prefix]), name)


def head_class(row: Fn) -> type:
    """The SymPy class of the row's node (imports SymPy)."""
    if not row.head:
        raise ValueError(f"{row.names[0]} has no node of its own")
    return _class(row.head)


def build_fn(row: Fn) -> Callable[..., Any]:
    """What a call of the function builds from SymPy arguments."""
    return row.build or head_class(row)


@functools.cache
def _signature(params: str) -> inspect.Signature:
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    parameters = []
    for param in params.split(", "):
        name, eq, default = param.partition("=")
        if name.startswith("*"):
            parameters.append(inspect.Parameter(name[1:], inspect.Parameter.VAR_POSITIONAL))
        elif eq:
            assert default == "None", param
            parameters.append(inspect.Parameter(name, kind, default=None))
        else:
            parameters.append(inspect.Parameter(name, kind))
    return inspect.Signature(parameters)


def signature(row: Fn) -> inspect.Signature:
    """The Python signature of ``row.params`` (``symdiff.math``'s functions have it)."""
    return _signature(row.params)


def arity(row: Fn) -> tuple[int, int | None]:
    """Least and most positional arguments (most None: any number)."""
    kinds = [p.default is inspect.Parameter.empty for p in signature(row).parameters.values()
             if p.kind is not inspect.Parameter.VAR_POSITIONAL]
    variadic = row.params.split(", ")[-1].startswith("*")
    return sum(kinds), None if variadic else len(kinds)


def keywords(row: Fn) -> tuple[str, ...]:
    """The optional parameters, which a string may also pass by keyword (``base`` of log)."""
    return tuple(p.name for p in signature(row).parameters.values() if p.default is None)


_COUNTS = ("no", "one", "two", "three", "four")


def usage(row: Fn) -> str:
    """How many arguments the function takes, as parse errors say it."""
    least, most = arity(row)
    params = row.params.split(", ")
    if most is None:
        return f"{_COUNTS[least]} or more arguments"
    if least == most:
        listed = "" if least == 1 else f" ({row.params})"
        return f"{_COUNTS[least]} argument{'s' if least != 1 else ''}{listed}"
    required = ", ".join(params[:least])
    optional = [p.partition("=")[0] for p in params[least:]]
    brackets = "".join(f"[, {p}" for p in optional) + "]" * len(optional)
    keywords = " or ".join(f"the keyword {p}=" for p in optional)
    return f"{_COUNTS[least]} or {_COUNTS[most]} arguments ({required}{brackets}) or {keywords}"


def numpy_names() -> frozenset[str]:
    """The ``_np.<name>`` functions printed code of the rows may call."""
    names = {row.ufunc for row in ROWS if row.ufunc}
    for row in ROWS:
        names.update(re.findall(r"_np\.(\w+)", row.template or ""))
    return frozenset(names)


def helper_dependencies() -> dict[str, tuple[str, ...]]:
    """Runtime helpers of the rows -> the helpers each calls (those listed too, calling none)."""
    deps: dict[str, tuple[str, ...]] = {}
    for row in ROWS:
        if row.helper:
            deps[row.helper] = row.helper_deps
            for dep in row.helper_deps:
                deps.setdefault(dep, ())
    return deps


def traced_numpy() -> dict[str, Fn]:
    """NumPy function name -> the row tracing maps it to (rows with names only)."""
    return {u: row for row in ROWS if row.names for u in (row.ufunc, *row.traced) if u}


def in_place_ufuncs() -> dict[type, str]:
    """SymPy class -> ufunc, for the functions tensor code applies in place (imports SymPy)."""
    return {head_class(row): row.ufunc for row in ROWS if row.in_place and row.ufunc}


def markdown() -> str:
    """The function table of the README (between its ``functions`` markers; a test checks it):
    one line per public row, with its aliases, what it is and its derivative rule."""
    lines = [
        "| function | also | what it is | derivative |",
        "|---|---|---|---|",
    ]
    for row in ROWS:
        if not row.names:
            continue
        call = f"`{row.names[0]}({row.params})`"
        aliases = " ".join(f"`{name}`" for name in row.names[1:])
        identity = f"`{row.identity}`" if row.identity else "as the power `x**(1/2)`"
        cells = (call, aliases, row.doc, identity)
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":  # python -m symdiff.registry markdown
    import sys

    if sys.argv[1:] != ["markdown"]:
        raise SystemExit("usage: python -m symdiff.registry markdown")
    sys.stdout.write(markdown())
