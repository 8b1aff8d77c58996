"""SymPy function classes that SymPy lacks: ``relu``, ``sigmoid``, ``softplus``, the tie share,
the real cube root ``cbrt``, ``rint`` and ``trunc`` (rounding), ``hypot_share`` (the partials of
``hypot``), an ``erfc`` that keeps its argument's sign, ``sinc_d`` (the derivatives of ``sinc``)
and ``held`` (a traced loop's state, kept as one value).

They carry no derivative of their own (``fdiff`` is deliberately absent): the derivative rules
live in the rows of :mod:`symdiff.registry` (:data:`symdiff.engine.rules.RULES`), which name these
classes as their heads. ``rewrite(sp.exp)`` gives each in SymPy's own
primitives, which tests use to build independent references.
"""

from __future__ import annotations

from fractions import Fraction

import sympy as sp
from sympy.core.logic import fuzzy_and, fuzzy_not


class relu(sp.Function):
    """Rectified linear unit, ``max(u, 0)``; by convention ``relu'(0) = 0``."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if u.is_number and u.is_extended_real:
            return sp.Max(u, 0)
        return None

    def _eval_rewrite_as_exp(self, u, **kwargs):
        return sp.Max(u, 0)

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real

    def _eval_evalf(self, prec):
        return sp.Max(self.args[0], 0).evalf(prec)


class held(sp.Function):
    """``held(u)`` is ``u``, kept as one value: SymPy never merges a sum or product inside it
    with the sums and products around it. A traced loop's state is held where the loop reads
    it (``x = r*x*(1 - x)`` unrolled), so the expression keeps the loop's steps and each step
    reads the last one's value, as the Python code does, instead of one product of every
    step's factors (whose derivative cancels digits at every step); shared, it is one
    temporary of the code. Printed as ``(u)``; a number is itself."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if u.is_Number or isinstance(u, held):
            return u
        return None

    def _eval_rewrite_as_exp(self, u, **kwargs):
        return u

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real

    def _eval_evalf(self, prec):
        return self.args[0].evalf(prec)

    def _sympystr(self, printer) -> str:
        return f"({printer._print(self.args[0])})"

    def _latex(self, printer) -> str:
        return rf"\left({printer._print(self.args[0])}\right)"


class sigmoid(sp.Function):
    """Logistic function ``1 / (1 + exp(-u))``."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if u.is_zero:
            return sp.S.Half
        if u.is_number and u.is_extended_real and u.is_infinite:
            return sp.S.One if u.is_positive else sp.S.Zero
        return None

    def _eval_rewrite_as_exp(self, u, **kwargs):
        return 1 / (1 + sp.exp(-u))

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real

    def _eval_evalf(self, prec):
        return (1 / (1 + sp.exp(-self.args[0]))).evalf(prec)


class softplus(sp.Function):
    """``log(1 + exp(u))``, emitted in the overflow-free form ``logaddexp(0, u)``."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if u.is_zero:
            return sp.log(2)
        return None

    def _eval_rewrite_as_exp(self, u, **kwargs):
        return sp.log(1 + sp.exp(u))

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real

    def _eval_evalf(self, prec):
        return sp.log(1 + sp.exp(self.args[0])).evalf(prec)


