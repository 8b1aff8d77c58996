"""SciPy's densities and special functions, as formulas a traced function can follow.

``scipy.stats.norm.logpdf(x, mu, sigma)`` on a traced value would make SciPy convert it to a
NumPy array. While a function is traced, :func:`replace` gives the tracer
(:func:`symdiff.trace.environment.rewired`) a stand-in for each SciPy object it reaches by name
(``norm``, ``scipy.stats``, ``from scipy.special import logsumexp``, and autograd's wrappers
of them, ``autograd.scipy.stats.norm``): a :class:`Distribution` whose methods are the
densities written with NumPy functions, which trace to their formulas (so the generated module
stays NumPy only) in numerically stable forms:

* ``norm``: ``logpdf``, ``pdf``, ``cdf``, ``logcdf`` (``log_ndtr``, stable far in both
  tails), ``sf``, ``logsf``;
* ``multivariate_normal``: ``logpdf``, ``pdf`` through the Cholesky factor ``L`` of the
  covariance: ``-(d log(2 pi) + 2 sum(log(diag(L))) + |L^-1 (x - mean)|^2) / 2``;
* ``t``, ``gamma``, ``beta``, ``chi2``: ``logpdf`` and ``pdf``; ``dirichlet``: ``logpdf``;
* ``poisson`` and ``bernoulli``: ``logpmf`` and ``pmf`` (the counts are data);
* ``scipy.special.logsumexp`` (``axis``, ``b``, ``keepdims``), ``softmax``, ``log_softmax``;
* ``scipy.linalg``: ``cholesky``, ``cho_factor``, ``cho_solve``, ``solve_triangular``,
  ``solve``, ``inv``, ``det`` (as NumPy's, reading one triangle where SciPy does).

``scipy.integrate`` (``odeint``) and ``scipy.optimize`` on traced values are refused with what
to write instead (the steps, as a loop of NumPy operations).

``scipy.special`` ufuncs (``expit``, ``gammaln``, ``log_ndtr``, ...) are traced where NumPy hands
them over (:data:`symdiff.trace.tables.SCIPY_FORMS`). Frozen distributions (``norm(0, 2)``,
made inside or outside the function) work as in SciPy. Called on plain numbers only, each
stand-in calls SciPy itself. Any other SciPy function or method called on a traced value is an
:class:`~symdiff.errors.UnsupportedError` naming it. SciPy is not a dependency: nothing here
imports it before the traced function has.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import UnsupportedError

_LOG_2PI = math.log(2 * math.pi)


def _special() -> Any:
    import scipy.special  # only reached when the traced function uses SciPy

    return scipy.special


def _traced(*values: Any) -> bool:
    """Whether any value (or item of a list or tuple) is a traced value."""
    for value in values:
        if isinstance(value, list | tuple):
            if _traced(*value):
                return True
        elif getattr(type(value), "_symdiff_symbolic", False):
            return True
    return False


def _ndim(value: Any) -> int:
    return int(value.ndim) if hasattr(value, "ndim") else int(np.ndim(value))


def _shape(value: Any) -> tuple[Any, ...]:
    return tuple(value.shape) if hasattr(value, "shape") else tuple(np.shape(value))


# -- the formulas ---------------------------------------------------------------------------
def _norm_logpdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    z = (x - loc) / scale
    return -0.5 * z**2 - np.log(scale) - 0.5 * _LOG_2PI


def _norm_pdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    z = (x - loc) / scale
    return np.exp(-0.5 * z**2) / (math.sqrt(2 * math.pi) * scale)


def _norm_cdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    return _special().ndtr((x - loc) / scale)


def _norm_logcdf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    return _special().log_ndtr((x - loc) / scale)


def _norm_sf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    return _special().ndtr((loc - x) / scale)


def _norm_logsf(x: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    return _special().log_ndtr((loc - x) / scale)


def _t_logpdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    gammaln = _special().gammaln
    z = (x - loc) / scale
    return (gammaln((df + 1) / 2) - gammaln(df / 2) - 0.5 * np.log(df * math.pi)
            - np.log(scale) - (df + 1) / 2 * np.log1p(z**2 / df))


def _gamma_logpdf(x: Any, a: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    z = (x - loc) / scale
    return (a - 1) * np.log(z) - z - _special().gammaln(a) - np.log(scale)


def _chi2_logpdf(x: Any, df: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    return _gamma_logpdf(x, df / 2, loc, 2 * scale)


def _beta_logpdf(x: Any, a: Any, b: Any, loc: Any = 0.0, scale: Any = 1.0) -> Any:
    gammaln = _special().gammaln
    z = (x - loc) / scale
    return ((a - 1) * np.log(z) + (b - 1) * np.log1p(-z)
            - (gammaln(a) + gammaln(b) - gammaln(a + b)) - np.log(scale))


def _dirichlet_logpdf(x: Any, alpha: Any) -> Any:
    gammaln = _special().gammaln
    return (np.sum((alpha - 1) * np.log(x), axis=0) - np.sum(gammaln(alpha))
            + gammaln(np.sum(alpha)))


def _poisson_logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    k = k - loc
    return k * np.log(mu) - mu - _special().gammaln(k + 1)


def _bernoulli_logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    k = k - loc
    return k * np.log(p) + (1 - k) * np.log1p(-p)


def _mvn_logpdf(x: Any, mean: Any = None, cov: Any = 1, allow_singular: bool = False) -> Any:
    """``-(d log(2 pi) + log det(cov) + (x - mean)^T cov^-1 (x - mean)) / 2`` through the
    Cholesky factor of ``cov``; ``x`` one point ``(d,)`` or points ``(..., d)`` (for ``d = 1``
    a vector is points, as in SciPy)."""
    ndim_cov = _ndim(cov)
    if ndim_cov == 2:
        dim = int(_shape(cov)[0])
    elif mean is not None and _ndim(mean) == 1:
        dim = int(_shape(mean)[0])
    else:
        dim = int(_shape(x)[-1]) if _ndim(x) else 1
    if ndim_cov == 0:
        cov = cov * np.eye(dim)
    elif ndim_cov == 1:
        cov = np.diag(cov)
    diff = x if mean is None else x - mean
    if _ndim(diff) == 0 or (dim == 1 and _ndim(diff) == 1):
        diff = diff[..., None]  # SciPy reads a vector of a 1-D normal as points
    factor = np.linalg.cholesky(cov)
    logdet = 2 * np.sum(np.log(np.diagonal(factor)))
    if _ndim(diff) == 1:
        maha = np.sum(np.linalg.solve(factor, diff) ** 2)
    else:
        points = np.reshape(diff, (-1, dim)) if _ndim(diff) > 2 else diff
        maha = np.sum(np.linalg.solve(factor, points.T) ** 2, axis=0)
        if _ndim(diff) > 2:
            maha = np.reshape(maha, _shape(diff)[:-1])
    result = -0.5 * (dim * _LOG_2PI + logdet + maha)
    if dim == 1 and _ndim(x) == 1 and _ndim(result) == 1 and _shape(result)[0] == 1:
        return result[0]  # SciPy squeezes one point
    return result


def _logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
               return_sign: bool = False) -> Any:
    if return_sign:
        raise UnsupportedError("scipy.special.logsumexp(..., return_sign=True) of traced values "
                               "is not supported (the sign has no derivative); write "
                               "logsumexp of positive weights b, or split the terms by sign")
    if b is None:
        peak = np.max(a, axis=axis, keepdims=True)
        total = np.sum(np.exp(a - peak), axis=axis, keepdims=keepdims)
    else:
        peak = np.max(a, axis=axis, keepdims=True)
        total = np.sum(b * np.exp(a - peak), axis=axis, keepdims=keepdims)
    return np.log(total) + (peak if keepdims else np.squeeze(peak, axis=axis))


def _softmax(x: Any, axis: Any = None) -> Any:
    return np.exp(x - _logsumexp(x, axis=axis, keepdims=True))


def _log_softmax(x: Any, axis: Any = None) -> Any:
    return x - _logsumexp(x, axis=axis, keepdims=True)


def _exp_of(log: Callable[..., Any]) -> Callable[..., Any]:
    def density(*args: Any, **kwargs: Any) -> Any:
        return np.exp(log(*args, **kwargs))

    return density


#: The distributions followed, by SciPy's name: each method's formula.
DISTRIBUTIONS: dict[str, dict[str, Callable[..., Any]]] = {
    "norm": {"logpdf": _norm_logpdf, "pdf": _norm_pdf, "cdf": _norm_cdf,
             "logcdf": _norm_logcdf, "sf": _norm_sf, "logsf": _norm_logsf},
    "multivariate_normal": {"logpdf": _mvn_logpdf, "pdf": _exp_of(_mvn_logpdf)},
    "t": {"logpdf": _t_logpdf, "pdf": _exp_of(_t_logpdf)},
    "gamma": {"logpdf": _gamma_logpdf, "pdf": _exp_of(_gamma_logpdf)},
    "chi2": {"logpdf": _chi2_logpdf, "pdf": _exp_of(_chi2_logpdf)},
    "beta": {"logpdf": _beta_logpdf, "pdf": _exp_of(_beta_logpdf)},
    "dirichlet": {"logpdf": _dirichlet_logpdf, "pdf": _exp_of(_dirichlet_logpdf)},
    "poisson": {"logpmf": _poisson_logpmf, "pmf": _exp_of(_poisson_logpmf)},
    "bernoulli": {"logpmf": _bernoulli_logpmf, "pmf": _exp_of(_bernoulli_logpmf)},
}

#: ``scipy.special`` functions (not ufuncs) followed, by name.
SPECIAL: dict[str, Callable[..., Any]] = {
    "logsumexp": _logsumexp, "softmax": _softmax, "log_softmax": _log_softmax,
}


def _swap(a: Any) -> Any:
    return np.swapaxes(a, -1, -2)


def _linalg_cholesky(a: Any, lower: bool = False, **options: Any) -> Any:
    factor = np.linalg.cholesky(a)
    return factor if lower else _swap(factor)


def _cho_factor(a: Any, lower: bool = False, **options: Any) -> Any:
    return _linalg_cholesky(a, lower), lower


def _solve_triangular(a: Any, b: Any, trans: Any = 0, lower: bool = False,
                      unit_diagonal: bool = False, **options: Any) -> Any:
    a = np.tril(a) if lower else np.triu(a)  # SciPy reads one triangle only
    if unit_diagonal:
        a = a - a * np.eye(_shape(a)[-1]) + np.eye(_shape(a)[-1])
    return np.linalg.solve(a if trans in (0, "N") else _swap(a), b)


def _cho_solve(c_and_lower: Any, b: Any, **options: Any) -> Any:
    c, lower = c_and_lower
    factor = np.tril(c) if lower else _swap(np.triu(c))
    return np.linalg.solve(_swap(factor), np.linalg.solve(factor, b))


#: ``scipy.linalg`` functions followed, by name (as NumPy's, one triangle read where SciPy
#: reads one).
LINALG: dict[str, Callable[..., Any]] = {
    "cholesky": _linalg_cholesky, "cho_factor": _cho_factor, "cho_solve": _cho_solve,
    "solve_triangular": _solve_triangular,
    "solve": lambda a, b, **options: np.linalg.solve(a, b),
    "inv": lambda a, **options: np.linalg.inv(a),
    "det": lambda a, **options: np.linalg.det(a),
}

#: What to write instead of a SciPy function of a module symdiff cannot follow, by module.
_INSTEAD = {
    "scipy.integrate": "it integrates numerically, which symdiff cannot trace: write the "
                       "integration steps with NumPy (a fixed-step Runge-Kutta or Euler loop, "
                       "for _ in range(n)), whose gradient symdiff derives",
    "scipy.optimize": "it iterates to a solution, which symdiff cannot trace: run a fixed "
                      "number of steps written with NumPy, or differentiate the optimality "
                      "condition instead",
}


# -- the stand-ins ----------------------------------------------------------------------------
def _refuse(what: str, known: str) -> UnsupportedError:
    if known.startswith("it "):  # a module symdiff cannot follow at all: what to write
        return UnsupportedError(f"{what} of a traced value is not supported: {known}")
    return UnsupportedError(
        f"{what} of a traced value is not supported: SciPy would need its numbers; symdiff "
        f"follows {known}; write the formula with NumPy functions instead")


class Method:
    """One method of a distribution (or function of ``scipy.special``) while traced: its
    formula on traced values, SciPy itself on plain ones."""

    def __init__(self, original: Callable[..., Any], formula: Callable[..., Any] | None,
                 what: str, known: str, frozen: tuple[tuple[Any, ...], dict[str, Any]] = ((), {})
                 ):
        self.original = original
        self.formula = formula
        self.what = what
        self.known = known
        self.frozen = frozen

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        args = (*args, *self.frozen[0])
        kwargs = {**self.frozen[1], **kwargs}
        if not _traced(*args, *kwargs.values()):
            try:
                return self.original(*args, **kwargs)
            except UnsupportedError as exc:  # a function it calls met a traced value
                raise _refuse(self.what, self.known) from exc
        if self.formula is None:
            raise _refuse(self.what, self.known)
        return self.formula(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<{self.what} (traced by symdiff)>"


class Distribution:
    """A ``scipy.stats`` distribution while traced: its followed methods are :class:`Method`\\ s,
    calling it freezes it (:class:`Frozen`), every other attribute is SciPy's own."""

    def __init__(self, dist: Any, name: str):
        self._dist = dist
        self._name = name

    def __getattr__(self, attribute: str) -> Any:
        value = getattr(self._dist, attribute)
        if attribute.startswith("_") or not callable(value):
            return value
        formulas = DISTRIBUTIONS[self._name]
        return Method(value, formulas.get(attribute), f"scipy.stats.{self._name}.{attribute}",
                      _known(self._name))

    def __call__(self, *args: Any, **kwargs: Any) -> Frozen:
        try:
            frozen = self._dist(*args, **kwargs)
        except Exception:  # SciPy checks traced parameters as numbers: frozen by symdiff only
            frozen = None
        return Frozen(frozen, self._name, args, kwargs)

    def __repr__(self) -> str:
        return f"<scipy.stats.{self._name} (traced by symdiff)>"


