"""Runtime helpers that generated gradient modules embed verbatim.

symdiff emits standalone Python modules whose only imports are ``numpy`` (bound to ``_np``) and
the standard library. A few SymPy functions have no NumPy counterpart (``erf``, ``gamma``,
``loggamma``, ``polygamma``) and the derivative of ``Max`` needs the tie-aware share
:func:`_argmax_share`. The code generator pastes the *source* of the helpers defined here into
the generated module (see :func:`helper_source`), so that the shipped code is exactly the code
this package tests.

Rules for every helper in this module (checked by ``tests/test_runtime.py``):

* It is a top-level function whose name starts with an underscore and it has a docstring.
* Its body refers only to ``_np`` (numpy), ``_math`` (the standard ``math`` module), builtins,
  the other helpers named for it in :data:`HELPER_DEPENDENCIES` and the two error classes
  ``_ShapeError`` and ``_ArgumentError``. A generated module binds those to ``ValueError`` and
  ``TypeError`` (:data:`symdiff.verify.ERROR_CONSTANTS`: a saved module runs on its own) and
  symdiff's loader rebinds them to :class:`~symdiff.errors.ShapeError` and
  :class:`~symdiff.errors.ArgumentError` (subclasses of those). Coefficient tables live inside
  the function body as tuples; there are no other module-level constants.
* It is vectorised: work is done by NumPy on whole arrays (masks and ``_np.where``); Python
  loops only run over coefficients or a bounded number of recurrence steps, never over elements.
* The special functions keep a float input's dtype (float32 in, float32 out; the arithmetic
  is done in float64 and rounded once at the end); integer and bool inputs give float64. A
  Python scalar or a 0-d array gives a NumPy scalar, like a NumPy ufunc; an n-d array gives an
  array of the same shape. Complex input raises ``TypeError``. (``_sinpi`` is an internal
  float64 building block of ``_gamma``, ``_cody_erf`` one of ``_erf`` and
  ``_erfc``.)
* No floating-point warnings are emitted (``_np.errstate``); special values follow the
  conventions documented per helper.

Conventions at poles and outside the real domain:

* ``_erf``: ``nan -> nan``, ``+-inf -> +-1``.
* ``_erfc``: ``nan -> nan``, ``erfc(+inf) = 0``, ``erfc(-inf) = 2``; 0 from ``x = 28`` on
  (underflow).
* ``_gamma``: like ``scipy.special.gamma``: ``gamma(+0.0) = +inf``, ``gamma(-0.0) = -inf``,
  ``nan`` at the negative integers and at ``-inf``; ``+inf`` for ``x > 171.62`` (overflow).
  For ``x < -171`` ``|gamma(x)|`` is subnormal or below: it loses digits and becomes a signed
  zero once ``gamma(-x)`` overflows (``x < -171.62``), as in scipy.
* ``_loggamma``: the real-valued ``log(gamma(x))`` on its real domain ``x > 0`` (what SymPy's
  ``loggamma`` is there); ``nan`` for ``x <= 0`` (including ``+-0.0``) and ``-inf``;
  ``loggamma(+inf) = +inf``.
* ``_polygamma``: ``nan`` at every pole ``x = 0, -1, -2, ...`` (either sign of zero) and at
  ``-inf``; ``polygamma(0, +inf) = +inf``, ``polygamma(n, +inf) = 0`` for ``n >= 1``.
* ``_argmax_share``: ``nan`` wherever any argument is ``nan`` (the maximum is undefined).
* ``_hypot_share``: 0 at ``a = b = 0`` (the gradient of ``hypot`` at the origin).
* ``_sinc_d``: the limits at 0 (``sinc_d(1, 0) = 0``); 0 at ``+-inf``.
"""

import inspect
import math as _math
from collections.abc import Iterable

import numpy as _np

from . import registry as _registry
from .errors import ArgumentError as _ArgumentError
from .errors import ShapeError as _ShapeError


def _sinpi(x):
    """``sin(pi * x)`` of a float array with exact argument reduction (exact zeros at integers)."""
    x = _np.asarray(x, dtype=_np.float64)
    with _np.errstate(invalid="ignore"):
        r = _np.fmod(_np.abs(x), 2.0)  # exact, in [0, 2); nan for +-inf
    sign = _np.where(r > 1.0, -1.0, 1.0) * _np.copysign(1.0, x)
    r = _np.where(r > 1.0, r - 1.0, r)  # exact (Sterbenz)
    r = _np.where(r > 0.5, 1.0 - r, r)  # exact (Sterbenz), now r in [0, 1/2]
    return sign * _np.sin(_np.pi * r)