class log_ndtr(sp.Function):
    """``log(ndtr(u))``: the log of the standard normal distribution function, emitted through
    a helper that stays accurate far in both tails (``scipy.special.log_ndtr``)."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if u.is_zero:
            return -sp.log(2)
        return None

    def _eval_rewrite_as_erfc(self, u, **kwargs):
        return sp.log(sp.erfc(-u / sp.sqrt(2)) / 2)

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real

    def _eval_evalf(self, prec):
        return sp.log(sp.erfc(-self.args[0] / sp.sqrt(2)) / 2).evalf(prec)


class tie_share(sp.Function):
    """Share of the gradient of ``max(a_1, ..., a_n)`` that goes to ``a``.

    ``tie_share(a, a_1, ..., a_n)`` is ``[a == m] / #{j : a_j == m}`` with ``m = max(a_j)``:
    1 for the unique maximum, 0 for the others, split evenly among tied arguments (the
    convention ``jnp.maximum`` also follows for two arguments). Its own derivative is 0.
    """

    @classmethod
    def eval(cls, a, *args):
        values = (a, *args)
        if all(v.is_number and v.is_extended_real for v in values):
            top = sp.Max(*args)
            hits = sum(1 for v in args if sp.Eq(v, top) is sp.true)
            return sp.Rational(1, hits) if sp.Eq(a, top) is sp.true else sp.S.Zero
        return None

    def _eval_is_extended_real(self):
        return True


class cbrt(sp.Function):
    """Real cube root (NumPy's ``cbrt``): ``cbrt(-8) = -2``.

    SymPy's ``cbrt(u)`` is ``u**(1/3)``, the principal complex root (and ``x**(1/3)`` is nan in
    NumPy for ``x < 0``); the codegen class ``Cbrt`` has no numeric value. Real numbers
    evaluate to SymPy's real root.
    """

    nargs = 1

    @classmethod
    def eval(cls, u):
        if u.is_number and u.is_extended_real:
            return sp.real_root(u, 3)
        return None

    def _eval_rewrite_as_Pow(self, u, **kwargs):
        return sp.sign(u) * sp.Abs(u) ** sp.Rational(1, 3)

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real

    def _eval_evalf(self, prec):
        u = self.args[0]
        return (sp.sign(u) * sp.Abs(u) ** sp.Rational(1, 3)).evalf(prec)


class rint(sp.Function):
    """Round to the nearest integer, halves to even (``np.rint``, ``np.round``): ``rint(2.5) =
    2``. A step function: its derivative is 0 (no delta at the jumps)."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if isinstance(u, sp.Rational):  # Python's round of a Fraction rounds halves to even
            return sp.Integer(round(Fraction(int(u.p), int(u.q))))
        if isinstance(u, sp.Float) and u.is_finite:
            return sp.Float(round(float(u)))
        return None

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real

    def _eval_evalf(self, prec):
        value = self.args[0].evalf(prec)
        return rint(value) if isinstance(value, sp.Float) else None


class trunc(sp.Function):
    """Round towards zero (``np.trunc``, ``np.fix``): ``trunc(-2.7) = -2``. A step function: its
    derivative is 0 (no delta at the jumps)."""

    nargs = 1

    @classmethod
    def eval(cls, u):
        if isinstance(u, sp.Rational | sp.Float) and u.is_finite:
            return sp.sign(u) * sp.floor(sp.Abs(u))
        return None

    def _eval_rewrite_as_floor(self, u, **kwargs):
        return sp.sign(u) * sp.floor(sp.Abs(u))

    def _eval_is_extended_real(self):
        return self.args[0].is_extended_real

    def _eval_evalf(self, prec):
        u = self.args[0]
        return (sp.sign(u) * sp.floor(sp.Abs(u))).evalf(prec)


class fmod(sp.Function):
    """Remainder with the sign of the dividend, ``a - b*trunc(a/b)`` (``np.fmod``, C's
    ``fmod``): ``fmod(-7, 3) = -1``, where ``mod(-7, 3) = 2`` (Python's ``%``, ``np.mod``).
    ``fmod(a, 0)`` is nan, as in NumPy."""

    nargs = 2

    @classmethod
    def eval(cls, a, b):
        if all(isinstance(v, sp.Rational | sp.Float) and v.is_finite for v in (a, b)):
            return sp.nan if b.is_zero else a - b * trunc(a / b)
        return None

    def _eval_is_extended_real(self):
        a, b = self.args
        return fuzzy_and([a.is_extended_real, b.is_extended_real, fuzzy_not(b.is_zero)])

    def _eval_evalf(self, prec):
        a, b = (arg.evalf(prec) for arg in self.args)
        if isinstance(a, sp.Float) and isinstance(b, sp.Float):
            return fmod(a, b)
        return None


