"""Matrix decompositions: ``cholesky``, ``eigh``/``eigvalsh`` and ``svd``/``svdvals`` (2-D, or
stacks over leading axes), with the closed forms of Murray (2016), Giles (2008) and Townsend
(2016) that autograd and JAX use.

* ``cholesky`` (``A = L L^T``): ``A_bar = sym(L^-T Phi(L^T G) L^-1)``; tangent
  ``dL = L Phi(L^-1 sym(dA) L^-T)``, ``Phi`` the lower triangle with the diagonal halved.
  ``L^-1`` is a ``tril_inv`` node: the runtime helper ``_tril_inv`` (blocked forward
  substitution by matrix products; NumPy has no triangular solve, and two ``solve`` calls made
  the gradient about 2.5x slower).
* ``eigvalsh`` (``w``): ``A_bar = V diag(G) V^T``; tangent ``dw_j = v_j^T dA v_j``.
* ``eigh``'s eigenvectors ``V``: ``A_bar = sym(V (F o V^T G) V^T)``, ``F_ij = 1/(w_j - w_i)``
  off the diagonal, 0 on it; tangent ``dV = V (F o V^T sym(dA) V)``.
* ``svdvals`` (``s``): ``A_bar = U diag(G) Vh``; tangent ``ds_j = u_j^T dA v_j``.
* ``svd``'s ``U`` and ``Vh`` (reduced, ``full_matrices=False``; with NumPy's default
  ``full_matrices=True`` the extra columns of a tall ``U`` / rows of a wide ``Vh``, an
  arbitrary basis of the complement, get no gradient and a zero tangent, as in PyTorch):
  Townsend's formulas with
  ``F_ij = 1/(s_j^2 - s_i^2)`` and the projections ``I - U U^T`` (tall) and ``I - V V^T`` (wide).

Symmetric input: NumPy's ``cholesky`` and ``eigh`` read one triangle (``UPLO='L'``; ``'U'`` is
passed on to ``_np.linalg.eigh``: LAPACK may choose other eigenvector signs for it than for the
lower triangle of ``A.T``). Like autograd and JAX, the gradient is the *symmetric* one: the
derivative along symmetric directions (``sym(X) = (X + X^T) / 2``), which is exact for any
function of a symmetrized input such as ``(tril(A) + tril(A).T) / 2``.

One call per matrix: ``w`` and ``V`` are items of one ``eigh_factors`` node (``_np.linalg.eigh``),
``U``, ``s`` and ``Vh`` of one ``svd_factors`` node (``_np.linalg.svd(a, full_matrices=False)``, or
``True`` as asked for a non-square matrix),
so a value and its gradient share the decomposition (``eigvalsh`` and ``svdvals`` alone are also
items: the gradient needs the vectors anyway).

Degenerate spectra: the eigenvector and singular-vector rules divide by differences of
eigenvalues (squared singular values); with repeated values they give ``inf``/``nan``, as in
autograd and JAX. Eigenvalues and singular values alone stay finite.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from ...errors import ShapeError, UnsupportedError
from ..ir import Node, arg_symbol
from ..oprow import OpRow, Param, Spelling
from ..ops import Builder
from ..shapes import format_shape, same_dim
from .building import concatenate
from .contractions import contract
from .rearrange import tril

_X, _Y, _Z, _W, _V = (arg_symbol(i) for i in range(5))
_LEAD = "ABCDEFGHIJKLMNOPQRSTUVWXY"  # batch letters (Z is the tangents' direction axis)


def _square(name: str, a: Node, where: str) -> None:
    if a.ndim < 2 or not same_dim(a.shape[-1], a.shape[-2]):
        raise ShapeError(f"{name}: needs a square matrix (or a stack of them), got shape "
                         f"{format_shape(a.shape)}{where}")


def _swap(b: Builder, a: Node, last: int = 2) -> Node:
    """``a`` with its two axes before the ``last - 2`` trailing ones exchanged."""
    axes = list(range(a.ndim))
    i, j = a.ndim - last, a.ndim - last + 1
    axes[i], axes[j] = j, i
    return b.transpose(a, tuple(axes))


def _c(b: Builder, spec: str, *operands: Node) -> Node:
    """``einsum`` over matrices with the operands' batch letters prefixed to every term."""
    terms, out = spec.split("->")
    lead = _LEAD[: operands[0].ndim - len(terms.split(",")[0])]
    return contract(b, [lead + t for t in terms.split(",")], operands, lead + out)


