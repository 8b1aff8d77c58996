"""The gamma family: ``_gamma`` (on the exactly reduced ``_sinpi``), ``_loggamma`` and
``_polygamma``."""

import math as _math

import numpy as _np


def _sinpi(x):
    """``sin(pi * x)`` of a float array with exact argument reduction (exact zeros at integers)."""
    x = _np.asarray(x, dtype=_np.float64)
    with _np.errstate(invalid="ignore"):
        r = _np.fmod(_np.abs(x), 2.0)  # exact, in [0, 2); nan for +-inf
    sign = _np.where(r > 1.0, -1.0, 1.0) * _np.copysign(1.0, x)
    r = _np.where(r > 1.0, r - 1.0, r)  # exact (Sterbenz)
    r = _np.where(r > 0.5, 1.0 - r, r)  # exact (Sterbenz), now r in [0, 1/2]
    return sign * _np.sin(_np.pi * r)


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
