"""``SparseFunction``: a compiled sparse Jacobian or Hessian, called like any compiled function,
returning a ``scipy.sparse`` array.

Its module computes the vector of the structural nonzeros' values (NumPy only) and says where
they go (``_pattern``, :mod:`symdiff.sparse.pattern`); this class lays the pattern out once per
set of sizes (:mod:`symdiff.sparse.assemble`) and makes each call's matrix from its values.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ..compiled import CompiledFunction
from ..errors import SymdiffError
from ..recipe import Recipe
from ..verify.allowed import PATTERN
from . import assemble, picture

#: How many layouts (sets of sizes) a function keeps.
KEPT_LAYOUTS = 4


class SparseFunction(CompiledFunction):
    """A sparse Jacobian or Hessian (``sd.jacobian(..., sparse=True)``,
    ``sd.hessian(..., sparse=True)``).

    ``g(*arrays)`` returns a ``scipy.sparse`` array (CSR unless :meth:`with_format` says
    otherwise) of shape ``(outputs, variables)``: the output entries and the ``wrt`` variables
    each flattened in C order and laid end to end. Its entries are the structural nonzeros,
    derived from the expressions, the same at every call (a value may be 0 at some point).
    :attr:`pattern` gives their ``(rows, cols)``, :meth:`values` their values in that order,
    :meth:`tril` the lower triangle of a Hessian, :meth:`pattern_svg` a picture of the
    pattern. :attr:`source` is the module: its function returns the values (NumPy only) and
    its ``_pattern`` says where they go.
    """

    _format = "csr"
    _lower = False

    def _sign(self) -> None:
        super()._sign()
        self._values_call = self._call
        self._call = self._matrix
        self.__dict__.setdefault("_layouts", {})

    # -- what a call returns ----------------------------------------------------------------------
    def _matrix(self, *args: Any, **kwargs: Any) -> Any:
        values = self._values_call(*args, **kwargs)
        return assemble.matrix(self._layout(self._sizes(args, kwargs)), values)

    def call_by_name(self, values: Mapping[str, Any]) -> Any:
        """The matrix at ``values`` by name (see :meth:`CompiledFunction.call_by_name`)."""
        arguments = self.positional_arguments(values)
        return assemble.matrix(self._layout(self._sizes(tuple(arguments), {})),
                               self._run(*arguments))

    def values(self, *args: Any, **kwargs: Any) -> np.ndarray:
        """The values of the matrix's entries at these arguments, in the order of
        :attr:`pattern` (what ``g(...).data`` holds, without making the matrix): for solvers
        that take a pattern once and values at each point (cyipopt's ``hessian``)."""
        values = self._values_call(*args, **kwargs)
        return assemble.data(self._layout(self._sizes(args, kwargs)), values)

    # -- the pattern ------------------------------------------------------------------------------
    @property
    def dims(self) -> tuple[str, ...]:
        """The named dimensions the pattern depends on (sorted; none for scalar names or
        shapes of fixed sizes)."""
        return _dims(self.recipe)

    @property
    def pattern(self) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, cols)`` of the entries (int arrays, in the order of the matrix's data),
        without calling the function. With named dimensions, the pattern at the sizes of the
        last call (:meth:`pattern_for` gives it at any sizes)."""
        if not self.dims:
            return self.pattern_for()
        last = self.__dict__.get("_last_sizes")
        if last is None:
            names = ", ".join(f"{d}=..." for d in self.dims)
            raise SymdiffError(
                f"the pattern of {self.name} depends on the size of {', '.join(self.dims)}, "
                f"and it has not been called yet: use {self.name}.pattern_for({names})"
            )
        found = self._layout(last)
        return found.rows.copy(), found.cols.copy()

    def pattern_for(self, **sizes: int) -> tuple[np.ndarray, np.ndarray]:
        """``(rows, cols)`` of the entries for these sizes of the named dimensions
        (``pattern_for(n=100)``)."""
        missing = [d for d in self.dims if d not in sizes]
        extra = sorted(set(sizes) - set(self.dims))
        if missing or extra:
            raise SymdiffError(
                f"pattern_for needs the size of each named dimension of {self.name} "
                f"({', '.join(self.dims) or 'none'}); "
                + (f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(extra)}")
            )
        key = tuple(_size(sizes[d], d) for d in self.dims)
        found = self._layout(key)
        return found.rows.copy(), found.cols.copy()

    def shape_for(self, **sizes: int) -> tuple[int, int]:
        """The matrix's shape for these sizes of the named dimensions."""
        self.pattern_for(**sizes)
        return self._layout(tuple(_size(sizes[d], d) for d in self.dims)).shape

    def pattern_svg(self, pixels: int = 240, **sizes: int) -> str:
        """A spy plot of the pattern as SVG text (binned beyond 120 rows or columns), for the
        sizes of the named dimensions given (``H.pattern_svg(n=100)``); in a notebook,
        ``IPython.display.SVG(H.pattern_svg(n=100))``."""
        rows, cols = self.pattern_for(**sizes)
        shape = self._layout(tuple(_size(sizes[d], d) for d in self.dims)).shape
        return picture.spy_svg(rows, cols, shape, pixels, f"{self.name}: sparse {self.kind}")

    def explain(self, expr: Any = None, verbose: str = "key",
                shapes: Mapping[str, Any] | None = None) -> str:
        """The pattern's construction (the module's ``_pattern``, each block's rows and
        columns) and the values the module computes, block by block (scalar names: entry by
        entry, with their row and column)."""
        wrt = self.wrt if isinstance(self.wrt, str) else ", ".join(self.wrt or ())
        header = f"{self.signature}: sparse {self.kind} with respect to {wrt}"
        pattern = picture.function_text(self.source, PATTERN)
        if self.recipe is not None and self.recipe.tensor:
            values = [f"block {k}: {formula}" for k, formula in enumerate(self.exprs)]
        else:  # scalar names: one value per entry, the first ones of the pattern's order
            rows, cols, _ = self._pattern_function()()
            values = [f"[{r}, {c}] = {e}" for r, c, e in zip(rows, cols, self.exprs,
                                                            strict=False)]
            if self.kind == "hessian":
                values.append("(the upper triangle repeats the lower one)")
        return picture.explanation(header, pattern, values)

    def _pattern_function(self) -> Callable[..., Any]:
        return inspect.unwrap(self._unchunked).__globals__[PATTERN]

    def _layout(self, sizes: tuple[int, ...]) -> assemble.Layout:
        """The layout for these sizes of the named dimensions (made once, kept)."""
        layouts = self.__dict__["_layouts"]
        found = layouts.get(sizes)
        if found is None:
            rows, cols, shape = self._pattern_function()(*sizes)
            found = assemble.layout(rows, cols, tuple(int(s) for s in shape), self._format,
                                    self._lower)
            if len(layouts) >= KEPT_LAYOUTS:
                layouts.pop(next(iter(layouts)))
            layouts[sizes] = found
        return found

    def _sizes(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[int, ...]:
        """The sizes of the named dimensions in a call's arguments."""
        dims = self.dims
        if not dims:
            return ()
        sources = self.__dict__.get("_dim_sources")
        if sources is None:
            sources = self.__dict__["_dim_sources"] = _sources(self.recipe)
        if kwargs or len(args) != len(self.args):
            bound = self.__signature__.bind(*args, **kwargs)
            bound.apply_defaults()
            args = tuple(bound.arguments[a] for a in self.args)
        sizes = tuple(np.shape(args[position])[axis] for position, axis in sources)
        self.__dict__["_last_sizes"] = sizes
        return sizes

    # -- variants ---------------------------------------------------------------------------------
    @property
    def format(self) -> str:
        """The format of the arrays a call returns: ``"csr"``, ``"csc"`` or ``"coo"``."""
        return self._format

    def with_format(self, format: str) -> SparseFunction:
        """The same function returning arrays of ``format`` (``"csr"``, ``"csc"``, ``"coo"``)."""
        if assemble.check_format(format) == self._format:
            return self
        return self._clone(_format=format, _layouts={})  # type: ignore[return-value]

    def tril(self) -> SparseFunction:
        """The same Hessian returning its lower triangle (entries with ``row >= col``), as
        solvers that take one triangle of a symmetric matrix want (cyipopt)."""
        if self.kind != "hessian":
            raise SymdiffError(f"tril() is the lower triangle of a Hessian, not of a {self.kind}")
        if self._lower:
            return self
        return self._clone(_lower=True, _layouts={})  # type: ignore[return-value]

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        state.pop("_values_call", None)
        state["_layouts"] = {}
        return state

    def __repr__(self) -> str:
        triangle = ", lower triangle" if self._lower else ""
        return f"<SparseFunction {self.signature}: sparse {self.kind} ({self._format}{triangle})>"


def _dims(recipe: Recipe | None) -> tuple[str, ...]:
    """The named dimensions of the arguments' declared shapes, sorted."""
    if recipe is None or recipe.shapes is None:
        return ()
    return tuple(sorted({d for _, shape in recipe.shapes for d in shape if isinstance(d, str)}))


def _sources(recipe: Recipe) -> list[tuple[int, int]]:
    """For each named dimension (sorted), the position of the first argument that has it and
    the axis."""
    where: dict[str, tuple[int, int]] = {}
    for name, shape in recipe.shapes or ():
        if name not in recipe.args:
            continue
        for axis, dim in enumerate(shape):
            if isinstance(dim, str):
                where.setdefault(dim, (recipe.args.index(name), axis))
    return [where[d] for d in _dims(recipe)]


def _size(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 0:
        raise SymdiffError(f"the size of {name} must be a non-negative int, not {value!r}")
    return int(value)


def function_class(recipe: Recipe) -> type[CompiledFunction]:
    """The class of a function built from ``recipe``: :class:`SparseFunction` for sparse ones."""
    return SparseFunction if recipe.options.sparse else CompiledFunction