def _cody_erf(x):
    """Cody's rational approximations of the error function for a float64 array ``x``:
    ``(small, erfc_abs)``, ``small = erf(x)`` where ``|x| <= 0.46875`` and ``erfc_abs =
    erfc(|x|)`` where ``|x| > 0.46875`` (each meaningless elsewhere). An internal building block
    of :func:`_erf` and :func:`_erfc`.

    W. J. Cody, "Rational Chebyshev approximations for the error function", Math. Comp. 23
    (1969), with the coefficients of his SPECFUN routine CALERF: ``x * P(x^2) / Q(x^2)`` for
    ``|x| <= 0.46875``, ``erfc = exp(-x^2) P(|x|) / Q(|x|)`` for ``|x| <= 4`` and ``erfc =
    exp(-x^2) / |x| * (1/sqrt(pi) + R(1/x^2) / x^2)`` beyond (0 once it underflows, from 28 on).
    """
    a = (
        3.16112374387056560e00,
        1.13864154151050156e02,
        3.77485237685302021e02,
        3.20937758913846947e03,
        1.85777706184603153e-1,
    )
    b = (
        2.36012909523441209e01,
        2.44024637934444173e02,
        1.28261652607737228e03,
        2.84423683343917062e03,
    )
    c = (
        5.64188496988670089e-1,
        8.88314979438837594e00,
        6.61191906371416295e01,
        2.98635138197400131e02,
        8.81952221241769090e02,
        1.71204761263407058e03,
        2.05107837782607147e03,
        1.23033935479799725e03,
        2.15311535474403846e-8,
    )
    d = (
        1.57449261107098347e01,
        1.17693950891312499e02,
        5.37181101862009858e02,
        1.62138957456669019e03,
        3.29079923573345963e03,
        4.36261909014324716e03,
        3.43936767414372164e03,
        1.23033935480374942e03,
    )
    p = (
        3.05326634961232344e-1,
        3.60344899949804439e-1,
        1.25781726111229246e-1,
        1.60837851487422766e-2,
        6.58749161529837803e-4,
        1.63153871373020978e-2,
    )
    q = (
        2.56852019228982242e00,
        1.87295284992346047e00,
        5.27905102951428412e-1,
        6.05183413124413191e-2,
        2.33520497626869185e-3,
    )
    y = _np.abs(x)
    with _np.errstate(all="ignore"):
        # |x| <= 0.46875: erf directly.
        z = _np.minimum(y, 0.46875) ** 2
        num = a[4] * z
        den = z
        for i in range(3):
            num = (num + a[i]) * z
            den = (den + b[i]) * z
        small = x * (num + a[3]) / (den + b[3])
        # 0.46875 < |x| <= 4: erfc.
        y2 = _np.clip(y, 0.46875, 4.0)
        num = c[8] * y2
        den = y2
        for i in range(7):
            num = (num + c[i]) * y2
            den = (den + d[i]) * y2
        mid = (num + c[7]) / (den + d[7])
        # |x| > 4; from 28 on exp(-x^2) underflows to 0.
        y3 = _np.clip(y, 4.0, 28.0)
        z = 1.0 / (y3 * y3)
        num = p[5] * z
        den = z
        for i in range(4):
            num = (num + p[i]) * z
            den = (den + q[i]) * z
        far = (5.6418958354775628695e-1 - z * (num + p[4]) / (den + q[4])) / y3
        yy = _np.where(y <= 4.0, y2, y3)
        # exp(-y^2) without the rounding error of y*y: y^2 = s^2 + (y - s)(y + s), s = y to 1/16.
        s = _np.trunc(yy * 16.0) / 16.0
        erfc_abs = _np.exp(-s * s) * _np.exp(-(yy - s) * (yy + s)) * _np.where(y <= 4.0, mid, far)
    return small, erfc_abs


def _erf(x):
    """Error function of a real array, from Cody's approximations (:func:`_cody_erf`):
    ``erf`` directly for ``|x| <= 0.46875``, ``1 - erfc(|x|)`` with the sign of ``x`` beyond."""
    x = _np.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError(f"_erf needs real input, got dtype {x.dtype}")
    dtype = x.dtype if x.dtype.kind == "f" else _np.dtype(_np.float64)
    x = x.astype(_np.float64)
    small, erfc_abs = _cody_erf(x)
    with _np.errstate(all="ignore"):
        big = _np.copysign((0.5 - erfc_abs) + 0.5, x)
        out = _np.where(_np.abs(x) <= 0.46875, small, big).astype(dtype)
    return out[()] if out.ndim == 0 else out


def _erfc(x):
    """Complementary error function ``1 - erf(x)`` of a real array, to full relative precision
    where it is tiny (``x`` large), unlike ``1 - erf(x)``: from Cody's approximations
    (:func:`_cody_erf`), ``1 - erf(x)`` for ``|x| <= 0.46875``, ``erfc(x)`` for ``x > 0.46875``
    and ``2 - erfc(|x|)`` below ``-0.46875``. ``erfc(+inf) = 0``, ``erfc(-inf) = 2``,
    ``nan -> nan``.
    """
    x = _np.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError(f"_erfc needs real input, got dtype {x.dtype}")
    dtype = x.dtype if x.dtype.kind == "f" else _np.dtype(_np.float64)
    x = x.astype(_np.float64)
    small, erfc_abs = _cody_erf(x)
    with _np.errstate(all="ignore"):
        big = _np.where(x < 0.0, 2.0 - erfc_abs, erfc_abs)
        out = _np.where(_np.abs(x) <= 0.46875, 1.0 - small, big).astype(dtype)
    return out[()] if out.ndim == 0 else out


