"""Elementary functions of one number, for the loops of ``backend="numba"`` modules.

A Numba module's formulas run at one element at a time; ``_np.exp(x)`` of a number there is a
call of the C library's ``exp``, which the compiler cannot vectorise (NumPy's own ``exp`` over
an array is a SIMD loop, 4 to 10 times quicker on a CPU with AVX-512). These functions are
written in plain arithmetic, comparisons and bit operations, which Numba compiles inline into
a loop that the compiler vectorises. Each is accurate to about an ulp (the tests measure every
one against mpmath), with the C library's values at zeros, infinities, nan and subnormals:

* ``_exp``, ``_expm1``, ``_log``: the algorithms of fdlibm (Sun's freely distributable libm):
  ``x = k*ln2 + r`` with ``ln2`` in two parts, a rational approximation on ``|r| <= ln2/2``;
  ``log`` from the exponent and mantissa of ``x`` by bit operations;
* ``_log1p(x)``: ``log(u) - ((u - 1) - x)/u`` with ``u = 1 + x`` (the second term restores
  what rounding ``1 + x`` lost); ``_tanh(x)``: the rational form of the Cephes library (Stephen
  Moshier's) below 0.625 in size, ``1 - 2/(exp(2|x|) + 1)`` above;
* ``_logistic(x)`` (sigmoid) and ``_log1p_exp(x)`` (softplus), from one ``exp(-|x|)``, which
  never overflows.

* ``_cosh``, ``_sinh``: from ``exp(|x|)/2`` (scaled inside ``exp``, finite up to 710.47) and
  ``expm1(|x|)``, as fdlibm's.

Every branch is a ``_select(c, a, b)`` (``a if c else b``), which Numba compiles to one select
instruction: each element takes the same instructions, with no jump. No branch may raise a
floating-point flag of its own (inside a ufunc NumPy warns of them): a nan argument is set
aside first (``x != x``, a quiet comparison) and given back at the end, and arguments are kept
to the range where nothing overflows before the result is selected. They run in plain Python
too (on floats). ``_at(x, i)`` is a loop's argument at element ``i``: ``x[i]`` of an array,
``x`` of a number (one value for every element).
:func:`symdiff.runtime.loops._numba_ready` registers all of them with Numba (the functions by
their names, ``_SCALAR_FUNCTIONS``).
"""

import math as _math

import numpy as _np

#: Reduction by ln2 (fdlibm): ``_LN2_HI`` has 32 significant bits, so ``k*_LN2_HI`` is exact.
_LOG2E = 1.44269504088896338700e+00
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_HALF_LN2 = 0.34657359027997264
_LN2 = 0.6931471805599453
#: The largest finite float64. (``x <= _MAX``, not ``x < inf``: the compiler turned
#: ``(x > 0) & (x < inf)`` into a test of the float's class that made ``log`` 3x slower.)
_MAX = 1.7976931348623157e308
#: 1.5 * 2**52: ``(y + _ROUND) - _ROUND`` is ``y`` rounded to an integer (for ``|y| < 2**51``).
_ROUND = 6755399441055744.0
#: Above this ``exp`` overflows; below ``_EXP_UNDER`` it underflows to 0.
_EXP_OVER = 709.782712893384
_EXP_UNDER = -745.1332191019412
#: fdlibm's ``exp``: ``exp(r) = 1 + 2r/(2 - R(r))``, ``R(r) = r - r**2*(P1 + ... + P5*r**8)``.
_EXP_P = (1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05,
          -1.65339022054652515390e-06, 4.13813679705723846039e-08)
#: fdlibm's ``expm1``: ``Q1 ... Q5`` of its rational approximation on ``|r| <= ln2/2``.
_EXPM1_Q = (-3.33333333333331316428e-02, 1.58730158725481460165e-03,
            -7.93650757867487942473e-05, 4.00821782732936239552e-06,
            -2.01099218183624371326e-07)