class copysign(sp.Function):
    """``|a|`` with the sign of ``b`` (``np.copysign``): ``copysign(2, -0.5) = -2``. A number
    ``b`` of 0 counts as positive here; NumPy reads the sign bit of a float, so an array
    argument of -0.0 gives ``-|a|`` in generated code, as in NumPy."""

    nargs = 2

    @classmethod
    def eval(cls, a, b):
        if b.is_number and b.is_extended_real:  # its sign is known (SymPy evaluates numbers)
            if b.is_extended_nonnegative:
                return sp.Abs(a)
            if b.is_extended_negative:
                return -sp.Abs(a)
        return None

    def _eval_is_extended_real(self):
        return fuzzy_and([arg.is_extended_real for arg in self.args])


class hypot_share(sp.Function):
    """``a / hypot(a, b)``, the partial of ``hypot(a, b)`` in ``a``; 0 at ``a = b = 0``.

    At the origin ``hypot`` has a cone, and its gradient there is taken as 0, the minimal-norm
    subgradient (as ``abs'(0) = 0``; ``hypot(x, 0) = |x|``). Real numbers evaluate.
    """

    nargs = 2

    @classmethod
    def eval(cls, a, b):
        if all(v.is_number and v.is_extended_real for v in (a, b)):
            return sp.S.Zero if a.is_zero and b.is_zero else a / sp.sqrt(a**2 + b**2)
        return None

    def _eval_is_extended_real(self):
        return all(a.is_extended_real for a in self.args) or None

    def _eval_evalf(self, prec):
        a, b = self.args
        if a.is_zero and b.is_zero:
            return sp.S.Zero
        return (a / sp.sqrt(a**2 + b**2)).evalf(prec)


class erfc(sp.erfc):
    """SymPy's ``erfc``, without its symbolic rewrite ``erfc(-u) -> 2 - erfc(u)``.

    That rewrite cancels catastrophically where ``erfc(u)`` is near 2 and so loses the point of
    ``erfc``, which is full relative precision where it is tiny. Numbers still evaluate as
    SymPy's do. It prints and differentiates as ``erfc`` (the registry row matches by class
    name, the rule table through the base class).
    """

    @classmethod
    def eval(cls, arg):
        if arg.is_number:
            return super().eval(arg)
        return None


def _sinc_derivative(n: int, u: sp.Expr) -> sp.Expr:
    """The n-th derivative of ``sin(u)/u`` at ``u`` (its limit, a rational, at 0)."""
    if u.is_zero:
        return sp.S.Zero if n % 2 else sp.Rational((-1) ** (n // 2), n + 1)
    t = sp.Dummy("t")
    return sp.diff(sp.sin(t) / t, t, n).subs(t, u)


def sinc_d_closed_form(n: sp.Expr, u: sp.Expr) -> sp.Expr:
    """``sinc_d(n, u)`` written out: the n-th derivative of ``sin(u)/u`` (0/0 at ``u = 0``)."""
    t = sp.Dummy("t")
    return sp.diff(sp.sin(t) / t, t, int(n)).subs(t, u)


class sinc_d(sp.Function):
    """``sinc_d(n, u)``: the n-th derivative of SymPy's (unnormalized) ``sinc(u) = sin(u)/u``.

    The closed forms are 0/0 at ``u = 0`` and lose every digit near it (``(cos(u) - sinc(u))/u``
    has a relative error of about eps/u^2), so derivatives of ``sinc`` are this node, printed as
    the runtime helper ``_sinc_d`` (a series near 0). ``sinc_d(1, 0) = 0``, ``sinc_d(2, 0) =
    -1/3``. Numbers evaluate; ``n`` is a non-negative integer.
    """

    nargs = 2

    @classmethod
    def eval(cls, n, u):
        if n.is_Integer and n.is_nonnegative and u.is_number and u.is_extended_real:
            return _sinc_derivative(int(n), u)
        return None

    def _eval_is_extended_real(self):
        return self.args[1].is_extended_real

    def _latex(self, printer) -> str:
        """Its closed form, which a reader can check (``sinc_d`` means nothing on paper)."""
        closed = sinc_d_closed_form(*self.args)
        text = printer._print(closed)
        return rf"\left({text}\right)" if closed.is_Add else text  # it stands as one factor

    def _eval_evalf(self, prec):
        n, u = self.args
        if not n.is_Integer:
            return None
        return _sinc_derivative(int(n), u).evalf(prec)