def _sym(b: Builder, t: Node, last: int) -> Node:
    return b.map((_X + _Y) / 2, [t, _swap(b, t, last)])


def _spread(b: Builder, v: Node, axis: int, tangent: bool) -> Node:
    """A stack of vectors ``(.., k)`` as rows (``axis=-2``: ``(.., 1, k)``) or columns
    (``axis=-1``: ``(.., k, 1)``), with a trailing direction axis for tangents."""
    out = b.expand(v, (v.ndim - 1,) if axis == -2 else (v.ndim,))
    return b.expand(out, (out.ndim,)) if tangent else out


def _gaps(b: Builder, v: Node, squared: bool) -> Node:
    """``F_ij = 1 / (v_j - v_i)`` (or of squares) off the diagonal, 0 on it."""
    vj, vi = _spread(b, v, -2, False), _spread(b, v, -1, False)
    gap = _X ** 2 - _Y ** 2 if squared else _X - _Y
    return b.map((1 - _Z) / (gap + _Z), [vj, vi, b.eye((v.shape[-1],))])


def _phi_mask(b: Builder, n: Any) -> Node:
    """The lower triangle of ones with the diagonal halved."""
    return b.map(_X - _Y / 2, [tril(b, b.fill(1, (n, n))), b.eye((n,))])


# -- constructors --------------------------------------------------------------------------------
def cholesky(b: Builder, a: Node, *, where: str = "") -> Node:
    """``np.linalg.cholesky(a)``: the lower factor ``L`` of ``a = L L^T``."""
    _square("cholesky", a, where)
    return b.node("cholesky", (a,), (), a.shape)


def _uplo(name: str, a: Node, uplo: str, where: str) -> str:
    _square(name, a, where)
    if uplo not in ("L", "U"):
        raise UnsupportedError(f"{name}: UPLO must be 'L' or 'U', not {uplo!r}{where}")
    return uplo


def eigvalsh(b: Builder, a: Node, UPLO: str = "L", *, where: str = "") -> Node:
    """``np.linalg.eigvalsh(a, UPLO)``: the eigenvalues of a symmetric matrix, ascending."""
    return _eigen(b, a, _uplo("eigvalsh", a, UPLO, where))[0]


def _eigen(b: Builder, a: Node, uplo: str = "L") -> tuple[Node, Node]:
    """``w``, ``V``: items of one ``eigh_factors`` node (one ``np.linalg.eigh`` call reading the
    triangle ``uplo``, whose result is a tuple: the items' rules reach ``a`` directly and give
    the tuple no adjoint). ``uplo`` is passed to NumPy, not emulated by a transpose: LAPACK may
    choose other signs of the eigenvectors for the other triangle."""
    factors = b.node("eigh_factors", (a,), (uplo,), ())
    return (b.node("eigvalsh", (a, factors), (), a.shape[:-1]),
            b.node("eigh_vectors", (a, factors), (), a.shape))


def _factors_of(b: Builder, node: Node) -> tuple[Node, Node]:
    """The eigenvalues and eigenvectors of an ``eigvalsh`` or ``eigh_vectors`` item's matrix."""
    return _eigen(b, node.args[0], node.args[1].attrs[0])


class Eigh(NamedTuple):
    """``np.linalg.eigh``'s result when traced (NumPy's ``EighResult``)."""

    eigenvalues: Any
    eigenvectors: Any


def eigh(b: Builder, a: Node, UPLO: str = "L", *, where: str = "") -> Eigh:
    """``np.linalg.eigh(a, UPLO)``: ``(eigenvalues, eigenvectors)``."""
    return Eigh(*_eigen(b, a, _uplo("eigh", a, UPLO, where)))