#: Cephes' ``tanh`` below 0.625: ``x + x**3 P(x**2)/Q(x**2)``, P of degree 2, Q monic of 3.
_TANH_PQ = (-9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3,
            1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3)
#: fdlibm's ``log``: ``log(1 + f) = 2s + s*R(s*s)`` with ``s = f/(2 + f)``, R of ``Lg1 ... Lg7``.
_LOG_LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01,
           2.222219843214978396e-01, 1.818357216161805012e-01, 1.531383769920937332e-01,
           1.479819860511658591e-01)

#: fdlibm's ``atan``: ``atan(t) = t - t*(z*P(z*z) + z*z*Q(z*z))``, ``z = t*t``, on
#: ``|t| <= 7/16``; above, ``atan(x) = atan(c) + atan((x - c)/(1 + c*x))`` for ``c`` of
#: 0.5, 1, 1.5 and infinity, ``atan(c)`` in two parts (``_ATAN_HI``, ``_ATAN_LO``).
_ATAN_T = (3.33333333333329318027e-01, -1.99999999998764832476e-01, 1.42857142725034663711e-01,
           -1.11111104054623557880e-01, 9.09088713343650656196e-02, -7.69187620504482999495e-02,
           6.66107313738753120669e-02, -5.83357013379057348645e-02, 4.97687799461593236017e-02,
           -3.65315727442169155270e-02, 1.62858201153657823623e-02)
_ATAN_HI = (4.63647609000806093515e-01, 7.85398163397448278999e-01, 9.82793723247329054082e-01,
            1.57079632679489655800e+00)
_ATAN_LO = (2.26987774529616870924e-17, 3.06161699786838301793e-17, 1.39033110312309984516e-17,
            6.12323399573676603587e-17)
#: Below ``_ATAN_TINY`` (2**-27) in size ``atan(x)`` is ``x``; from ``_ATAN_HUGE`` (2**66) on it
#: is +-pi/2 (``1/x`` is then below the last bit of it, and never overflows below there).
_ATAN_TINY = 7.450580596923828e-09
_ATAN_HUGE = 7.378697629483821e19
#: pi in two parts: ``_PI_HI`` is pi rounded to a double, ``_PI_LO`` what it lacks.
_PI_HI = 3.14159265358979311600e+00
_PI_LO = 1.22464679914735317720e-16
#: The scalar functions: every helper of this module but ``_at`` and ``_select`` (which
#: compiled code gets as overloads of their own); ``_numba_ready`` registers them with Numba.
_SCALAR_FUNCTIONS = ("_atan", "_atan2", "_cosh", "_exp", "_exp_times_pow2", "_expm1",
                     "_ln2_multiple", "_log", "_log1p", "_log1p_exp", "_logistic", "_sinh", "_tanh",
                     "_times_pow2")


def _at(x, i):
    """A loop's argument at element ``i``: ``x[i]`` of an array, ``x`` itself of a number
    (an argument of size 1, the same at every element)."""
    return x[i] if _np.ndim(x) else x


def _select(condition, value, otherwise):
    """``value`` if ``condition`` else ``otherwise``: in compiled code both are computed and
    one is selected, without a jump."""
    return value if condition else otherwise


def _ln2_multiple(x):
    """The integer ``k`` (as a float) nearest ``x/ln2`` for a finite ``x`` of at most about
    1100 ln2 in size, 0 where ``|x| <= ln2/2``."""
    k = (x * _LOG2E + _ROUND) - _ROUND
    return _select(abs(x) <= _HALF_LN2, 0.0, k)


def _times_pow2(y, k):
    """``y * 2**k`` for an integer ``k`` (a float) in ``[-2100, 2100]``, in two exact steps
    of half the exponent each, so that a subnormal result is rounded once."""
    half = _np.floor(0.5 * k)
    first = _np.int64((_np.int64(half) + 1023) << 52).view(_np.float64)
    second = _np.int64((_np.int64(k - half) + 1023) << 52).view(_np.float64)
    return y * first * second