def _gamma(x):
    """Gamma function of a real array.

    For ``y >= 1/2`` the Lanczos approximation ``gamma(y) = L(y) (y + g - 1/2)^(y - 1/2) /
    exp(y + g - 1/2)`` with Boost's ``lanczos13m53`` rational ``L`` (g = 6.0246..., the set
    CPython's ``math.gamma`` uses), including its correction for the rounding of ``y + g - 1/2``
    and the power split in two halves so that it overflows only where gamma does. Then
    ``gamma(x) = gamma(x + 1) / x`` on ``(0, 1/2)`` and the reflection
    ``gamma(x) = pi / (sin(pi x) gamma(1 - x))`` for ``x < 0`` (with ``sin(pi x)`` reduced
    exactly, and ``gamma(1 - x) = -x gamma(-x)`` for ``x <= -1/2`` as ``1 - x`` may round).
    Poles as in ``scipy.special.gamma``: ``+inf`` at ``+0.0``, ``-inf`` at ``-0.0``, ``nan``
    at the negative integers and at ``-inf``; ``+inf`` on overflow (``x > 171.62``).
    """
    x = _np.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError(f"_gamma needs real input, got dtype {x.dtype}")
    dtype = x.dtype if x.dtype.kind == "f" else _np.dtype(_np.float64)
    x = x.astype(_np.float64)
    num = (
        23531376880.410759688572007674451636754734846804940,
        42919803642.649098768957899047001988850926355848959,
        35711959237.355668049440185451547166705960488635843,
        17921034426.037209699919755754458931112671403265390,
        6039542586.3520280050642916443072979210699388420708,
        1439720407.3117216736632230727949123939715485786772,
        248874557.86205415651146038641322942321632125127801,
        31426415.585400194380614231628318205362874684987640,
        2876370.6289353724412254090516208496135991145378768,
        186056.26539522349504029498971604569928220784236328,
        8071.6720023658162106380029022722506138218516325024,
        210.82427775157934587250973392071336271166969580291,
        2.5066282746310002701649081771338373386264310793408,
    )
    den = (
        0.0,
        39916800.0,
        120543840.0,
        150917976.0,
        105258076.0,
        45995730.0,
        13339535.0,
        2637558.0,
        357423.0,
        32670.0,
        1925.0,
        66.0,
        1.0,
    )
    g = 6.024680040776729583740234375
    gmh = 5.524680040776729583740234375  # g - 1/2
    with _np.errstate(all="ignore"):
        # Argument of the Lanczos sum, y >= 1/2 (or nan); -x is exact where 1 - x would round.
        y = _np.where(x > 0.0, x + 1.0, _np.where(x <= -0.5, -x, 1.0 - x))
        y = _np.where(x >= 0.5, x, y)
        y = _np.minimum(y, 180.0)  # gamma(180) overflows: keeps inf an inf, never inf * 0
        # L(y): a polynomial ratio in y below 5, in 1/y from 5 on (no overflow, less error).
        lo = _np.minimum(y, 5.0)
        hi = _np.maximum(y, 5.0)
        n_lo = _np.zeros_like(y)
        d_lo = _np.zeros_like(y)
        for i in range(12, -1, -1):
            n_lo = n_lo * lo + num[i]
            d_lo = d_lo * lo + den[i]
        n_hi = _np.zeros_like(y)
        d_hi = _np.zeros_like(y)
        for i in range(13):
            n_hi = n_hi / hi + num[i]
            d_hi = d_hi / hi + den[i]
        lanczos = _np.where(y < 5.0, n_lo / d_lo, n_hi / d_hi)
        t = y + gmh
        # Rounding error of t (computed exactly) and its first-order effect on the result.
        err = _np.where(y > gmh, (t - y) - gmh, (t - gmh) - y) * g / t
        r = lanczos / _np.exp(t)
        r = r + err * r
        half_power = t ** ((y - 0.5) * 0.5)
        gam = r * half_power * half_power
        # x < 0: gamma(x) = pi / (sin(pi x) gamma(1 - x)) and gamma(1 - x) = -x gamma(-x).
        # Divide by gamma(-x) last: the result may be tiny while the product would overflow.
        refl = _np.where(x <= -0.5, -_np.pi / (x * _sinpi(x)), _np.pi / _sinpi(x)) / gam
        out = _np.where(x >= 0.5, gam, _np.where(x > 0.0, gam / x, refl))
        out = _np.where(x == 0.0, _np.copysign(_np.inf, x), out)
        out = _np.where((x < 0.0) & (x == _np.floor(x)), _np.nan, out).astype(dtype)
    return out[()] if out.ndim == 0 else out