def _sizes(name: str, a: Node, where: str) -> tuple[Any, Any, Any]:
    if a.ndim < 2:
        raise ShapeError(f"{name}: needs a matrix (or a stack of them), got shape "
                         f"{format_shape(a.shape)}{where}")
    m, n = a.shape[-2:]
    if same_dim(m, n):
        return m, n, m
    if not (isinstance(m, int) and isinstance(n, int)):
        raise ShapeError(f"{name}: a non-square matrix needs integer sizes, got "
                         f"{format_shape(a.shape)}{where}")
    return m, n, min(m, n)


def svdvals(b: Builder, x: Node, *, where: str = "") -> Node:
    """The singular values (``np.linalg.svd(a, compute_uv=False)``), descending."""
    _sizes("svdvals", x, where)
    return _factors(b, x)[1]


class SVD(NamedTuple):
    """``np.linalg.svd``'s result when traced (NumPy's ``SVDResult``)."""

    U: Any
    S: Any
    Vh: Any


def svd(b: Builder, a: Node, full_matrices: bool = True, compute_uv: bool = True,
        hermitian: bool = False, *, where: str = "") -> Any:
    """``np.linalg.svd(a, full_matrices, compute_uv)``: ``(U, S, Vh)`` or ``S``."""
    _sizes("svd", a, where)
    if hermitian:
        raise UnsupportedError(f"svd: hermitian=True is not supported (use eigh){where}")
    if not compute_uv:
        return svdvals(b, a, where=where)
    return SVD(*_factors(b, a, bool(full_matrices)))


def _factors(b: Builder, a: Node, full: bool = False) -> tuple[Node, Node, Node]:
    """``U``, ``s``, ``Vh``: items of one ``svd_factors`` node (one ``np.linalg.svd`` call, whose
    result is a tuple: the items' rules reach ``a`` directly and give the tuple no adjoint).
    ``full`` (``full_matrices=True``, non-square ``a``): ``U`` is ``m x m`` (tall ``a``) or ``Vh``
    ``n x n`` (wide); the columns (rows) beyond ``k = min(m, n)`` are any orthonormal basis of
    the complement, so, as in PyTorch, the gradient ignores them and their tangent is 0."""
    lead, (m, n) = a.shape[:-2], a.shape[-2:]
    k = m if same_dim(m, n) else min(m, n)
    full = full and not same_dim(m, n)
    factors = b.node("svd_factors", (a,), (True,) if full else (), ())
    return (b.node("svd_u", (a, factors), (), (*lead, m, m if full else k)),
            b.node("svdvals", (a, factors), (), (*lead, k)),
            b.node("svd_vh", (a, factors), (), (*lead, n if full else k, n)))


def _reduced(b: Builder, node: Node) -> tuple[Node, Node, Node]:
    """The reduced ``U``, ``s``, ``Vh`` of an item's matrix (the first ``k`` columns of a full
    ``U``, rows of a full ``Vh``): what the rules use."""
    a, full = node.args[0], bool(node.args[1].attrs)
    u, s, vh = _factors(b, a, full)
    k = s.shape[-1]
    return _first(b, u, k, -1), s, _first(b, vh, k, -2)


def _first(b: Builder, x: Node, k: Any, axis: int) -> Node:
    """``x`` cut to its first ``k`` entries along ``axis`` (-1 or -2; itself if it has ``k``)."""
    if same_dim(x.shape[axis], k):
        return x
    index = [(None, None, None)] * x.ndim
    index[axis] = (0, k, None)
    return b.index(x, tuple(index))


def _padded(b: Builder, t: Node, size: Any, axis: int) -> Node:
    """A tangent ``t`` (with its direction axis last) padded with zeros along ``axis`` (-2 or
    -3) to ``size`` entries: the tangent of a full factor's extra columns (rows) is 0."""
    have = t.shape[axis]
    if same_dim(have, size):
        return t
    shape = list(t.shape)
    shape[axis] = size - have
    return concatenate(b, (t, b.fill(0, tuple(shape))), t.ndim + axis)


def _tall(a: Node) -> int:
    """1 if ``a`` has more rows than columns, -1 if fewer, 0 if square."""
    m, n = a.shape[-2:]
    return 0 if same_dim(m, n) else (1 if m > n else -1)


# -- rules ---------------------------------------------------------------------------------------
def _with_tuple(node: Node, a_bar: Node) -> tuple[Node | None, ...]:
    """``a_bar`` for the matrix, and no adjoint for the ``svd_factors``/``eigh_factors``
    tuple (an item's second operand)."""
    return (a_bar, None)