class Frozen:
    """A frozen distribution (``norm(0, 2)``) while traced: its parameters are passed after the
    point (SciPy's order: ``norm.logpdf(x, loc, scale)``)."""

    def __init__(self, frozen: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]):
        self._frozen = frozen
        self._name = name
        self._args = args
        self._kwargs = kwargs

    def __getattr__(self, attribute: str) -> Any:
        formula = DISTRIBUTIONS[self._name].get(attribute)
        dist = _generator(self._name)
        if self._frozen is None or dist is None:
            if formula is None or dist is None:
                raise _refuse(f"scipy.stats.{self._name}(...).{attribute}", _known(self._name))
            return Method(getattr(dist, attribute), formula,
                          f"scipy.stats.{self._name}(...).{attribute}", _known(self._name),
                          (self._args, self._kwargs))
        value = getattr(self._frozen, attribute)
        if attribute.startswith("_") or not callable(value):
            return value
        original = getattr(dist, attribute)
        return Method(original, formula, f"scipy.stats.{self._name}(...).{attribute}",
                      _known(self._name), (self._args, self._kwargs))


def _known(name: str) -> str:
    return f"{', '.join(DISTRIBUTIONS[name])} of scipy.stats.{name}"


def _generator(name: str) -> Any:
    stats = sys.modules.get("scipy.stats")
    return None if stats is None else getattr(stats, name, None)


