"""Sparse Jacobians and Hessians (``sparse=True``): the structural nonzeros derived from the
expressions, a values kernel over those entries only, and ``scipy.sparse`` arrays made from them.

* :mod:`~symdiff.sparse.pattern`: the pattern as blocks of affine rows and columns, and the
  generated ``_pattern`` function;
* :mod:`~symdiff.sparse.scalar` and :mod:`~symdiff.sparse.scalar_build`: scalar expressions of
  many names (``wrt=["x0", ..., "x999"]``);
* :mod:`~symdiff.sparse.terms`, :mod:`~symdiff.sparse.merge`, :mod:`~symdiff.sparse.slicing`,
  :mod:`~symdiff.sparse.reshape`, :mod:`~symdiff.sparse.structure` and
  :mod:`~symdiff.sparse.rules`: tensor tangents as lattice terms, read from the operations;
  :mod:`~symdiff.sparse.tensor_build`: the tensor layer's sparse build;
* :mod:`~symdiff.sparse.assemble`: values to ``scipy.sparse`` arrays (SciPy imported there only);
* :mod:`~symdiff.sparse.function`: :class:`~symdiff.sparse.function.SparseFunction`.
"""