def tril_inv(b: Builder, a: Node) -> Node:
    """The inverse of the lower-triangular (stack of) matrices ``a`` (a Cholesky factor):
    ``_tril_inv`` (:mod:`symdiff.runtime`), matrix products rather than an LU."""
    return b.node("tril_inv", (a,), (), a.shape)


def _tril_inv_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    """``-tril(M^T G M^T)`` for ``M = L^-1``: the inverse's adjoint on lower-triangular ``L``."""
    mt = _swap(b, node)
    return (tril(b, b.map(-_X, [b.matmul(b.matmul(mt, g), mt)])),)


def _tril_inv_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                  ) -> Node | None:
    return b.map(-_X, [_c(b, "ij,jkZ,kl->ilZ", node, tangents[0], node)])


def _cholesky_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    l_inv = tril_inv(b, node)
    phi = b.map(_X * _Y, [b.matmul(_swap(b, node), g), _phi_mask(b, node.shape[-1])])
    # sym(L^-T Phi L^-1) = L^-T sym(Phi) L^-1: two products (the transpose of a product
    # would be formed as a product of its own)
    return (b.matmul(b.matmul(_swap(b, l_inv), _sym(b, phi, 2)), l_inv),)


def _cholesky_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                  ) -> Node | None:
    (t,) = tangents
    l_inv = tril_inv(b, node)
    inner = _c(b, "ij,jkZ,lk->ilZ", l_inv, _sym(b, t, 3), l_inv)
    mask = b.expand(_phi_mask(b, node.shape[-1]), (2,))
    return _c(b, "ij,jkZ->ikZ", node, b.map(_X * _Y, [inner, mask]))


def _eigvalsh_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    v = _factors_of(b, node)[1]
    return _with_tuple(node, _c(b, "ij,j,kj->ik", v, g, v))


def _eigvalsh_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                  ) -> Node | None:
    v = _factors_of(b, node)[1]
    return _c(b, "ij,ikZ,kj->jZ", v, tangents[0], v)


def _eigvecs_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    f = _gaps(b, _factors_of(b, node)[0], False)
    inner = b.map(_X * _Y, [f, b.matmul(_swap(b, node), g)])
    return _with_tuple(node, _sym(b, _c(b, "ij,jk,lk->il", node, inner, node), 2))


def _eigvecs_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                 ) -> Node | None:
    f = b.expand(_gaps(b, _factors_of(b, node)[0], False), (node.ndim,))
    m = _c(b, "ji,jkZ,kl->ilZ", node, _sym(b, tangents[0], 3), node)
    return _c(b, "ij,jkZ->ikZ", node, b.map(_X * _Y, [f, m]))


def _svdvals_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    u, _, vh = _reduced(b, node)
    return _with_tuple(node, _c(b, "ij,j,jk->ik", u, g, vh))


def _svdvals_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                 ) -> Node | None:
    u, _, vh = _reduced(b, node)
    return _c(b, "ij,ikZ,jk->jZ", u, tangents[0], vh)


def _svd_u_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    a = node.args[0]
    u, s, vh = _reduced(b, node)
    g = _first(b, g, s.shape[-1], -1)  # a full U's extra columns: ignored
    j = b.map(_X * _Y, [_gaps(b, s, True), b.matmul(_swap(b, u), g)])
    inner = b.map((_X + _Y) * _Z, [j, _swap(b, j), _spread(b, s, -2, False)])
    product = _c(b, "ij,jk,kl->il", u, inner, vh)
    if _tall(a) > 0:  # (I - U U^T) G S^-1 Vh on top
        rest = b.map(_X - _Y, [g, b.matmul(u, b.matmul(_swap(b, u), g))])
        scaled = b.map(_X / _Y, [rest, _spread(b, s, -2, False)])
        return _with_tuple(node, b.map(_X + _Y, [product, b.matmul(scaled, vh)]))
    return _with_tuple(node, product)


