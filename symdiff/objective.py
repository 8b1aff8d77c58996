"""The SciPy-ready objective: ``scipy.optimize.minimize(obj.fun, x0, jac=obj.jac)``.

An optimiser calls ``fun`` and ``jac`` at one point after the other, thousands of times: both
come from one ``value_and_grad`` call, kept for the last point. Over scalar names, a call
fills the generated module's packed register directly where the module has one
(:mod:`symdiff.codegen.entry`), so the gradient comes back as the module's own vector rather
than as one 0-d array per name gathered again (with 1,000 names, 0.5 ms against 0.03 ms).
``hessp`` does the same with the Hessian-vector product's module, the direction filled into
the register after the point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .api import Expression, hessian, hvp, value_and_grad
from .chunks import is_dask
from .codegen.entry import VectorEntry, vector_entry
from .codegen.naming import DIRECTION, code_names
from .compiled import CompiledFunction
from .errors import SymdiffError

#: Parameter values the packed path takes as they are: Python and NumPy real scalars.
_SCALARS = (float, int, np.floating, np.integer)


class Objective:
    """A scalar function of a vector, shaped for ``scipy.optimize.minimize``.

    ``fun(x)`` returns a float, ``jac(x)`` an array ``(n,)``, ``hess(x)`` an array ``(n, n)``
    (with ``sparse=True``, a ``scipy.sparse`` CSR array of the structural nonzeros, as
    ``minimize(method="trust-constr")`` takes: :mod:`symdiff.sparse`), ``hessp(x, p)`` the
    product ``hess(x) @ p``, ``value_and_grad(x)`` both (for ``jac=True``). Other variables of
    the expression are fixed by ``params``.

    The vector is either ``n`` scalar variables (``wrt=["x", "y"]``, in that order; for a
    Python function, a parameter with a default need not be in ``params``) or, with
    ``shapes=``, one vector variable of the tensor layer (``wrt="x"``,
    ``shapes={"x": ("n",)}``), which scales to thousands of components without a name per
    component.

    ``backend`` is the generated code's (see the builders); by default ``"array_api"`` when a
    value in ``params`` is a Dask array (the gradient is then a lazy reduction over its chunks,
    run on the Dask scheduler or cluster, and computed on each call: ``fun``/``jac`` still
    return a float and a NumPy array), else ``"numpy"``.
    """

    def __init__(
        self,
        expr: Expression,
        wrt: str | Sequence[str],
        params: Mapping[str, Any] | None = None,
        shapes: Mapping[str, Any] | None = None,
        backend: str | None = None,
        sparse: bool | str = False,
    ):
        names = [wrt] if isinstance(wrt, str) else list(wrt)
        self._sparse = sparse
        self._vector = shapes is not None
        if self._vector:
            declared = shapes.get(names[0]) if len(names) == 1 else None
            if declared is None or len(tuple(declared)) != 1:
                raise SymdiffError(
                    "objective with shapes= needs wrt to be one vector variable declared with "
                    f"one dimension, e.g. shapes={{'x': ('n',)}}; got wrt={wrt!r}"
                )
        self._shapes = shapes
        if backend is None:
            lazy = any(is_dask(v) for v in (params or {}).values())
            backend = "array_api" if lazy else "numpy"
        self._backend = backend
        target: str | list[str] = names[0] if self._vector else names
        self._value_and_grad = value_and_grad(expr, target, shapes=shapes, backend=backend)
        self.wrt = (names[0],) if self._vector else tuple(self._value_and_grad.wrt)
        self.params = dict(params or {})
        signature = self._value_and_grad.__signature__.parameters
        defaulted = {a for a, p in signature.items() if p.default is not p.empty}
        unknown = sorted(
            set(self._value_and_grad.args) - set(self.wrt) - set(self.params) - defaulted
        )
        if unknown:
            raise SymdiffError(f"objective: give values for {', '.join(unknown)} in params=")
        self._expr = expr
        self._hessian: CompiledFunction | None = None
        self._hvp: CompiledFunction | None = None
        self._entry = self._packed_entry(self._value_and_grad)
        self._layout: _Layout | None = None
        self._hvp_entry: VectorEntry | None = None
        self._hvp_layout: _Layout | None = None
        self._last: tuple[bytes, dict[str, Any], float, np.ndarray] | None = None

    def _packed_entry(self, compiled: CompiledFunction) -> VectorEntry | None:
        """The packed point path of ``compiled`` (the value_and_grad or the hvp module), where
        it has one: scalar names, the NumPy backend, and plain parameters (no bound
        constants)."""
        if self._vector or self._backend != "numpy" or compiled.constants:
            return None
        return vector_entry(compiled._unchunked, compiled.source, compiled.name)

    #: What is made from the loaded modules (their packed functions are not picklable).
    _TRANSIENT = ("_entry", "_layout", "_hvp_entry", "_hvp_layout", "_last")

    def __getstate__(self) -> dict[str, Any]:
        """Pickled without what is made from the loaded modules; made again when unpickled."""
        return {k: v for k, v in self.__dict__.items() if k not in self._TRANSIENT}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _layout=None, _hvp_layout=None, _last=None)
        self._entry = self._packed_entry(self._value_and_grad)
        hvp_module = self.__dict__.get("_hvp")
        self._hvp_entry = None if hvp_module is None else self._packed_entry(hvp_module)

    def _current_layout(self) -> _Layout:
        """The arguments for the current ``params`` (laid out again when they change)."""
        made = self._layout
        if made is None or not _same(made.params, self.params):
            made = self._layout = _Layout.of(self._value_and_grad, self.wrt, self.params,
                                             self._entry)
        return made

    def _point(self, x: Any) -> np.ndarray:
        """``x`` as a float vector, of one value per wrt name over scalar names."""
        point = np.asarray(x, dtype=float).reshape(-1)
        if not self._vector and point.shape != (len(self.wrt),):
            raise SymdiffError(
                f"expected a vector of {len(self.wrt)} values, got shape {point.shape}")
        return point

    def _kwargs(self, x: Any) -> dict[str, Any]:
        """Every argument by name: ``x`` for the wrt variables, then ``params`` (then, in the
        call, the function's defaults)."""
        point = self._point(x)
        if self._vector:
            return {**self.params, self.wrt[0]: point}
        return {**self.params, **dict(zip(self.wrt, point, strict=True))}

    def value_and_grad(self, x: Any) -> tuple[float, np.ndarray]:
        """``(f(x), grad f(x))`` for ``minimize(..., jac=True)``."""
        value, grads = self._evaluate(x)
        return value, grads.copy()

    def _evaluate(self, x: Any) -> tuple[float, np.ndarray]:
        """The value and the gradient at ``x``, computed once for ``fun`` and ``jac`` at the
        same point (and the same ``params``)."""
        point = self._point(x)
        key = point.tobytes()  # a copy of the bits (the caller may change x; -0.0 is not 0.0)
        last = self._last
        if last is not None and last[0] == key and _same(last[1], self.params):
            return last[2], last[3]
        value, grads = self._compute(point)
        self._last = (key, dict(self.params), value, grads)
        return value, grads

    def _compute(self, point: np.ndarray) -> tuple[float, np.ndarray]:
        """The value and the gradient at ``point``: through the packed register where there
        is one, else by a call of the value_and_grad function."""
        layout = self._current_layout()
        if layout.register is not None:
            register = layout.register.copy()
            register[layout.slots] = point
            outputs = self._entry(register)  # type: ignore[misc]  # a fresh vector
            return float(outputs[0]), outputs[1:]
        arguments = layout.arguments.copy()
        if self._vector:
            arguments[layout.positions[0]] = point
        else:  # Python floats: the generated function's quickest point path
            for position, value in zip(layout.positions, point.tolist(), strict=True):
                arguments[position] = value
        value, grads = self._value_and_grad._run(*arguments)
        if is_dask(value):  # one pass over the chunks for both
            import dask

            value, grads = dask.compute(value, grads)
        if np.size(value) != 1:
            shapes = {a: np.shape(v) for a, v in self.params.items() if np.ndim(v)}
            raise SymdiffError(
                f"objective: the value must be one number, but it has shape {np.shape(value)} "
                f"(params {shapes} broadcast with the vector); give scalar params, or reduce the "
                "expression (for example with sum(...) and shapes=)")
        if self._vector:
            return float(np.reshape(value, ())), np.array(grads, dtype=float)
        if np.ndim(value):  # params of one element each, such as shape (1,)
            return float(np.reshape(value, ())), np.array([np.reshape(g, ()) for g in grads])
        return float(value), np.fromiter(grads, float, len(grads))

    def fun(self, x: Any) -> float:
        """The value at ``x``."""
        return self._evaluate(x)[0]

    def jac(self, x: Any) -> np.ndarray:
        """The gradient at ``x``, shape ``(n,)``."""
        return self._evaluate(x)[1].copy()

    def hess(self, x: Any) -> np.ndarray:
        """The Hessian at ``x``, shape ``(n, n)``."""
        if self._hessian is None:
            target = self.wrt[0] if self._vector else list(self.wrt)
            self._hessian = hessian(self._expr, target, shapes=self._shapes,
                                    backend=self._backend, sparse=self._sparse)
        kwargs = self._kwargs(x)
        if self._sparse:
            return self._hessian.call_by_name(kwargs)
        n = kwargs[self.wrt[0]].size if self._vector else len(self.wrt)
        return np.asarray(self._hessian.call_by_name(kwargs), dtype=float).reshape(n, -1)

    def hessp(self, x: Any, p: Any) -> np.ndarray:
        """The Hessian at ``x`` times the vector ``p``, without forming the Hessian. Over
        scalar names, through the packed register of the product's module where it has one
        (the point and ``p`` filled in, the product its vector of outputs)."""
        direction = np.asarray(p, dtype=float).reshape(-1)
        if self._hvp is None:
            target = self.wrt[0] if self._vector else list(self.wrt)
            self._hvp = hvp(self._expr, target, shapes=self._shapes, backend=self._backend)
            self._hvp_entry = self._packed_entry(self._hvp)
        if not self._vector:
            direction = direction.reshape(len(self.wrt))
            layout = self._hvp_layout
            if layout is None or not _same(layout.params, self.params):
                layout = self._hvp_layout = _Layout.of(self._hvp, self.wrt, self.params,
                                                       self._hvp_entry)
            if layout.register is not None:
                register = layout.register.copy()
                register[layout.slots] = self._point(x)
                register[layout.direction] = direction
                return self._hvp_entry(register)  # type: ignore[misc]  # a fresh vector
        product = self._hvp.call_by_name({**self._kwargs(x), DIRECTION: direction})
        return np.asarray(product, dtype=float)


def objective(
    expr: Expression,
    wrt: str | Sequence[str],
    params: Mapping[str, Any] | None = None,
    *,
    shapes: Mapping[str, Any] | None = None,
    backend: str | None = None,
    sparse: bool | str = False,
) -> Objective:
    """A SciPy-ready objective: ``minimize(obj.fun, x0, jac=obj.jac, hess=obj.hess)``.

    ``wrt`` lists scalar variables, or with ``shapes=`` names one vector variable
    (``objective("sum((x[1:] - x[:-1]**2)**2)", "x", shapes={"x": ("n",)})``). Data in
    ``params`` may be Dask arrays (see :class:`Objective`'s ``backend``). ``sparse=True`` (or
    a ``scipy.sparse`` format): ``hess`` returns a sparse array of the Hessian's structural
    nonzeros (``minimize(..., method="trust-constr")``).
    """
    return Objective(expr, wrt, params, shapes, backend, sparse)


@dataclass(frozen=True)
class _Layout:
    """The arguments of the value_and_grad (or hvp) function for one set of ``params``: every
    positional argument (the wrt ones to be filled in at ``positions``) and, where the module
    has a packed point path and every parameter is a real scalar, its register with the
    parameters in place, the wrt variables' ``slots`` in it and (an hvp module's) the run of
    the direction's components."""

    params: dict[str, Any]
    arguments: list[Any]
    positions: tuple[int, ...]
    register: np.ndarray | None
    slots: np.ndarray | slice | None
    direction: slice | None = None

    @classmethod
    def of(cls, compiled: CompiledFunction, wrt: Sequence[str], params: Mapping[str, Any],
           entry: VectorEntry | None) -> _Layout:
        parameters = compiled.__signature__.parameters
        args = [a for a in compiled.args if a != DIRECTION]  # (an hvp module's direction)
        arguments = [params[a] if a in params else parameters[a].default for a in args]
        where = {name: i for i, name in enumerate(args)}
        positions = tuple(where[name] for name in wrt)
        fixed = sorted(set(range(len(arguments))) - set(positions))
        register = slots = direction = None
        scalars = all(isinstance(arguments[i], _SCALARS)
                      and not isinstance(arguments[i], bool | np.bool_) for i in fixed)
        along = len(args) < len(compiled.args)  # a direction to fill in too
        if entry is not None and scalars and (entry.direction is not None) == along:
            renamed = code_names(args)
            place = {name: i for i, name in enumerate(entry.order)}
            slot = [place[renamed.get(a, a)] for a in args]
            register = entry.register()
            for i in fixed:
                register[slot[i]] = float(arguments[i])
            slots = np.array([slot[i] for i in positions], dtype=np.intp)
            if np.array_equal(slots, np.arange(slots[0], slots[0] + len(slots))):
                slots = slice(int(slots[0]), int(slots[0]) + len(slots))  # x0, x1, ...: a run
            if entry.direction is not None:
                direction = slice(entry.direction, entry.direction + len(wrt))
        return cls(dict(params), arguments, positions, register, slots, direction)


def _same(before: Mapping[str, Any], now: Mapping[str, Any]) -> bool:
    """Whether ``now`` holds the very objects ``before`` held (identity: never an array's
    elementwise comparison; a value replaced by an equal one only costs a recomputation)."""
    return before.keys() == now.keys() and all(now[k] is v for k, v in before.items())
