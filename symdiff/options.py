"""The options every builder takes, validated without importing SymPy."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import SymdiffError

MODES = ("auto", "forward", "reverse")
#: The kinds of generated module: ``"numpy"`` (imports only NumPy; the default) and
#: ``"array_api"`` (takes the namespace of its arguments through ``array_api_compat`` and calls
#: only the Array API standard's functions: NumPy, Dask, CuPy, PyTorch and JAX arrays alike)
#: and ``"numba"`` (elementwise functions only: the formulas in a loop over the elements that
#: Numba compiles; needs the ``numba`` extra).
BACKENDS = ("numpy", "array_api", "numba")


@dataclass(frozen=True)
class Options:
    """``simplify``: readable simplified derivatives; ``cse``: share common subexpressions;
    ``mode``: ``"forward"``, ``"reverse"`` or ``"auto"``; ``cache``: reuse generated modules
    (in memory and on disk); ``backend``: the kind of module (:data:`BACKENDS`); ``sparse``:
    a Jacobian or Hessian computes only its structural nonzeros (:mod:`symdiff.sparse`)."""

    simplify: bool = True
    cse: bool = True
    mode: str = "auto"
    cache: bool = True
    backend: str = "numpy"
    sparse: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.mode, str) or self.mode not in MODES:
            allowed = ", ".join(map(repr, MODES))
            raise SymdiffError(f"mode must be one of {allowed}, not {self.mode!r}")
        if not isinstance(self.backend, str) or self.backend not in BACKENDS:
            allowed = ", ".join(map(repr, BACKENDS))
            raise SymdiffError(f"backend must be one of {allowed}, not {self.backend!r}")
        if self.backend == "numba":
            import importlib.util

            if importlib.util.find_spec("numba") is None:
                raise SymdiffError("backend='numba' needs Numba, which is not installed: "
                                   "pip install 'symdiff[numba]'")
        for name in ("simplify", "cse", "cache", "sparse"):
            if not isinstance(getattr(self, name), bool):
                raise SymdiffError(f"{name} must be True or False, not {getattr(self, name)!r}")

    def code_key(self) -> str:
        """The options that change generated code (``cache`` does not). The default backend
        adds nothing, so NumPy modules keep the keys they had before backends existed."""
        key = f"simplify={self.simplify},cse={self.cse},mode={self.mode}"
        if self.backend != "numpy":
            key += f",backend={self.backend}"
        return key + ",sparse=True" if self.sparse else key