def _svd_vh_vjp(b: Builder, node: Node, g: Node, simplify: bool) -> tuple[Node | None, ...]:
    a = node.args[0]
    u, s, vh = _reduced(b, node)
    g = _first(b, g, s.shape[-1], -2)  # a full Vh's extra rows: ignored
    k = b.map(_X * _Y, [_gaps(b, s, True), b.matmul(vh, _swap(b, g))])  # F o (V^T V_bar)
    inner = b.map((_X + _Y) * _Z, [k, _swap(b, k), _spread(b, s, -1, False)])
    product = _c(b, "ij,jk,kl->il", u, inner, vh)
    if _tall(a) < 0:  # U S^-1 G (I - V V^T) on top
        rest = b.map(_X - _Y, [g, b.matmul(b.matmul(g, _swap(b, vh)), vh)])
        scaled = b.map(_X / _Y, [rest, _spread(b, s, -1, False)])
        return _with_tuple(node, b.map(_X + _Y, [product, b.matmul(u, scaled)]))
    return _with_tuple(node, product)


def _svd_ds(b: Builder, node: Node, t: Node) -> tuple[Node, Node, Node, Node, Node]:
    """``U``, ``s``, ``Vh`` (reduced), ``dS = U^T dA V`` and ``F`` (with a direction axis)."""
    u, s, vh = _reduced(b, node)
    ds = _c(b, "ji,jkZ,lk->ilZ", u, t, vh)
    return u, s, vh, ds, b.expand(_gaps(b, s, True), (s.ndim + 1,))


def _svd_u_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
               ) -> Node | None:
    t = tangents[0]  # (the svd_factors tuple's is None)
    a = node.args[0]
    u, s, vh, ds, f = _svd_ds(b, node, t)
    sj, si = _spread(b, s, -2, True), _spread(b, s, -1, True)
    inner = b.map((_X * _Y + _Z * _W) * _V, [ds, sj, si, _swap(b, ds, 3), f])  # F o (dS S + S dS^T)
    du = _c(b, "ij,jkZ->ikZ", u, inner)
    if _tall(a) > 0:  # (I - U U^T) dA V S^-1
        dav = _c(b, "ijZ,kj->ikZ", t, vh)
        rest = b.map(_X - _Y, [dav, _c(b, "ij,lj,lkZ->ikZ", u, u, dav)])
        du = b.map(_X + _Y / _Z, [du, rest, sj])
    return _padded(b, du, node.shape[-1], -2)


def _svd_vh_jvp(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                ) -> Node | None:
    t = tangents[0]  # (the svd_factors tuple's is None)
    a = node.args[0]
    u, s, vh, ds, f = _svd_ds(b, node, t)
    sj, si = _spread(b, s, -2, True), _spread(b, s, -1, True)
    inner = b.map((_X * _Y + _Z * _W) * _V, [si, ds, _swap(b, ds, 3), sj, f])  # F o (S dS + dS^T S)
    dvh = _c(b, "ik,ijZ->jkZ", vh, inner)  # (V inner)^T
    if _tall(a) < 0:  # ((I - V V^T) dA^T U S^-1)^T = S^-1 (U^T dA - U^T dA V V^T)
        uda = _c(b, "ij,ikZ->jkZ", u, t)
        rest = b.map(_X - _Y, [uda, _c(b, "ijZ,lj,lk->ikZ", uda, vh, vh)])
        dvh = b.map(_X + _Y / _Z, [dvh, rest, si])
    return _padded(b, dvh, node.shape[-2], -3)


def _item(index: int) -> Any:
    """Emit item ``index`` of the factors tuple (the node's second operand)."""
    return lambda n, c, t: [(t, f"{c[1]}[{index}]")]


def _no_tangent(b: Builder, node: Node, tangents: Sequence[Node | None], simplify: bool
                ) -> Node | None:
    """The ``svd_factors`` and ``eigh_factors`` tuples: their items' rules use the matrix's
    tangent directly."""
    return None


def _row(op: str, rule: str, identity: str, vjp: Any, jvp: Any, emit: Any, text: str,
         latex: str, names: set[str], helpers: frozenset[str] = frozenset()) -> OpRow:
    return OpRow(op=op, rule=rule, identity=identity, vjp=vjp, jvp=jvp, emit=emit,
                 text=lambda n, a, r: f"{text}({r[0]})",
                 latex=lambda n, a, r: rf"\operatorname{{{latex}}}\left({r[0]}\right)",
                 numpy_names=frozenset(names), helpers=helpers)