def _distribution_name(value: Any) -> str | None:
    """SciPy's name of a ``scipy.stats`` distribution object symdiff follows, else None."""
    cls = type(value)
    if not str(getattr(cls, "__module__", "")).startswith("scipy.stats"):
        return None
    name = cls.__name__.removesuffix("_gen")
    return name if name in DISTRIBUTIONS and _generator(name) is value else None


def _frozen(value: Any) -> Frozen | None:
    cls = type(value)
    if not str(getattr(cls, "__module__", "")).startswith("scipy.stats"):
        return None
    if cls.__name__ == "multivariate_normal_frozen":
        return Frozen(value, "multivariate_normal", (), {"mean": value.mean, "cov": value.cov})
    dist = getattr(value, "dist", None)
    name = _distribution_name(dist) if dist is not None else None
    if name is None or not cls.__name__.startswith("rv_"):
        return None
    return Frozen(value, name, tuple(value.args), dict(value.kwds))


def replace(value: Any, label: str) -> Any:
    """The stand-in a traced function reads instead of ``value`` (found as ``label``), if it is
    a SciPy object symdiff follows or must refuse by name, else None. autograd's wrappers of
    SciPy functions (``autograd.scipy.stats.norm.logpdf``) stand for the function they wrap."""
    if "scipy" not in sys.modules:
        return None
    target = value
    if getattr(value, "_is_autograd_primitive", False):
        target = getattr(value, "fun", value)
    if isinstance(target, np.ufunc):
        return None  # traced where NumPy hands it over
    name = _distribution_name(target)
    if name is not None:
        return Distribution(target, name)
    frozen = _frozen(target)
    if frozen is not None:
        return frozen
    owner = getattr(target, "__self__", None)
    if owner is not None and callable(target):
        name = _distribution_name(owner)
        if name is not None:
            method = str(getattr(target, "__name__", ""))
            return Method(target, DISTRIBUTIONS[name].get(method),
                          f"scipy.stats.{name}.{method}", _known(name))
        frozen = _frozen(owner)
        if frozen is not None:
            return getattr(frozen, str(getattr(target, "__name__", "")))
    module = str(getattr(target, "__module__", None) or "")
    if callable(target) and module.startswith("scipy.linalg"):
        function = str(getattr(target, "__name__", label))
        scipy_linalg = sys.modules.get("scipy.linalg")
        if scipy_linalg is not None and getattr(scipy_linalg, function, None) is target:
            return Method(target, LINALG.get(function), f"scipy.linalg.{function}",
                          f"{', '.join(LINALG)} of scipy.linalg and NumPy's np.linalg")
    for prefix, instead in _INSTEAD.items():
        if callable(target) and module.startswith(prefix) and not isinstance(target, type):
            function = str(getattr(target, "__name__", label))
            return Method(target, None, f"{prefix}.{function}", instead)
    if callable(target) and module.startswith(("scipy.special", "scipy.stats")):
        function = str(getattr(target, "__name__", label))
        special = sys.modules.get("scipy.special")
        if special is not None and getattr(special, function, None) is target:
            return Method(target, SPECIAL.get(function), f"scipy.special.{function}",
                          f"the ufuncs of scipy.special and {', '.join(SPECIAL)}")
        if module.startswith("scipy.stats") and not isinstance(target, type):
            return Method(target, None, f"scipy.stats function {function}",
                          f"the densities of {', '.join(DISTRIBUTIONS)}")
    return None


__all__ = ["DISTRIBUTIONS", "LINALG", "SPECIAL", "Distribution", "Frozen", "Method", "replace"]
