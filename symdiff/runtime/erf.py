"""The error functions ``_erf`` and ``_erfc`` and the log normal distribution function
``_log_ndtr``, on one core ``_cody_erf`` (Cody's rational approximations)."""

import numpy as _np


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


def _log_ndtr(x):
    """``log(ndtr(x))``, the log of the standard normal distribution function ``ndtr(x) =
    erfc(-x/sqrt(2))/2`` of a real array, accurate far in both tails (as
    ``scipy.special.log_ndtr``): ``log1p(-erfc(x/sqrt(2))/2)`` above 0.66 (no cancellation near
    ``ndtr = 1``), ``log((1 + erf(x/sqrt(2)))/2)`` near 0, ``log(erfc(|x|/sqrt(2))/2)`` below
    -0.66, and below -30, where ``erfc`` nears the smallest float, the asymptotic series
    ``-x^2/2 - log(-x) - log(2 pi)/2 + log(1 - 1/x^2 + 3/x^4 - 15/x^6 + 105/x^8 - 945/x^10)``
    (its error there is below 1e-16). ``log_ndtr(+inf) = 0``, ``log_ndtr(-inf) = -inf``,
    ``nan -> nan``. Keeps a float dtype."""
    x = _np.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError(f"_log_ndtr needs real input, got dtype {x.dtype}")
    dtype = x.dtype if x.dtype.kind == "f" else _np.dtype(_np.float64)
    x = x.astype(_np.float64)
    small, erfc_abs = _cody_erf(x * 0.7071067811865476)
    with _np.errstate(all="ignore"):
        far = _np.minimum(x, -30.0)
        inverse = 1.0 / (far * far)
        series = inverse * (-1.0 + inverse * (3.0 + inverse * (-15.0 + inverse * (
            105.0 - 945.0 * inverse))))
        tail = -0.5 * far * far - _np.log(-far) - 0.9189385332046728 + _np.log1p(series)
        out = _np.where(
            _np.abs(x) <= 0.6629126073623883,  # |x/sqrt(2)| <= 0.46875: erf itself
            _np.log(0.5 + 0.5 * small),
            _np.where(x > 0.0, _np.log1p(-0.5 * erfc_abs),
                      _np.where(x > -30.0, _np.log(0.5 * erfc_abs), tail)))
        out = _np.where(x == -_np.inf, -_np.inf, out).astype(dtype)
    return out[()] if out.ndim == 0 else out