def _loggamma(x):
    """Real ``log(gamma(x))`` for ``x > 0``; ``nan`` for ``x <= 0``.

    On ``(0, 5/2]`` the Taylor series of ``loggamma(2 + z)`` (coefficients ``1 - euler_gamma``
    and ``(-1)^k (zeta(k) - 1) / k``, Abramowitz & Stegun 6.1.33) for ``|z| <= 1/2`` combined
    with ``loggamma(x) = loggamma(x + 1) - log(x)``; this is accurate relative to the value even
    next to the zeros at 1 and 2. On ``(5/2, 10)`` the downward recurrence to that series, and
    Stirling's series (with Bernoulli numbers) from 10 on; ``+inf`` (overflow) past 2.5e305.
    """
    x = _np.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError(f"_loggamma needs real input, got dtype {x.dtype}")
    dtype = x.dtype if x.dtype.kind == "f" else _np.dtype(_np.float64)
    x = x.astype(_np.float64)
    series = (
        0.42278433509846713,
        0.3224670334241132,
        -0.0673523010531981,
        0.020580808427784546,
        -0.007385551028673986,
        0.0028905103307415234,
        -0.001192753911703261,
        0.0005096695247430425,
        -0.00022315475845357939,
        9.945751278180853e-05,
        -4.492623673813314e-05,
        2.050721277567069e-05,
        -9.439488275268397e-06,
        4.374866789907488e-06,
        -2.039215753801366e-06,
        9.55141213040742e-07,
        -4.492469198764566e-07,
        2.1207184805554665e-07,
        -1.0043224823968099e-07,
        4.7698101693639804e-08,
        -2.2711094608943164e-08,
        1.0838659214896955e-08,
        -5.183475041970047e-09,
        2.4836745438024785e-09,
        -1.1921401405860912e-09,
        5.731367241678862e-10,
        -2.7595228851242334e-10,
        1.330476437424449e-10,
    )
    # Stirling: B_2k / (2k (2k - 1)) for k = 1..10.
    stirling = (
        1.0 / 12.0,
        -1.0 / 360.0,
        1.0 / 1260.0,
        -1.0 / 1680.0,
        1.0 / 1188.0,
        -691.0 / 360360.0,
        1.0 / 156.0,
        -3617.0 / 122400.0,
        43867.0 / 244188.0,
        -174611.0 / 125400.0,
    )
    with _np.errstate(all="ignore"):
        low = _np.clip(x, 0.0, 10.0)
        # Shift 2.5 < x < 10 down into [1.5, 2.5): loggamma(x) = loggamma(x - k) + log(prod).
        shift = _np.where(low > 2.5, _np.ceil(low - 2.5), 0.0)
        prod = _np.ones_like(low)
        for k in range(1, 9):
            prod = _np.where(k <= shift, prod * (low - k), prod)
        low = low - shift  # exact; now in [0, 2.5]
        # z in [-1/2, 1/2]: loggamma(2 + z) by its Taylor series; all subtractions are exact.
        z = _np.where(low < 0.5, low, _np.where(low < 1.5, low - 1.0, low - 2.0))
        acc = _np.zeros_like(z)
        for coef in series[::-1]:
            acc = (acc + coef) * z
        acc = acc - _np.where(low < 1.5, _np.log1p(z), 0.0)
        acc = acc - _np.where(low < 0.5, _np.log(low), 0.0)
        small = acc + _np.log(prod)
        # Stirling's series for x >= 10.
        big_x = _np.maximum(x, 10.0)
        w = 1.0 / (big_x * big_x)
        corr = _np.zeros_like(w)
        for coef in stirling[::-1]:
            corr = corr * w + coef
        big = (big_x - 0.5) * _np.log(big_x) - big_x + 0.9189385332046728 + corr / big_x
        big = _np.where(x == _np.inf, _np.inf, big)
        out = _np.where(x < 10.0, small, big)
        out = _np.where(x > 0.0, out, _np.nan).astype(dtype)
    return out[()] if out.ndim == 0 else out