def _exp_times_pow2(x, shift):
    """``exp(x) * 2**shift`` (fdlibm's ``exp``, the power of 2 applied in one scaling): 0 below
    -745.13, ``inf`` where the result overflows (``shift`` 0 or -1), nan at nan."""
    p1, p2, p3, p4, p5 = _EXP_P
    nan = x != x
    w = _select(nan, 0.0, x)
    over = _EXP_OVER - shift * _LN2
    z = _select(w < -750.0, -750.0, _select(w > over, over, w))
    k = _ln2_multiple(z)
    hi = z - k * _LN2_HI
    lo = k * _LN2_LO
    r = hi - lo
    t = r * r
    c = r - t * (p1 + t * (p2 + t * (p3 + t * (p4 + t * p5))))
    y = _times_pow2(1.0 - ((lo - (r * c) / (2.0 - c)) - hi), k + shift)
    y = _select(w > over, _np.inf, _select(w < _EXP_UNDER, 0.0, y))
    return _select(nan, x, y)


def _exp(x):
    """``exp(x)`` (fdlibm's algorithm): ``inf`` above 709.78, 0 below -745.13, nan at nan."""
    return _exp_times_pow2(x, 0.0)


def _expm1(x):
    """``exp(x) - 1`` accurate near 0 (fdlibm's algorithm, its branches as selects): ``x``
    itself below 2**-54, -1 below -38.8, ``inf`` above 709.78, nan at nan."""
    q1, q2, q3, q4, q5 = _EXPM1_Q
    nan = x != x
    w = _select(nan, 0.0, x)
    z = _select(w < -40.0, -40.0, _select(w > _EXP_OVER, _EXP_OVER, w))
    k = _ln2_multiple(z)
    hi = z - k * _LN2_HI
    lo = k * _LN2_LO
    r = hi - lo
    c = (hi - r) - lo
    hfx = 0.5 * r
    hxs = r * hfx
    r1 = 1.0 + hxs * (q1 + hxs * (q2 + hxs * (q3 + hxs * (q4 + hxs * q5))))
    t = 3.0 - r1 * hfx
    e = hxs * ((r1 - t) / (6.0 - r * t))
    near = r - (r * e - hxs)  # k == 0
    e = (r * (e - c) - c) - hxs
    below = 0.5 * (r - e) - 0.5  # k == -1
    above = _select(r < -0.25, -2.0 * (e - (r + 0.5)), 1.0 + 2.0 * (r - e))  # k == 1
    inverse = _times_pow2(1.0, -_select(k < 60.0, k, 60.0))  # 2**-k (k >= -58 here)
    high = (k >= 20.0) & (k <= 56.0)
    low = (k >= 2.0) & (k < 20.0)
    y = _select(high, (r - (e + inverse)) + 1.0, 1.0 - (e - r))  # (k <= -2 or k > 56: the
    y = _select(low, (1.0 - inverse) - (e - r), y)  # latter, 2**k times it, less 1)
    y = _times_pow2(y, k) - _select(high | low, 0.0, 1.0)
    y = _select(k == 1.0, above, y)
    y = _select(k == -1.0, below, y)
    y = _select(k == 0.0, near, y)
    y = _select(abs(z) < 5.551115123125783e-17, z, y)
    y = _select(w > _EXP_OVER, _np.inf, _select(w < -38.816242111356935, -1.0, y))
    return _select(nan, x, y)


