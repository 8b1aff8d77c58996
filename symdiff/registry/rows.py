"""The table: one :class:`~symdiff.registry.schema.Fn` row per elementwise function, in the order
of the rule table (which notebook 01 shows), with the partials, checks and constants the rows
share above it. This is the module a person reads to see what a function is and how it is
differentiated, printed, traced and tested."""

from __future__ import annotations

import functools
import math
from typing import Any

from .schema import CF, F, Fn, H, errors, np, on, sp, unary

#: ``sigmoid(u)`` in tensor code is ``1/(1 + exp(min(-u, SIGMOID_CLIP)))``: one ``exp``, which
#: never overflows in float32 or float64 (the value of ``symdiff.tensor.finish.SIGMOID_CLIP``).
SIGMOID_CLIP = 88


# -- partials and other pieces the rows share ------------------------------------------------------
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


def _polygamma_check(n: Any, x: Any) -> tuple[int, str] | None:
    if not (n.is_Integer and n >= 0):
        return 0, "the order n of polygamma(n, x) must be a whole number >= 0"
    return None


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


def _at_halves(u: Any) -> tuple[Any, ...]:
    return (sp.cos(sp.pi * u),)


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
    Fn(("sin",), "sin", ufunc="sin", in_place=True, passes=40,
       rule=TRIG, identity="d/du sin(u) = cos(u)", partials=unary(lambda u: sp.cos(u)),
       domain=on((-1, 5)), doc="Sine (``np.sin`` on numbers)."),
    Fn(("cos",), "cos", ufunc="cos", in_place=True, passes=40,
       rule=TRIG, identity="d/du cos(u) = -sin(u)", partials=unary(lambda u: -sp.sin(u)),
       domain=on((-4, 4)), doc="Cosine (``np.cos`` on numbers)."),
    Fn(("tan",), "tan", ufunc="tan", in_place=True,
       rule=TRIG, identity="d/du tan(u) = 1 + tan(u)^2",
       partials=unary(lambda u: 1 + sp.tan(u) ** 2),
       domain=on((-0.75, 0.75)), doc="Tangent (``np.tan`` on numbers)."),
    Fn(("asin", "arcsin"), "asin", ufunc="arcsin", standard="asin",
       rule=ITRIG, identity="d/du asin(u) = 1/sqrt(1 - u^2)",
       partials=unary(lambda u: 1 / sp.sqrt(1 - u**2)),
       domain=on((-0.5, 0.5)), doc="Inverse sine (``np.arcsin`` on numbers)."),
    Fn(("acos", "arccos"), "acos", ufunc="arccos", standard="acos",
       rule=ITRIG, identity="d/du acos(u) = -1/sqrt(1 - u^2)",
       partials=unary(lambda u: -1 / sp.sqrt(1 - u**2)),
       domain=on((-0.65, 0.65)), doc="Inverse cosine (``np.arccos`` on numbers)."),
    Fn(("atan", "arctan"), "atan", ufunc="arctan", numba="_atan", standard="atan", passes=6,
       rule=ITRIG, identity="d/du atan(u) = 1/(1 + u^2)", partials=unary(lambda u: 1 / (1 + u**2)),
       domain=on((-3, 12)), doc="Inverse tangent (``np.arctan`` on numbers)."),
    Fn(("sec",), "sec", template="1.0/_np.cos({0})", numeric=lambda x: 1.0 / np.cos(x),
       rule=TRIG, identity="d/du sec(u) = sec(u) tan(u)",
       partials=unary(lambda u: sp.sec(u) * sp.tan(u)), domain=on((-1, 1)),
       doc="Secant ``1/cos(x)`` (``1/np.cos(x)`` on numbers)."),
    Fn(("csc",), "csc", template="1.0/_np.sin({0})", numeric=lambda x: 1.0 / np.sin(x),
       rule=TRIG, identity="d/du csc(u) = -csc(u) cot(u)",
       partials=unary(lambda u: -sp.csc(u) * sp.cot(u)), domain=on((0.4, 2.7)),
       doc="Cosecant ``1/sin(x)`` (``1/np.sin(x)`` on numbers)."),
    Fn(("cot",), "cot", template="1.0/_np.tan({0})", numeric=lambda x: 1.0 / np.tan(x),
       rule=TRIG, identity="d/du cot(u) = -csc(u)^2",
       partials=unary(lambda u: -sp.csc(u) ** 2), domain=on((0.4, 2.7)),
       doc="Cotangent ``1/tan(x)`` (``1/np.tan(x)`` on numbers)."),
    Fn(("acot",), "acot", template="_np.arctan(1.0/{0})", numeric=lambda x: np.arctan(1.0 / x),
       rule=ITRIG, identity="d/du acot(u) = -1/(1 + u^2)",
       partials=unary(lambda u: -1 / (1 + u**2)), domain=on((0.4, 4)),
       doc="Inverse cotangent ``atan(1/x)``, in ``(-pi/2, pi/2]`` (``np.arctan(1/x)`` on "
           "numbers)."),
    Fn(("atan2", "arctan2"), "atan2", params="y, x", ufunc="arctan2", numba="_atan2",
       standard="atan2", passes=9,
       rule=ITRIG, identity="d atan2(y, x) = (x dy - y dx)/(x^2 + y^2)", partials=_atan2_partials,
       domain=on((1, 10), (-3, 3)),
       doc="The angle of the point ``(x, y)``, in ``(-pi, pi]`` "
           "(``np.arctan2(y, x)`` on numbers)."),
    Fn(("sinh",), "sinh", ufunc="sinh", numba="_sinh", in_place=True, passes=5, grows=True,
       rule=HYP, identity="d/du sinh(u) = cosh(u)", partials=unary(lambda u: sp.cosh(u)),
       domain=on((-4, 4)), doc="Hyperbolic sine (``np.sinh`` on numbers)."),
    Fn(("cosh",), "cosh", ufunc="cosh", numba="_cosh", in_place=True, passes=4, grows=True,
       rule=HYP, identity="d/du cosh(u) = sinh(u)", partials=unary(lambda u: sp.sinh(u)),
       domain=on((-2, 3)), doc="Hyperbolic cosine (``np.cosh`` on numbers)."),
    Fn(("tanh",), "tanh", ufunc="tanh", numba="_tanh", in_place=True, passes=7,
       rule=HYP, identity="d/du tanh(u) = 1 - tanh(u)^2",
       partials=unary(lambda u: 1 - sp.tanh(u) ** 2),
       domain=on((-6, 6)), doc="Hyperbolic tangent (``np.tanh`` on numbers)."),
    Fn(("asinh", "arcsinh"), "asinh", ufunc="arcsinh", standard="asinh",
       rule=IHYP, identity="d/du asinh(u) = 1/sqrt(u^2 + 1)",
       partials=unary(lambda u: 1 / sp.sqrt(u**2 + 1)),
       domain=on((-9, 9)), doc="Inverse hyperbolic sine (``np.arcsinh`` on numbers)."),
    Fn(("acosh", "arccosh"), "acosh", ufunc="arccosh", standard="acosh",
       rule=IHYP, identity="d/du acosh(u) = 1/sqrt(u^2 - 1)",
       partials=unary(lambda u: 1 / sp.sqrt(u**2 - 1)),
       domain=on((1.5, 9.5)), doc="Inverse hyperbolic cosine (``np.arccosh`` on numbers)."),
    Fn(("atanh", "arctanh"), "atanh", ufunc="arctanh", standard="atanh",
       rule=IHYP, identity="d/du atanh(u) = 1/(1 - u^2)", partials=unary(lambda u: 1 / (1 - u**2)),
       domain=on((-0.75, 0.75)), doc="Inverse hyperbolic tangent (``np.arctanh`` on numbers)."),
    Fn(("exp",), "exp", ufunc="exp", numba="_exp", in_place=True, passes=3, grows=True,
       rule="exponential", identity="d/du exp(u) = exp(u)", partials=unary(lambda u: sp.exp(u)),
       domain=on((-6, 6)), doc="Exponential (``np.exp`` on numbers)."),
    Fn(("exp2",), "CF:exp2", ufunc="exp2", standard="", grows=True,
       rule="exponential", identity="d/du exp2(u) = exp2(u) log(2)",
       partials=unary(lambda u: CF.exp2(u) * sp.log(2)), reference=lambda u: 2**u,
       domain=on((-6, 6)), doc="``2**x`` (``np.exp2`` on numbers)."),
    Fn(("log", "ln"), "log", params="x, base=None", numba="_log", build=_log, check=_log_base_check,
       ufunc="log", numeric=_log_numeric, in_place=True, passes=4,
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
       instruction=True, passes=3, identity="as the power `x**(1/2)`",
       domain=on((0.35, 7)), doc="Square root (``np.sqrt`` on numbers)."),
    Fn(("cbrt",), "F:cbrt", ufunc="cbrt", standard="",
       rule="power", identity="d/du cbrt(u) = 1/(3 cbrt(u)^2)  (inf at u = 0)",
       partials=unary(lambda u: 1 / (3 * F.cbrt(u) ** 2)),
       reference=lambda u: sp.sign(u) * sp.Abs(u) ** sp.Rational(1, 3),
       domain=on((-2, 2), kinks=_at_zero, at=(((0.0,), (math.inf,)),)),
       doc="Real cube root (``np.cbrt`` on numbers): ``cbrt(-8) = -2``; ``cbrt'(0) = inf``."),
    Fn(("log1p",), "CF:log1p", ufunc="log1p", numba="_log1p", passes=5,
       rule="logarithm", identity="d/du log(1 + u) = 1/(1 + u)",
       partials=unary(lambda u: 1 / (1 + u)), reference=lambda u: sp.log(1 + u),
       domain=on((-0.25, 0.25)),
       doc="``log(1 + x)``, accurate for small ``x`` (``np.log1p`` on numbers)."),
    Fn(("expm1",), "CF:expm1", ufunc="expm1", numba="_expm1", passes=5, grows=True,
       rule="exponential", identity="d/du (exp(u) - 1) = exp(u)",
       partials=unary(lambda u: sp.exp(u)), reference=lambda u: sp.exp(u) - 1,
       domain=on((-2, 1)),
       doc="``exp(x) - 1``, accurate for small ``x`` (``np.expm1`` on numbers)."),
    Fn(("logaddexp",), "NN:logaddexp", params="a, b", ufunc="logaddexp", passes=100,
       rule="log-sum-exp",
       identity="d log(exp(a) + exp(b)) = sigmoid(a - b) da + sigmoid(b - a) db",
       partials=_logaddexp_partials, reference=lambda a, b: sp.log(sp.exp(a) + sp.exp(b)),
       domain=on((-9, 9), (-6, 6)),
       doc="``log(exp(a) + exp(b))``, computed without overflow (``np.logaddexp`` on numbers)."),
    Fn(("logaddexp2",), "NN:logaddexp2", params="a, b", ufunc="logaddexp2", standard="",
       rule="log-sum-exp",
       identity="d log2(2^a + 2^b) = sigmoid((a - b) log(2)) da + sigmoid((b - a) log(2)) db",
       partials=lambda a, b: (F.sigmoid((a - b) * sp.log(2)), F.sigmoid((b - a) * sp.log(2))),
       reference=lambda a, b: sp.log(2**a + 2**b) / sp.log(2),
       domain=on((-9, 9), (-6, 6)),
       doc="``log2(2**a + 2**b)``, computed without overflow (``np.logaddexp2`` on numbers)."),
    Fn(("hypot",), "CF:hypot", params="a, b", ufunc="hypot", passes=70,
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
    Fn(("abs",), "Abs", ufunc="abs", instruction=True, traced=("fabs",), in_place=True,
       rule="absolute value", identity="d/du |u| = sign(u)  (0 at u = 0)",
       partials=unary(lambda u: sp.sign(u)),
       domain=on((-6, 6), kinks=_at_zero, at=(((0.0,), (0.0,)),)),
       doc="Absolute value (``np.abs`` on numbers); by convention ``abs'(0) = 0``."),
    Fn(("sign",), "sign", ufunc="sign", instruction=True,
       rule="sign", identity="d/du sign(u) = 0  (by convention, also at 0)", partials=unary(_zero),
       domain=on((-9, 9), kinks=_at_zero, at=(((0.0,), (0.0,)),)),
       doc="Sign: -1, 0 or 1 (``np.sign`` on numbers); its derivative is 0."),
    Fn(("heaviside",), "Heaviside", params="x1, x2", constant=(1,), build=_heaviside,
       check=_heaviside_check, ufunc="heaviside", standard="", method="heaviside",
       rule="step function", identity="d/du H(u) = 0  (by convention, also at 0)",
       partials=lambda u, *h0: (sp.S.Zero, *(None for _ in h0)),
       # np.heaviside is a slow ufunc (10x np.sign on 64K doubles); the step at 1/2 (the
       # gradient of max(x, 0) and relu's ties) is (sign(u) + 1)/2 exactly, nan and -0.0 too
       tensor_form=lambda u, *h0: (sp.sign(u) + 1) / 2 if h0 and h0[0] == sp.Rational(1, 2)
       else sp.Heaviside(u, *h0),
       domain=on((-6, 6), (0.5, 0.5), kinks=_at_zero),
       doc="Step function: 0 for ``x1 < 0``, ``x2`` at 0, 1 for ``x1 > 0`` (``np.heaviside``; "
           "``x2`` must be a number); its derivative is 0."),
    Fn(("floor",), "floor", ufunc="floor", instruction=True,
       rule="step function", identity="d/du floor(u) = 0  (by convention, also at the jumps)",
       partials=unary(_zero), domain=on((-3, 3), kinks=_at_integers, at=(((1.0,), (0.0,)),)),
       doc="The largest integer ``<= x`` (``np.floor`` on numbers); its derivative is 0."),
    Fn(("ceil",), "ceiling", ufunc="ceil", instruction=True,
       rule="step function", identity="d/du ceil(u) = 0  (by convention, also at the jumps)",
       partials=unary(_zero), domain=on((-3, 3), kinks=_at_integers, at=(((1.0,), (0.0,)),)),
       doc="The smallest integer ``>= x`` (``np.ceil`` on numbers); its derivative is 0."),
    Fn(("rint",), "F:rint", ufunc="rint", traced=("round", "around"), standard="round",
       instruction=True,
       rule="step function", identity="d/du rint(u) = 0  (by convention, also at the jumps)",
       partials=unary(_zero), reference=lambda u: sp.floor(u + sp.S.Half),  # but at halves
       domain=on((-3, 3), kinks=_at_halves, at=(((1.0,), (0.0,)),)),
       doc="The nearest integer, halves to even (``np.rint``; ``np.round`` with 0 decimals); its "
           "derivative is 0."),
    Fn(("trunc",), "F:trunc", ufunc="trunc", instruction=True, traced=("fix",),
       rule="step function", identity="d/du trunc(u) = 0  (by convention, also at the jumps)",
       partials=unary(_zero), reference=lambda u: sp.sign(u) * sp.floor(sp.Abs(u)),
       domain=on((-3, 3), kinks=_at_integers, at=(((1.0,), (0.0,)),)),
       doc="The integer part, rounded towards zero (``np.trunc``, ``np.fix``); its derivative "
           "is 0."),
    Fn(("mod", "remainder"), "Mod", params="a, b", ufunc="mod", standard="remainder",
       rule="modulo",
       identity="d mod(a, b) = da - floor(a/b) db  (mod(a, b) = a - b floor(a/b); no delta at "
                "the jumps)",
       partials=lambda a, b: (sp.S.One, -sp.floor(a / b)),
       reference=lambda a, b: a - b * sp.floor(a / b),
       domain=on((-5, 5), (1, 3), kinks=lambda a, b: (sp.sin(sp.pi * a / b),)),
       doc="Remainder with the sign of ``b``, ``a - b*floor(a/b)`` (``np.mod``, Python's "
           "``%``); its derivative is ``da - floor(a/b) db``, with no delta at the jumps."),
    Fn(("fmod",), "F:fmod", params="a, b", ufunc="fmod", standard="",
       rule="modulo",
       identity="d fmod(a, b) = da - trunc(a/b) db  (fmod(a, b) = a - b trunc(a/b); no delta at "
                "the jumps)",
       partials=lambda a, b: (sp.S.One, -F.trunc(a / b)),
       reference=lambda a, b: a - b * sp.sign(a / b) * sp.floor(sp.Abs(a / b)),
       domain=on((-5, 5), (1, 3), kinks=lambda a, b: (sp.sin(sp.pi * a / b),)),
       doc="Remainder with the sign of ``a``, ``a - b*trunc(a/b)`` (``np.fmod``, C's ``fmod``); "
           "its derivative is ``da - trunc(a/b) db``, with no delta at the jumps."),
    Fn(("copysign",), "F:copysign", params="a, b", ufunc="copysign", instruction=True,
       rule="sign transfer",
       identity="d copysign(a, b) = sign(a) copysign(1, b) da  (0 at a = 0; no delta in b)",
       partials=lambda a, b: (sp.sign(a) * F.copysign(1, b), sp.S.Zero),
       reference=lambda a, b: sp.Abs(a) * sp.sign(b),
       domain=on((-3, 3), (-3, 3), kinks=lambda a, b: (a, b)),
       doc="``|a|`` with the sign of ``b`` (``np.copysign``); its derivative in ``a`` is "
           "``sign(a)`` times that sign (0 at ``a = 0``), in ``b`` 0."),
    Fn(("erf",), "erf", helper="_erf", scipy=("erf",), helper_deps=("_cody_erf",),
       rule="error function", identity="d/du erf(u) = 2/sqrt(pi) exp(-u^2)",
       partials=unary(lambda u: 2 / sp.sqrt(sp.pi) * sp.exp(-(u**2))),
       domain=on((-4, 4)), doc=f"Error function {_VECTORIZED}."),
    Fn(("erfc",), "erfc", build=lambda x: F.erfc(x), helper="_erfc", scipy=("erfc",),
       helper_deps=("_cody_erf",),
       rule="error function", identity="d/du erfc(u) = -2/sqrt(pi) exp(-u^2)",
       partials=unary(lambda u: -2 / sp.sqrt(sp.pi) * sp.exp(-(u**2))),
       domain=on((-3, 9)),
       doc="Complementary error function ``1 - erf(x)``, accurate where it is tiny "
           f"{_VECTORIZED}."),
    Fn(("log_ndtr",), "F:log_ndtr", helper="_log_ndtr", helper_deps=("_cody_erf",),
       scipy=("log_ndtr",),
       rule="log normal distribution function",
       identity="d/du log_ndtr(u) = exp(-u^2/2 - log_ndtr(u)) / sqrt(2 pi)",
       partials=unary(lambda u: sp.exp(-u**2 / 2 - F.log_ndtr(u)) / sp.sqrt(2 * sp.pi)),
       reference=lambda u: sp.log(sp.erfc(-u / sp.sqrt(2)) / 2), domain=on((-8, 8)),
       doc="``log(ndtr(x))``, the log of the standard normal distribution function "
           "``(1 + erf(x/sqrt(2)))/2``, accurate far in both tails (``scipy.special.log_ndtr``) "
           f"{_VECTORIZED}."),
    Fn(("sinc",), "sinc", build=lambda x: sp.sinc(sp.pi * x), ufunc="sinc", method="sinc",
       standard="",
       rule="sinc",
       identity="d/du [sin(u)/u] = cos(u)/u - sin(u)/u^2  (0 at u = 0; sinc(x) is sin(u)/u "
                "at u = pi x)",
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
       scipy=("gamma",),
       rule="gamma function", identity="d/du gamma(u) = gamma(u) digamma(u)",
       partials=unary(lambda u: sp.gamma(u) * sp.polygamma(0, u)),
       domain=on((0.45, 7)), doc=f"Gamma function {_VECTORIZED}."),
    # scipy.special.gammaln is log|gamma(x)|: the same for x > 0; this row's value is nan for
    # x <= 0, where gammaln is finite (its derivative, digamma, is the same everywhere)
    Fn(("loggamma",), "loggamma", helper="_loggamma", grows=True, scipy=("gammaln",),
       rule="log-gamma", identity="d/du loggamma(u) = digamma(u)",
       partials=unary(lambda u: sp.polygamma(0, u)),
       domain=on((4.25, 13)), doc=f"``log(gamma(x))`` for ``x > 0`` {_VECTORIZED}."),
    Fn(("digamma",), "", build=lambda x: sp.polygamma(0, x),  # polygamma(0, x): derived so
       numeric=lambda x: H._polygamma(0, x), identity="as `polygamma(0, x)`",
       domain=on((0.45, 7)),
       doc=f"Digamma function ``polygamma(0, x)``, the derivative of ``loggamma`` {_VECTORIZED}."),
    Fn(("polygamma",), "polygamma", params="n, x", constant=(0,), check=_polygamma_check,
       helper="_polygamma", int_args=(0,),
       rule="polygamma", identity="d/du polygamma(n, u) = polygamma(n + 1, u)",
       partials=_polygamma_partials, domain=on((1, 1), (0.45, 7)),
       doc="Polygamma function: the ``n``-th derivative of digamma, ``n`` a whole number "
           f">= 0 {_VECTORIZED}."),
    Fn(("max",), "Max", params="a, b, *more", ufunc="maximum", traced=("fmax",), method="nested",
       instruction=True,
       numeric=lambda *v: functools.reduce(np.maximum, v),
       rule="maximum", identity="d max(a, b) = [a > b] da + [b > a] db, ties split evenly",
       partials=_tie_shares,
       domain=on((-3, 3), (0, 4), (-1, 1), kinks=_ties,
                 at=(((1.0, 1.0), (0.5, 0.5)), ((2.0, 2.0, 2.0), (1 / 3, 1 / 3, 1 / 3)))),
       doc="The largest of two or more values (or of one list of them), elementwise."),
    Fn(("min",), "Min", params="a, b, *more", ufunc="minimum", traced=("fmin",), method="nested",
       instruction=True,
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
    Fn(("sigmoid",), "F:sigmoid", helper="_sigmoid", numba="_logistic", nesting=2, scipy=("expit",),
       # (Min unevaluated: the same node, without assumption queries comparing -u with 88)
       tensor_form=lambda u: 1 / (1 + sp.exp(sp.Min(-u, SIGMOID_CLIP, evaluate=False))),
       rule="sigmoid", identity="d/du sigmoid(u) = sigmoid(u) (1 - sigmoid(u))",
       partials=unary(lambda u: F.sigmoid(u) * (1 - F.sigmoid(u))),
       reference=lambda u: 1 / (1 + sp.exp(-u)), domain=on((-16, 16)),
       doc="Logistic function ``1 / (1 + exp(-x))``, computed without overflow."),
    Fn(("softplus",), "F:softplus", helper="_softplus", numba="_log1p_exp",
       numeric=lambda x: np.logaddexp(0.0, x), nesting=2,
       # what np.logaddexp(0, u) computes, in vectorised calls: a tenth of its time
       tensor_form=lambda u: sp.Max(u, 0, evaluate=False) + CF.log1p(sp.exp(-sp.Abs(u))),
       rule="softplus", identity="d/du softplus(u) = sigmoid(u)",
       partials=unary(lambda u: F.sigmoid(u)), reference=lambda u: sp.log(1 + sp.exp(u)),
       domain=on((-8, 8)),
       doc="``log(1 + exp(x))``, computed without overflow (``max(x, 0) + log1p(exp(-|x|))``)."),
    Fn((), "F:tie_share", params="a, *args", helper="_argmax_share",
       rule="tie share", identity="d/du tie_share(u, ...) = 0  (piecewise constant)",
       partials=lambda *args: tuple(sp.S.Zero for _ in args), reference=_unique_max_indicator,
       domain=on((-3, 3), (-3, 3), (-2, 2), kinks=_ties)),
    Fn((), "F:held", template="({0})", numeric=lambda x: x, passes=0,
       rule="held value", identity="d/du held(u) = 1  (held(u) is u)",
       partials=unary(lambda u: sp.S.One), reference=lambda u: u, domain=on((-3, 3))),
)