def _polygamma(n, x):
    """Polygamma function ``psi^(n)(x)`` (``n = 0``: digamma) of a real array; ``n`` an int >= 0.

    For ``x > 0``: the recurrence ``psi_n(x) = psi_n(x + 1) - (-1)^n n! / x^(n+1)`` moves ``x``
    above ``10 + n`` (at most ``11 + n`` vectorised steps), then the asymptotic series with the
    Bernoulli numbers ``B_2 .. B_24``. Digamma near its positive zero ``1.4616...`` uses its
    Taylor series there, so it stays accurate relative to the value. For ``x < 0``: the
    reflection ``psi_n(x) = (-1)^n psi_n(1 - x) - pi^(n+1) P_n(cot(pi x))`` where ``P_n`` is
    the n-th derivative polynomial of cot (``d^n/dt^n cot(pi t) = pi^n P_n(cot(pi t))``);
    its terms never cancel, so e.g. half-integers are exact to rounding. Close to the zeros of
    ``psi_n`` on the negative axis the error is absolute (a few ulp of the larger term).
    ``nan`` at the poles ``0, -1, -2, ...`` and at ``-inf``. Orders up to ``n = 160`` work;
    beyond, ``n!`` or the coefficients of ``P_n`` overflow a float (``OverflowError``).
    """
    if isinstance(n, bool) or int(n) != n or n < 0:
        raise ValueError(f"_polygamma needs an integer order n >= 0, got {n!r}")
    n = int(n)
    x = _np.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError(f"_polygamma needs real input, got dtype {x.dtype}")
    dtype = x.dtype if x.dtype.kind == "f" else _np.dtype(_np.float64)
    x = x.astype(_np.float64)
    bernoulli = (
        1.0 / 6.0,
        -1.0 / 30.0,
        1.0 / 42.0,
        -1.0 / 30.0,
        5.0 / 66.0,
        -691.0 / 2730.0,
        7.0 / 6.0,
        -3617.0 / 510.0,
        43867.0 / 798.0,
        -174611.0 / 330.0,
        854513.0 / 138.0,
        -236364091.0 / 2730.0,
    )
    # Taylor coefficients psi^(k)(x0) / k! of digamma at its zero x0 = x0_hi + x0_lo.
    root_series = (
        0.9676722454476212,
        -0.4427631689835921,
        0.258499760955651,
        -0.16394270544240652,
        0.10782405069126237,
        -0.07219956125645471,
        0.04880428816414311,
        -0.03316112647484736,
        0.022597648232218104,
        -0.01542476590494896,
        0.010538791616612175,
        -0.007204534386356869,
        0.004926781395729853,
        -0.003369801655439328,
        0.002305126326734928,
        -0.0015769367714301972,
        0.0010788252019162967,
        -0.0007380709389960052,
        0.000504953265834602,
        -0.0003454680251063077,
    )
    x0_hi = 1.4616321449683622
    x0_lo = 9.549995429965697e-17
    sign = -1.0 if n % 2 else 1.0  # (-1)^n
    with _np.errstate(all="ignore"):
        pole = (x <= 0.0) & (x == _np.floor(x))  # includes -inf
        xs = _np.where(pole, 0.5, x)
        neg = xs < 0.0
        y = _np.where(neg, 1.0 - xs, xs)  # y > 0 (or inf / nan)
        # Upward recurrence to y + m >= 10 + n.
        top = 10.0 + n
        m = _np.where(y < top, _np.ceil(top - y), 0.0)
        acc = _np.zeros_like(y)
        for j in range(int(m.max()) if m.size else 0):
            acc = acc + _np.where(j < m, (y + j) ** -(n + 1.0), 0.0)
        ys = y + m
        w = 1.0 / (ys * ys)
        ser = _np.zeros_like(w)
        if n == 0:
            for k in range(len(bernoulli), 0, -1):
                ser = (ser + bernoulli[k - 1] / (2 * k)) * w
            val = _np.log(ys) - 0.5 / ys - ser - acc
            h = (y - x0_hi) - x0_lo
            near = _np.zeros_like(h)
            for coef in root_series[::-1]:
                near = (near + coef) * h
            val = _np.where(_np.abs(h) < 0.2, near, val)
        else:
            # psi_n(x) ~ (-1)^(n+1) (n-1)! x^-n [1 + n / (2x) + sum_k B_2k C(2k+n-1, 2k) x^-2k]
            for k in range(len(bernoulli), 0, -1):
                ser = (ser + bernoulli[k - 1] * float(_math.comb(2 * k + n - 1, 2 * k))) * w
            lead = (1.0 + n / (2.0 * ys) + ser) * float(_math.factorial(n - 1))
            val = -sign * (lead * ys ** -float(n) + float(_math.factorial(n)) * acc)
        # Reflection for x < 0 with r = x - round(x) in [-1/2, 1/2] (exact).
        r = xs - _np.rint(xs)
        cot = _np.sin(_np.pi * (0.5 - _np.abs(r))) / _np.sin(_np.pi * r)
        poly = [0, 1]  # P_0(c) = c;  P_{k+1}(c) = -(1 + c^2) P_k'(c)
        for _ in range(n):
            deriv = [i * poly[i] for i in range(1, len(poly))] + [0, 0]
            poly = [-(deriv[i] + (deriv[i - 2] if i >= 2 else 0)) for i in range(len(deriv))]
        pval = _np.full_like(cot, float(poly[-1]))  # leading coefficient: cot = inf stays inf
        for coef in poly[-2::-1]:
            pval = pval * cot + float(coef)
        refl = sign * val - _np.pi ** (n + 1) * pval
        out = _np.where(neg, refl, val)
        out = _np.where(pole, _np.nan, out).astype(dtype)
    return out[()] if out.ndim == 0 else out


def _argmax_share(a, *args):
    """Share of the gradient of ``max(*args)`` that goes to ``a`` (one of ``args``).

    ``(a == m) / #{j : args[j] == m}`` with ``m`` the elementwise maximum, all broadcast
    together: 1 for the unique maximum, 0 for the others, ``1/k`` each on a k-way tie, ``nan``
    where an argument is ``nan``. The dtype is the float result type of the inputs (float32
    stays float32, integers give float64).
    """
    if not args:
        raise TypeError("_argmax_share needs at least one argument of max")
    # Float result type of the inputs; Python scalars do not widen it (as under NEP 50).
    dtypes = [_np.asarray(v).dtype for v in (a, *args) if type(v) not in (bool, int, float)]
    dtype = _np.result_type(*dtypes) if dtypes else _np.dtype(_np.float64)
    if dtype.kind != "f":
        dtype = _np.dtype(_np.float64)
    arrays = [_np.asarray(arg) for arg in args]
    m = arrays[0]
    for arr in arrays[1:]:
        m = _np.maximum(m, arr)
    count = _np.zeros(m.shape)
    for arr in arrays:
        count = count + (arr == m)
    hit = _np.asarray(a) == m
    with _np.errstate(all="ignore"):
        out = _np.where(count > 0.0, hit / _np.maximum(count, 1.0), _np.nan).astype(dtype)
    return out[()] if out.ndim == 0 else out