def _log(x):
    """``log(x)`` (fdlibm's algorithm): ``-inf`` at 0, nan below 0 and at nan, ``inf`` at
    ``inf``; a subnormal ``x`` is its mantissa (a whole number, converted exactly) times
    2**-1074."""
    lg1, lg2, lg3, lg4, lg5, lg6, lg7 = _LOG_LG
    nan = x != x
    w = _select(nan, -1.0, x)
    inside = (w > 0.0) & (w <= _MAX)
    bits = _np.float64(_select(inside, w, 1.0)).view(_np.int64)
    tiny = (bits >> 52) == 0  # subnormal: its mantissa, as a whole number, times 2**-1074
    whole = _np.float64(bits & 0x000FFFFFFFFFFFFF).view(_np.int64)
    bits = _select(tiny, whole, bits)
    high = bits >> 32
    k = (high >> 20) - _select(tiny, 2097, 1023)
    high = high & 0x000FFFFF
    i = (high + 0x95F64) & 0x100000  # the mantissa into [sqrt(2)/2, sqrt(2))
    m = _np.int64(((high | (i ^ 0x3FF00000)) << 32) | (bits & 0xFFFFFFFF)).view(_np.float64)
    dk = _np.float64(k + (i >> 20))
    f = m - 1.0
    s = f / (2.0 + f)
    q = s * s
    q2 = q * q
    r = q * (lg1 + q2 * (lg3 + q2 * (lg5 + q2 * lg7))) + q2 * (lg2 + q2 * (lg4 + q2 * lg6))
    hfsq = 0.5 * f * f
    near = dk * _LN2_HI - ((s * (f - r) - dk * _LN2_LO) - f)
    far = dk * _LN2_HI - ((hfsq - (s * (hfsq + r) + dk * _LN2_LO)) - f)
    y = _select(((high - 0x6147A) | (0x6B851 - high)) > 0, far, near)
    special = _select(w == 0.0, -_np.inf, _select(w > _MAX, w, _np.nan))
    return _select(inside, y, _select(nan, x, special))


def _log1p(x):
    """``log(1 + x)`` accurate near 0: ``log(u) - ((u - 1) - x)/u`` with ``u = 1 + x``;
    ``-inf`` at -1, nan below -1 and at nan, ``x`` itself at 0 (either sign) and ``inf``."""
    nan = x != x
    w = _select(nan, 0.0, x)
    inside = (w > -1.0) & (w <= _MAX) & (w != 0.0)
    z = _select(inside, w, 0.0)
    u = 1.0 + z
    y = _log(u) - ((u - 1.0) - z) / u
    y = _select(inside, y, _select(w == -1.0, -_np.inf, _select(w < -1.0, _np.nan, w)))
    return _select(nan, x, y)


def _tanh(x):
    """``tanh(x)``: below 0.625 in size Cephes' rational form ``x + x**3 P(x**2)/Q(x**2)``,
    above it ``1 - 2/(exp(2|x|) + 1)``, 1 from 22 on; the sign of ``x``; nan at nan."""
    p0, p1, p2, q0, q1, q2 = _TANH_PQ
    nan = x != x
    a = _select(nan, 0.0, abs(x))
    c = _select(a < 22.0, a, 22.0)
    z = c * c
    small = c + c * z * ((p0 * z + p1) * z + p2) / (((z + q0) * z + q1) * z + q2)
    big = 1.0 - 2.0 / (_exp(2.0 * c) + 1.0)
    y = _select(a < 0.625, small, _select(a >= 22.0, 1.0, big))
    return _select(nan, x, _math.copysign(y, x))


def _cosh(x):
    """``cosh(x)`` as ``h + 1/(4h)`` with ``h = exp(|x|)/2`` (scaled inside ``exp``): finite up
    to 710.47, ``inf`` beyond, nan at nan."""
    h = _exp_times_pow2(abs(x), -1.0)
    return h + 0.25 / h


def _sinh(x):
    """``sinh(x)`` (fdlibm's forms): from ``t = expm1(|x|)`` below 22 (``(2t - t*t/(t + 1))/2``
    below 1, ``(t + t/(t + 1))/2`` above), ``exp(|x|)/2`` from 22 on; the sign of ``x``."""
    nan = x != x
    a = _select(nan, 0.0, abs(x))
    t = _expm1(_select(a < 22.0, a, 0.0))
    small = 0.5 * _select(a < 1.0, 2.0 * t - t * t / (t + 1.0), t + t / (t + 1.0))
    y = _math.copysign(_select(a < 22.0, small, _exp_times_pow2(a, -1.0)), x)
    return _select(nan, x, y)