OPS = (
    _row("cholesky", "Cholesky factor",
         "dL = L Phi(L^-1 dA L^-T): A_bar = sym(L^-T Phi(L^T G) L^-1)",
         _cholesky_vjp, _cholesky_jvp, lambda n, c, t: [(t, f"_np.linalg.cholesky({c[0]})")],
         "cholesky", "chol", {"linalg.cholesky"}),
    _row("tril_inv", "inverse of a triangular factor",
         "d L^-1 = -L^-1 dL L^-1: L_bar = -tril(L^-T G L^-T)", _tril_inv_vjp, _tril_inv_jvp,
         lambda n, c, t: [(t, f"_tril_inv({c[0]})")], "tril_inv", "inv", set(),
         frozenset({"_tril_inv"})),
    _row("eigvalsh", "symmetric eigenvalues", "dw_j = v_j^T dA v_j: A_bar = V diag(G) V^T",
         _eigvalsh_vjp, _eigvalsh_jvp, _item(0), "eigvalsh", "eigvalsh", set()),
    _row("eigh_factors", "symmetric eigendecomposition", "(w, V) = eigh(A)",
         lambda b, n, g, s: (None,), _no_tangent,
         lambda n, c, t: [(t, f"_np.linalg.eigh({c[0]}"
                                 + (", UPLO='U')" if n.attrs[0] == "U" else ")"))],
         "eigh", "eigh", {"linalg.eigh"}),
    _row("eigh_vectors", "symmetric eigenvectors",
         "dV = V (F o V^T dA V), F_ij = 1/(w_j - w_i): A_bar = sym(V (F o V^T G) V^T)",
         _eigvecs_vjp, _eigvecs_jvp, _item(1), "eigvecsh",
         "eigvecsh", set()),
    _row("svdvals", "singular values", "ds_j = u_j^T dA v_j: A_bar = U diag(G) Vh",
         _svdvals_vjp, _svdvals_jvp, _item(1), "svdvals", "svdvals", set()),
    _row("svd_factors", "singular value decomposition", "(U, s, Vh) = svd(A)",
         lambda b, n, g, s: (None,), _no_tangent,
         lambda n, c, t: [(t, f"_np.linalg.svd({c[0]}, full_matrices={bool(n.attrs)})")],
         "svd", "svd", {"linalg.svd"}),
    _row("svd_u", "left singular vectors",
         "dU = U (F o (dS S + S dS^T)) + (I - U U^T) dA V S^-1, dS = U^T dA V, "
         "F_ij = 1/(s_j^2 - s_i^2)", _svd_u_vjp, _svd_u_jvp,
         _item(0),
         "svd_u", "svd_U", {"linalg.svd"}),
    _row("svd_vh", "right singular vectors",
         "dV = V (F o (S dS + dS^T S)) + (I - V V^T) dA^T U S^-1, dS = U^T dA V",
         _svd_vh_vjp, _svd_vh_jvp,
         _item(2),
         "svd_vh", "svd_Vh", {"linalg.svd"}),
)

SPELLINGS = (
    Spelling("cholesky", cholesky, "cholesky(a)", {"a": Param.ARRAY},
             numpy=(np.linalg.cholesky,)),
    Spelling("eigvalsh", eigvalsh, "eigvalsh(a, UPLO='L')", {"a": Param.ARRAY},
             numpy=(np.linalg.eigvalsh,)),
    Spelling("", eigh, "eigh(a, UPLO='L')", {"a": Param.ARRAY}, numpy=(np.linalg.eigh,)),
    Spelling("svdvals", svdvals, "svdvals(x)", {"x": Param.ARRAY},
             numpy=(np.linalg.svdvals,) if hasattr(np.linalg, "svdvals") else ()),
    Spelling("", svd, "svd(a, full_matrices=True, compute_uv=True)", {"a": Param.ARRAY},
             numpy=(np.linalg.svd,)),
)

__all__ = ["OPS", "SPELLINGS", "SVD", "Eigh", "cholesky", "eigh", "eigvalsh", "svd", "svdvals"]