def _as_output(value, shape, dtype):
    """``value`` as an array of the broadcast ``shape`` and ``dtype`` (constants included)."""
    value = _np.asarray(value, dtype=dtype)
    if value.shape != shape:
        value = _np.broadcast_to(value, shape).copy()
    return value


def _in_blocks(formulas, inputs, shape, dtype):
    """``formulas(*inputs, shape, dtype)``, computed in blocks of about 8192 elements.

    Long arrays are cut along the first axis of the broadcast ``shape``: each block's
    temporaries stay in the CPU cache and their memory is reused, which beats full-length
    temporaries that each make a pass over main memory. Every element goes through the same
    operations either way, so the results are the same. Short arrays (under 32768 elements or
    4 rows) are computed in one go. ``formulas`` returns an array or nested tuples of arrays,
    each of shape ``leading axes + block shape``; the full arrays are allocated after the first
    block, with its dtypes. At a single point (``shape == ()``) the inputs are passed as NumPy
    scalars, whose arithmetic costs a fraction of that of 0-d arrays (the scalar power function
    may round the last bit differently from the array loop's).
    """
    if not shape:  # one point: NumPy scalars are several times quicker than 0-d arrays
        return formulas(*(a[()] for a in inputs), shape, dtype)
    rows = shape[0]
    row_size = 1
    for size in shape[1:]:
        row_size *= size
    if rows < 4 or rows * row_size < 32768:
        return formulas(*inputs, shape, dtype)
    step = max(1, 8192 // max(row_size, 1))
    cut = [a.ndim == len(shape) and a.shape[0] == rows for a in inputs]

    def allocate(block):
        if isinstance(block, tuple):
            return tuple(allocate(b) for b in block)
        return _np.empty(block.shape[: block.ndim - len(shape)] + shape, dtype=block.dtype)

    def store(full, block, where):
        if isinstance(block, tuple):
            for f, b in zip(full, block, strict=True):
                store(f, b, where)
        else:
            full[(slice(None),) * (block.ndim - len(shape)) + (where,)] = block

    result = None
    for start in range(0, rows, step):
        where = slice(start, min(start + step, rows))
        part = [a[where] if c else a for a, c in zip(inputs, cut, strict=True)]
        block = formulas(*part, (where.stop - start, *shape[1:]), dtype)
        result = allocate(block) if result is None else result
        store(result, block, where)
    return result


def _common_shape(names, *arrays):
    """The broadcast shape of ``arrays`` (the arguments ``names``); quick when they all have one
    shape (the usual call). Arguments that do not broadcast together raise ``_ShapeError``
    naming two of them and their shapes."""
    shape = arrays[0].shape
    for array in arrays:
        if array.shape != shape:
            break
    else:
        return shape
    seen = []
    for name, array in zip(names, arrays, strict=True):
        for other, before in seen:
            try:
                _np.broadcast_shapes(before.shape, array.shape)
            except ValueError:
                raise _ShapeError(
                    f"arguments {other!r} with shape {before.shape} and {name!r} with shape "
                    f"{array.shape} do not broadcast together (the arguments broadcast like "
                    "those of a NumPy ufunc)"
                ) from None
        seen.append((name, array))
    return _np.broadcast_shapes(*(a.shape for a in arrays))


def _float_dtype(names, *arrays):
    """The float dtype a call computes in: the promoted dtype of the argument arrays with
    ``1.0``, so integers and bools give float64 and float32 stays float32. An argument that is
    not real numbers (None, a string, complex numbers, an object array, a datetime) raises
    ``_ArgumentError`` naming it (``names`` are the arguments' names)."""
    try:
        dtype = _np.result_type(*arrays, 1.0)
    except TypeError:  # strings, datetimes, records: no common dtype with a float
        dtype = None
    if dtype is not None and dtype.kind == "f":
        return dtype
    for name, array in zip(names, arrays, strict=True):
        kind = array.dtype.kind
        if kind in "biuf":
            continue
        hint = ""
        if kind == "O" and array.ndim == 0 and array[()] is None:
            what = "is None"
        elif kind == "c":
            what = f"is complex (dtype {array.dtype})"
            hint = ": the functions are real; pass real and imaginary parts as separate arguments"
        elif kind in "US":
            what = f"is {'a string' if array.ndim == 0 else 'an array of strings'} ({array.dtype})"
        elif kind in "Mm":
            what = f"is a {'datetime' if kind == 'M' else 'timedelta'} ({array.dtype})"
            hint = ": convert it to numbers first, e.g. (t - t0) / np.timedelta64(1, 's')"
        elif kind == "O":
            what = "has dtype object (None, ints beyond int64, Decimal, Fraction, ... inside)"
            hint = ": convert it with np.asarray(..., dtype=float)"
        else:
            what = f"has dtype {array.dtype}"
        raise _ArgumentError(
            f"argument {name!r} {what}, not a real number or an array of them "
            f"(float, int or bool){hint}"
        )
    raise _ArgumentError(f"arguments {', '.join(names)} have no common float dtype ({dtype})")


def _float_arrays(names, *arrays):
    """``arrays`` (the arguments ``names``) as NumPy arrays of one float dtype (see
    ``_float_dtype``: integers and bools give float64, float32 stays float32, anything that is
    not real numbers is refused). The slow path of a tensor function's argument prelude, taken
    unless every argument is a float64 ndarray."""
    converted = []
    for name, array in zip(names, arrays, strict=True):
        try:
            converted.append(_np.asarray(array))
        except ValueError as error:  # nested lists of different lengths
            raise _ShapeError(f"argument {name!r} is not an array of one shape: {error}") from None
    dtype = _float_dtype(names, *converted)
    return tuple(a.astype(dtype, copy=False) for a in converted)


def _as_vector(v, n):
    """``v`` as an array whose first axis has the ``n`` components of a direction vector."""
    v = _np.asarray(v)
    if v.ndim == 0 or v.shape[0] != n:
        raise _ShapeError(
            f"argument '_v' must have the {n} components of the direction along its first axis, "
            f"got shape {v.shape}"
        )
    return v


def _sinc_d(n, x):
    """The n-th derivative of ``sin(x)/x`` (SymPy's unnormalized sinc) of a real array.

    Its Taylor series ``sum_k (-1)^k x^(2k - n) / ((2k + 1) (2k - n)!)`` for ``|x| < 2`` (no
    cancellation: every term is below 2 in size), and beyond the recurrence
    ``f^(n) = (sin^(n)(x) - n f^(n - 1)) / x`` from ``x f = sin(x)``, which is stable for
    ``|x| > n`` (used for n up to 2 times the threshold; the derivatives symdiff takes are of
    order 1 to 3). ``nan -> nan``; 0 at ``+-inf``.
    """
    x = _np.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError(f"_sinc_d needs real input, got dtype {x.dtype}")
    dtype = x.dtype if x.dtype.kind == "f" else _np.dtype(_np.float64)
    x = x.astype(_np.float64)
    n = int(n)
    with _np.errstate(all="ignore"):
        small = _np.where(_np.abs(x) < 2.0, x, 0.0)
        series = _np.zeros_like(small)
        for k in range(n // 2 + 30, (n + 1) // 2 - 1, -1):  # from the small terms up
            m = 2 * k - n
            series = series + (-1.0) ** k * small**m / ((2 * k + 1) * _math.factorial(m))
        big = _np.where(_np.abs(x) < 2.0, 2.0, x)
        f = _np.sin(big) / big
        for j in range(1, n + 1):
            f = (_np.sin(big + j * _np.pi / 2) - j * f) / big
        f = _np.where(_np.isinf(x), 0.0, f)
        out = _np.where(_np.abs(x) < 2.0, series, f).astype(dtype)
    return out[()] if out.ndim == 0 else out


def _sigmoid(x):
    """Logistic function ``1 / (1 + exp(-x))``: one ``exp``, accurate in both tails.

    It is computed as ``e / (1 + e)`` with ``e = exp(x)``: three passes over an array, the
    quotient written into ``e``. For ``x`` very negative ``e`` is tiny but exact to rounding and
    the quotient keeps full relative precision; for ``x`` large it is 1 to rounding. Where
    ``exp(x)`` overflows (``x > 709`` in float64, ``88`` in float32) or ``x`` is ``+inf`` (the
    quotient ``inf/inf``), the floating-point error is caught and the call falls back to
    ``1 / (1 + exp(-x))``, whose ``exp`` may overflow harmlessly (that warning is silenced):
    the same values to a few ulp. Float dtypes are kept; ``nan`` gives ``nan``.
    """
    try:
        with _np.errstate(over="raise", invalid="raise"):
            e = _np.exp(x)
            if e.ndim:  # a new array: the quotient goes into it
                return _np.divide(e, e + 1.0, out=e)
            return e / (e + 1.0)
    except FloatingPointError:
        with _np.errstate(over="ignore"):
            return 1.0 / (1.0 + _np.exp(-_np.asarray(x)))


def _hypot_share(a, b):
    """``a / hypot(a, b)``: the partial of ``hypot(a, b)`` in ``a``, in ``[-1, 1]``.

    0 where ``a = b = 0`` (the minimal-norm subgradient, as ``abs'(0) = 0``); ``sign(a)`` where
    ``a`` is infinite and ``b`` finite (0 for ``b`` infinite and ``a`` finite); ``nan`` where an
    argument is ``nan`` or both are infinite. Computed in float64 and rounded once to the
    arguments' float dtype (integers and bools give float64).
    """
    a = a if isinstance(a, float | int) else _np.asarray(a)
    b = b if isinstance(b, float | int) else _np.asarray(b)
    dtype = _np.result_type(a, b)
    if dtype.kind == "c":
        raise TypeError(f"_hypot_share needs real input, got dtype {dtype}")
    dtype = dtype if dtype.kind == "f" else _np.dtype(_np.float64)
    a, b = _np.asarray(a, dtype=_np.float64), _np.asarray(b, dtype=_np.float64)
    with _np.errstate(invalid="ignore", divide="ignore"):
        h = _np.hypot(a, b)
        share = a / _np.where(h == 0.0, 1.0, h)
        share = _np.where(_np.isinf(a) & _np.isfinite(b), _np.sign(a), share)
    return share.astype(dtype)[()]


def _prod_others(x, axes):
    """Per element of the array ``x``, the product of the *other* elements along ``axes``
    (a tuple): the gradient of ``prod(x, axes)``, without dividing by zero.

    When no product along the axes is zero (so ``x`` has no zero) it is ``prod(x) / x``: two
    passes. Otherwise zeros are replaced by 1 and counted: where another element along the
    axes is zero the result is 0, else the product of the nonzero elements over this one's (a
    lone zero gets the product of the rest). Where both branches apply they compute the same
    numbers (a product that underflows to 0 takes the second). Keeps a float dtype.
    """
    product = x.prod(axis=axes, keepdims=True)
    if product.all():
        return product / x
    zero = x == 0
    nonzero = _np.where(zero, 1, x)
    others = zero.sum(axis=axes, keepdims=True) - zero
    return _np.where(others == 0, nonzero.prod(axis=axes, keepdims=True) / nonzero, 0)


def _check_shapes(names, arrays, shapes, needs):
    """Check the arguments of a tensor function against their declared shapes.

    ``shapes[i]`` declares ``arrays[i]`` (named ``names[i]``): an int is a fixed size, a string
    a named dimension, which must have one size wherever it appears. ``needs`` pairs a named
    dimension with the least size the expression's literal indices require. Returns the sizes of
    the named dimensions in order of first appearance; raises ``_ShapeError`` naming the
    argument, its shape and the declared one.
    """
    sizes = {}
    source = {}
    for name, array, declared in zip(names, arrays, shapes, strict=True):
        actual = _np.shape(array)
        clash = None
        fits = len(actual) == len(declared)
        for size, dim in zip(actual, declared, strict=True) if fits else ():
            if dim.__class__ is not str:
                fits = size == dim
            elif dim not in sizes:
                sizes[dim] = size
                source[dim] = name
            elif sizes[dim] != size:
                fits, clash = False, dim
            if not fits:
                break
        if not fits:
            inner = ", ".join(str(d) for d in declared)
            text = f"({inner},)" if len(declared) == 1 else f"({inner})"
            why = "" if clash is None else (
                f", but dimension {clash!r} is {sizes[clash]} (from argument {source[clash]!r})"
            )
            raise _ShapeError(f"argument {name!r} has shape {actual}, expected {text}{why}")
    for dim, least in needs:
        if sizes[dim] < least:
            raise _ShapeError(
                f"dimension {dim!r} is {sizes[dim]} (from argument {source[dim]!r}), but the "
                f"expression indexes it up to {least}"
            )
    return tuple(sizes.values())


#: Every helper -> the helpers it calls: those of the argument checks and block loops here,
#: then those of the functions (the registry rows' ``helper``/``helper_deps``).
HELPER_DEPENDENCIES: dict[str, tuple[str, ...]] = {
    "_as_output": (),
    "_check_shapes": (),
    "_common_shape": (),
    "_in_blocks": (),
    "_as_vector": (),
    "_float_arrays": ("_float_dtype",),
    "_float_dtype": (),
    "_prod_others": (),
    **_registry.helper_dependencies(),
}


def helper_source(names: Iterable[str]) -> str:
    """Source of the named helpers and everything they depend on, ready to paste into a module.

    ``names`` is an iterable of helper names (a single ``str`` counts as one name). The helpers
    and their transitive :data:`HELPER_DEPENDENCIES` are emitted sorted by name, separated by
    two blank lines, ending with a newline; no names give ``""``. An unknown name raises
    ``KeyError``. The text needs ``_np`` (numpy) and ``_math`` (math) bound where it is run.
    """
    if isinstance(names, str):
        names = [names]
    wanted: set[str] = set()
    pending = list(names)
    while pending:
        name = pending.pop()
        if name in wanted:
            continue
        if name not in HELPER_DEPENDENCIES:
            raise KeyError(f"unknown runtime helper {name!r}; known: {sorted(HELPER_DEPENDENCIES)}")
        wanted.add(name)
        pending.extend(HELPER_DEPENDENCIES[name])
    chunks = [inspect.getsource(globals()[name]).rstrip("\n") for name in sorted(wanted)]
    return "\n\n\n".join(chunks) + "\n" if chunks else ""
