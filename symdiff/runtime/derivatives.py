"""Helpers that derivatives print: the shares of ``max`` (``_argmax_share``) and ``hypot``
(``_hypot_share``), the derivatives of ``sinc`` (``_sinc_d``), ``_sigmoid`` (softplus's
derivative and a function of its own), ``_softplus`` and, for tensor code, the gradient of
``prod`` (``_prod_others``), the inverse of a triangular matrix (``_tril_inv``) and weighted
Gram matrices (``_gram``)."""

import math as _math

import numpy as _np


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


def _softplus(x):
    """``log(1 + exp(x))`` without overflow: ``max(x, 0) + log1p(exp(-|x|))``.

    The formula ``np.logaddexp(0, x)`` evaluates, in four vectorised passes written into one
    new array.
    At a point of Python floats it runs on ``math``; nan gives nan, ``+inf`` gives ``+inf``,
    ``-inf`` gives 0. Float dtypes are kept.
    """
    if x.__class__ is float:
        return _math.log1p(_math.exp(-abs(x))) + (x if x > 0.0 else 0.0)
    t = _np.abs(x)
    if t.ndim:  # a new array: every pass goes into it
        _np.negative(t, out=t)
        _np.exp(t, out=t)
        _np.log1p(t, out=t)
        t += _np.maximum(x, 0.0)
        return t
    return _np.log1p(_np.exp(-t)) + _np.maximum(x, 0.0)


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


def _tril_inv(lower):
    """The inverse of a lower-triangular matrix ``lower`` (or of each matrix of a stack, on the
    last two axes): blocked forward substitution, one inverse of a 64x64 diagonal block and two
    matrix products per block of 64 rows. NumPy has no triangular solve, and ``inv`` or
    ``solve`` (an LU factorization) of a triangular matrix cost several times these products.
    The gradient of ``cholesky`` uses it (``L^-T Phi(L^T G) L^-1``). Keeps a float dtype."""
    n = lower.shape[-1]
    out = _np.zeros_like(lower)
    for start in range(0, n, 64):
        stop = min(start + 64, n)
        block = _np.linalg.inv(lower[..., start:stop, start:stop])
        out[..., start:stop, start:stop] = block
        if start:
            rows = lower[..., start:stop, :start] @ out[..., :start, :start]
            out[..., start:stop, :start] = -(block @ rows)
    return out


def _gram(m, w, u=None):
    """``m.T @ (w[:, None] * m)`` for a matrix ``m`` (n, c) and weights ``w`` (n,): the sum over
    rows of ``w_n * outer(m_n, m_n)``, a symmetric (c, c) matrix (a Hessian's share of rank n).
    With ``u`` (n, k) the rows are ``kron(m_n, u_n)`` instead, (c*k) each, never formed apart.

    When no weight is negative (or none positive) it is ``+-(q.T @ q)`` with the rows scaled by
    ``sqrt(|w|)`` (folded into ``u``: one pass builds ``q``): NumPy sees one array times its
    own transpose and calls the symmetric BLAS product (``syrk``), half the work of a general
    one; otherwise (mixed signs, ``nan``) the general product. Keeps a float dtype; ``w`` may
    be a number (one weight for every row).
    """
    w = _np.broadcast_to(_np.asarray(w, dtype=m.dtype), m.shape[:1])
    if (w >= 0).all():
        sign, root = 1.0, _np.sqrt(w)
    elif (w <= 0).all():
        sign, root = -1.0, _np.sqrt(-w)
    else:
        rows = m if u is None else (m[:, :, None] * u[:, None, :]).reshape(len(m), -1)
        return rows.T @ (w[:, None] * rows)
    if u is None:
        q = m * root[:, None]
    else:
        q = (m[:, :, None] * (u * root[:, None])[:, None, :]).reshape(len(m), -1)
    q = q.T @ q
    return q if sign > 0 else _np.negative(q, out=q)