def _logistic(x):
    """``1/(1 + exp(-x))`` (sigmoid) from ``e = exp(-|x|)``: ``1/(1 + e)`` for ``x >= 0``,
    ``e/(1 + e)`` below; never overflows, accurate in both tails; nan at nan."""
    nan = x != x
    w = _select(nan, 0.0, x)
    e = _exp(-abs(w))
    return _select(nan, x, _select(w >= 0.0, 1.0, e) / (1.0 + e))


def _log1p_exp(x):
    """``log(1 + exp(x))`` (softplus) as ``log1p(exp(-|x|)) + max(x, 0)``: never overflows;
    nan at nan."""
    nan = x != x
    w = _select(nan, 0.0, x)
    return _select(nan, x, _log1p(_exp(-abs(w))) + _select(w > 0.0, w, 0.0))


def _atan(x):
    """``atan(x)`` (fdlibm's algorithm, its intervals as selects): ``x`` itself below 2**-27
    in size (either sign of zero), +-pi/2 from 2**66 on and at +-inf, nan at nan."""
    t0, t1, t2, t3, t4, t5, t6, t7, t8, t9, t10 = _ATAN_T
    nan = x != x
    w = _select(nan, 0.0, x)
    a = abs(w)
    half = (a >= 0.4375) & (a < 0.6875)
    one = (a >= 0.6875) & (a < 1.1875)
    three_halves = (a >= 1.1875) & (a < 2.4375)
    far = a >= 2.4375
    c = _select(a < _ATAN_HUGE, a, _ATAN_HUGE)
    top = _select(half, 2.0 * c - 1.0, _select(one, c - 1.0, _select(three_halves, c - 1.5,
                                                                       _select(far, -1.0, c))))
    bottom = _select(half, 2.0 + c, _select(one, c + 1.0, _select(three_halves, 1.0 + 1.5 * c,
                                                                   _select(far, c, 1.0))))
    t = _select(a < _ATAN_TINY, 0.0, top / bottom)
    z = t * t
    v = z * z
    s1 = z * (t0 + v * (t2 + v * (t4 + v * (t6 + v * (t8 + v * t10)))))
    s2 = v * (t1 + v * (t3 + v * (t5 + v * (t7 + v * t9))))
    hi = _select(half, _ATAN_HI[0], _select(one, _ATAN_HI[1], _select(three_halves, _ATAN_HI[2],
                                                                       _ATAN_HI[3])))
    lo = _select(half, _ATAN_LO[0], _select(one, _ATAN_LO[1], _select(three_halves, _ATAN_LO[2],
                                                                       _ATAN_LO[3])))
    reduced = hi - ((t * (s1 + s2) - lo) - t)
    y = _select(a >= 0.4375, reduced, t - t * (s1 + s2))
    y = _select(a < _ATAN_TINY, w, _math.copysign(y, w))
    return _select(nan, x, y)


def _atan2(y, x):
    """``atan2(y, x)``, the angle of the point ``(x, y)`` in ``[-pi, pi]``: ``atan`` of the
    smaller of ``|x|``, ``|y|`` over the larger, then turned into the point's quadrant by the
    signs (a signed zero counts: ``atan2(+-0, -0) = +-pi``); NumPy's values at zeros and
    infinities, nan where either is nan."""
    nan = (x != x) | (y != y)
    u = _select(nan, 1.0, x)
    v = _select(nan, 1.0, y)
    a, b = abs(u), abs(v)
    steep = b > a
    big = _select(steep, b, a)
    small = _select(steep, a, b)
    both = (a > _MAX) & (b > _MAX)  # (both infinite: the diagonal)
    ratio = _select(both, 1.0, small) / _select(both | (big == 0.0), 1.0, big)
    angle = _atan(ratio)
    angle = _select(steep, 0.5 * _PI_HI - (angle - 0.5 * _PI_LO), angle)
    angle = _select(_math.copysign(1.0, u) < 0.0, _PI_HI - (angle - _PI_LO), angle)
    return _select(nan, _select(x != x, x, y), _math.copysign(angle, v))
