"""Structured Hessians: a matrix (or vector) variable that enters only through ``Z = X @ W``.

Forward over reverse seeds ``W`` (d, k) with an identity of ``d*k`` columns: its tangent
through ``X @`` is a (n, k, d*k) array, and the Hessian of a softmax regression at n=3000,
d=40, k=10 took seconds. When

* ``W`` is used only as the right operand of one product ``Z = X @ W`` (``X`` a matrix that
  does not depend on ``W``), and
* the gradient with respect to ``Z`` is *row-local*: row ``m`` of it depends on row ``m`` of
  ``Z`` only (elementwise maps, reductions and softmaxes along the other axes, products with
  constant matrices on the right; checked node by node, :func:`row_local`), so the Hessian in
  ``Z`` is block diagonal over the rows, a (k, k) block ``h[m]`` each,

then ``H[a, i, b, j] = sum_m X[m, a] X[m, b] h[m, i, j]`` (``Z`` is linear in ``W``, so there
is no second-order term), and ``h`` is one forward sweep over the gradient graph with the
tangent seeded along the small axis only: ``eye(k)`` for every row at once, a (n, k, k) seed
instead of (n, k, d*k).

The contraction with ``X`` is then built from the structure of ``h``, read off its expression:
a term ``D[m, i] * delta_ij`` (the seed itself) is a block diagonal of ``X.T @ (D_i * X)``, one
product of (d, n) by (n, d*k); a term ``c[m, i] * r[m, j]`` (a tangent reduced along ``i``) is
``Mc.T @ Mr`` with ``Mc = (X[:, :, None] * c[:, None, :]).reshape(n, d*k)``; when it is the
only such term, ``h[m]`` being symmetric makes ``c[m] = lambda[m] * r[m]``, so it is the weighted
Gram matrix ``gram(X, lambda, r)`` of the rows ``kron(X_m, r_m)``
(:mod:`symdiff.tensor.families.grams`: the symmetric BLAS product when ``lambda`` has one sign,
``sqrt(|lambda|)`` folded into the rows as they are built). Any other ``h`` is contracted as it is:
``X.T @ (X[:, :, None, None] * h[:, None]).reshape(n, d*k*k)``. For a vector ``x`` (``Z = A @ x``
of shape (n,)) the Hessian is ``gram(A, h)``: ``2*(A.T @ A)`` for least squares.

``W`` may also be used outside the product when the root is a sum of the two parts (a penalty
``sum(W * W)``): that part's Hessian is added, built the general way. Anything else returns
None, and the whole Hessian is built the general way.
"""

from __future__ import annotations

from collections.abc import Callable

import sympy as sp

from .families.grams import gram
from .ir import Node, arg_symbol, topological
from .ops import Builder
from .shapes import Dim, same_dim
from .walk import backward, forward

_X, _Y = arg_symbol(0), arg_symbol(1)
_TINY = sp.Float(2.0**-126)  # the smallest normal float32
_REDUCTIONS = ("sum", "mean", "max", "min", "logsumexp", "prod", "shift")


def structured_hessian(b: Builder, root: Node, var: Node, simplify: bool = True
                       ) -> Node | None:
    """The Hessian of the scalar ``root`` with respect to ``var`` (shape ``var.shape * 2``)
    built as the module docstring says, or None when ``var`` does not enter through one
    product ``X @ var`` whose gradient is row-local.

    ``var`` may also be used elsewhere when the root is a sum of a function of ``X @ var`` and
    one of ``var`` (a penalty ``sum(W * W)``): the gradient through the product must not
    depend on ``var`` otherwise, nor the rest on the product. The rest's Hessian is then added,
    built the general way (small: it does not go through ``X``)."""
    if var.ndim not in (1, 2):
        return None
    products = {id(n): n for n in topological([root])
                if n.op == "matmul" and n.args[1] is var and n.args[0].ndim == 2}
    if len(products) != 1:
        return None
    (z,) = products.values()
    x = z.args[0]
    if _reaches(x, var):
        return None
    g, rest = backward(b, root, [z, var], simplify)
    if not row_local(g, z) or _reaches(g, var, blocked=z) or _reaches(rest, z):
        return None
    rows = z.shape[0]
    if var.ndim == 1:
        (h,) = forward(b, [g], z, simplify, b.fill(1, (rows, 1)))
        hessian = gram(b, x, b.reshape(b.broadcast(h, (rows, 1)), (rows,)))
    else:
        k = var.shape[1]
        eye = b.eye((k,))
        (h,) = forward(b, [g], z, simplify, b.broadcast(b.expand(eye, (0,)), (rows, k, k)))
        hessian = _contract(b, x, b.broadcast(h, (rows, k, k)), eye)
    if rest.op == "fill" and rest.attrs[0] == 0:
        return hessian
    (other,) = forward(b, [rest], var, simplify)
    return b.map(_X + _Y, [hessian, b.reshape(other, hessian.shape)])


def _reaches(root: Node, target: Node, blocked: Node | None = None) -> bool:
    """Whether ``target`` is under ``root`` by a path that does not pass ``blocked``."""
    stack, seen = [root], set()
    while stack:
        node = stack.pop()
        if node is target:
            return True
        if id(node) in seen or node is blocked:
            continue
        seen.add(id(node))
        stack.extend(node.args)
    return False


def split_product(b: Builder, node: Node) -> Node | None:
    """``P.T @ h`` (a vector variable's Hessian built the general way, ``P`` (n, d)) with ``h``
    a sum of terms ``w[m] * P[m, a]`` and ``c[m] * r[a]``: ``gram(P, sum of w)`` plus
    ``outer(P.T @ c, r)`` for each ``r``, so the rank-one terms (a softmax over the rows:
    ``diag(p) - p p^T``) are never formed as (n, d) arrays and the rest is one symmetric
    product. None when ``node`` is not such a product."""
    if node.op != "matmul" or node.ndim != 2:
        return None
    pt, h = node.args
    if pt.op != "transpose" or pt.args[0].ndim != 2 or h.op != "map" or h.ndim != 2:
        return None
    p = pt.args[0]
    rows, d = p.shape
    if not (same_dim(h.shape[0], rows) and same_dim(h.shape[1], d)):
        return None
    expr, args = _flatten(h, lambda a: a is not p and a.ndim == 2
                          and not same_dim(a.shape[0], 1) and not same_dim(a.shape[1], 1))
    kinds = [_column_kind(a, p, rows) for a in args]
    if None in kinds:
        return None
    weight: sp.Expr = sp.Integer(0)
    outers: dict[sp.Expr, sp.Expr] = {}  # the row vector r -> the sum of its columns c
    for term in sp.Add.make_args(sp.expand(expr)):
        parts: dict[str, sp.Expr] = {"p": sp.Integer(1), "c": sp.Integer(1), "r": sp.Integer(1)}
        for factor in sp.Mul.make_args(term):
            base, _ = factor.as_base_exp()
            found = [kinds[i] for i in range(len(args)) if base == arg_symbol(i)]
            parts[found[0] if found else "c"] *= factor
        if parts["p"] != 1:
            if parts["r"] != 1 or parts["p"] != arg_symbol(kinds.index("p")):
                return None
            weight += parts["c"]
        elif parts["r"] != 1:
            outers[parts["r"]] = outers.get(parts["r"], sp.Integer(0)) + parts["c"]
        else:
            return None
    terms = []
    if weight != 0:
        terms.append(gram(b, p, _vector(b, weight, args, (rows,))))
    for r, c in outers.items():
        column = b.matmul(pt, _vector(b, c, args, (rows,)))
        terms.append(b.map(_X * _Y, [b.expand(column, (1,)), _vector(b, r, args, (d,))]))
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else b.map(
        sp.Add(*(arg_symbol(i) for i in range(len(terms)))), terms)


def _column_kind(a: Node, p: Node, rows: Dim) -> str | None:
    """An operand of ``h`` in :func:`split_product`: "p" itself, "c" (one value per row:
    (n, 1), or a number) or "r" (one per column, the same for every row: (d,) or (1, d))."""
    if a is p:
        return "p"
    if a.ndim == 0 or (a.ndim == 2 and same_dim(a.shape[1], 1)):
        return "c"
    if a.ndim == 1 or (a.ndim == 2 and same_dim(a.shape[0], 1)):
        return "r"
    return None


def _vector(b: Builder, expr: sp.Expr, args: list[Node], shape: tuple[Dim]) -> Node:
    """``expr`` of ``args`` as a vector of ``shape`` (its operands (n, 1), (1, d), (d,) or
    scalars)."""
    if not expr.has(*(arg_symbol(i) for i in range(len(args)))):
        return b.fill(expr, shape)
    node = b.map(expr, args)
    if node.op == "broadcast":
        node = node.args[0]
    return b.reshape(b.broadcast(node, (*shape, 1) if node.ndim == 2 and same_dim(
        node.shape[1], 1) else (1, *shape) if node.ndim == 2 else shape), shape)


# -- row locality ------------------------------------------------------------------------------
def row_local(root: Node, z: Node) -> bool:
    """Whether row ``m`` (axis 0) of ``root`` depends on row ``m`` of ``z`` only: every node
    between them keeps axis 0 as the rows of ``z`` and applies its op row by row."""
    rows = z.shape[0]
    active: set[int] = {id(z)}

    def has_rows(a: Node) -> bool:
        return a.ndim >= 1 and same_dim(a.shape[0], rows)

    for node in topological([root]):
        if node is z or not any(id(a) in active for a in node.args):
            continue
        active.add(id(node))
        inputs = [a for a in node.args if id(a) in active]
        rule = _ROW_RULES.get(node.op)
        if (rule is None or not has_rows(node) or not all(has_rows(a) for a in inputs)
                or not rule(node, [id(a) in active for a in node.args])):
            return False
    return True


def _aligned(node: Node, active: list[bool]) -> bool:
    """Elementwise: each active operand has the node's rank (its axis 0 is the node's)."""
    return all(a.ndim == node.ndim for a, on in zip(node.args, active, strict=True) if on)


def _matmul_rows(node: Node, active: list[bool]) -> bool:
    """``Z @ C`` with ``C`` constant: row by row."""
    x, y = node.args
    return active == [True, False] and x.ndim == 2 and y.ndim in (1, 2)


def _first_item_full(node: Node, active: list[bool]) -> bool:
    index = node.attrs[0]
    return len(index) > 0 and index[0] == (None, None, None)


_ROW_RULES: dict[str, Callable[[Node, list[bool]], bool]] = {
    "map": _aligned,
    "broadcast": _aligned,
    "matmul": _matmul_rows,
    **dict.fromkeys(_REDUCTIONS, lambda node, active: 0 not in node.attrs[0]),
    "prod_others": lambda node, active: 0 not in node.attrs[0],
    "share": lambda node, active: 0 not in node.attrs[1] and _aligned(node, active),
    "softmax": lambda node, active: node.attrs[0] != 0,
    "expand": lambda node, active: 0 not in node.attrs[0],
    "transpose": lambda node, active: node.attrs[0][0] == 0,
    "reshape": lambda node, active: True,  # axis 0 kept (checked): rows stay contiguous
    "index": _first_item_full,
    "scatter": _first_item_full,
    "repeat": lambda node, active: node.attrs[1] != 0,
}


# -- the contraction with X --------------------------------------------------------------------
def _contract(b: Builder, x: Node, h: Node, eye: Node) -> Node:
    """``H[a, i, b, j] = sum_m x[m, a] x[m, b] h[m, i, j]``: by the structure of ``h`` (a
    diagonal and rank-one terms per row) where it has one, else directly."""
    d = x.shape[1]
    k = h.shape[1]
    parts = _split(b, h, eye)
    if parts is None:
        return _direct(b, x, h)
    diagonal, outers = parts
    terms: list[Node] = []
    if diagonal is not None:
        terms.append(_block_diagonal(b, x, diagonal, eye))
    if len(outers) == 1:  # h[m] symmetric: c[m] = lambda[m] * r[m]
        ((c, r),) = outers
        cr = b.reduce_axes("sum", b.map(_X * _Y, [c, r]), (1,), False)
        rr = b.reduce_axes("sum", b.map(_X * _X, [r]), (1,), False)
        # lambda = (c . r) / (r . r); where r is 0, so is c . r, and lambda 0 (the smallest
        # normal float32 in the denominator never divides by zero, and keeps float32 float32)
        weight = b.map(_X / sp.Max(_Y, _TINY), [cr, rr])
        terms.append(b.reshape(gram(b, x, weight, r), (d, k, d, k)))
    for c, r in outers if len(outers) > 1 else ():
        product = b.matmul(b.transpose(_rows_times(b, x, c)), _rows_times(b, x, r))
        terms.append(b.reshape(product, (d, k, d, k)))
    if not terms:
        return b.fill(0, (d, k, d, k))
    return terms[0] if len(terms) == 1 else b.map(
        sp.Add(*(arg_symbol(i) for i in range(len(terms)))), terms)


def _rows_times(b: Builder, x: Node, c: Node) -> Node:
    """``(x[:, :, None] * c[:, None, :]).reshape(n, d*k)``: row ``m`` is ``kron(x_m, c_m)``."""
    rows, d = x.shape
    k = c.shape[1]
    outer = b.map(_X * _Y, [b.expand(x, (2,)), b.expand(c, (1,))])
    return b.reshape(outer, (rows, d * k))


def _block_diagonal(b: Builder, x: Node, diagonal: Node, eye: Node) -> Node:
    """``H[a, i, b, j] = delta_ij * sum_m x[m, a] x[m, b] D[m, i]``: one product
    ``x.T @ kron-rows(x, D)`` (d, d*k), placed on the diagonal ``i == j``."""
    d = x.shape[1]
    k = diagonal.shape[1]
    blocks = b.reshape(b.matmul(b.transpose(x), _rows_times(b, x, diagonal)), (d, d, k))
    blocks = b.expand(b.transpose(blocks, (0, 2, 1)), (3,))  # (a, i, b, 1)
    return b.map(_X * _Y, [blocks, b.expand(b.expand(eye, (0,)), (2,))])


def _direct(b: Builder, x: Node, h: Node) -> Node:
    """The contraction of an unstructured ``h``: ``x.T @ (x[:, :, None, None] * h[:, None])``
    as one product of (d, n) by (n, d*k*k)."""
    rows, d = x.shape
    k = h.shape[1]
    scaled = b.map(_X * _Y, [b.expand(x, (2, 3)), b.expand(h, (1,))])  # (n, a, i, j)
    product = b.matmul(b.transpose(x), b.reshape(scaled, (rows, d * k * k)))  # (b, a i j)
    return b.transpose(b.reshape(product, (d, d, k, k)), (1, 2, 0, 3))


def _split(b: Builder, h: Node, eye: Node) -> tuple[Node | None, list[tuple[Node, Node]]] | None:
    """``h`` (n, k, k) as ``D[m, i] * delta_ij + sum_t c_t[m, i] * r_t[m, j]``: the diagonal
    ``D`` (None if absent) and the pairs ``(c_t, r_t)``, each (n, k); None when ``h`` has
    another form. Read off ``h``'s expression (a sum of products of its operands): each
    operand is the seed ``eye`` (i, j), or constant along ``j`` (a ``c`` factor, shape
    (n, k, 1)) or along ``i`` (an ``r`` factor, (n, 1, k): a tangent reduced along ``i``)."""
    rows, k = h.shape[0], h.shape[1]
    if h.op == "broadcast":
        h = h.args[0]
    seeded = _depends_on([h], eye)
    expr, args = _flatten(h, lambda a: id(a) in seeded or _side(a, eye, rows, k) is None)
    sides = [_side(a, eye, rows, k) for a in args]
    if None in sides:
        return None
    diagonal: sp.Expr = sp.Integer(0)
    outers: dict[sp.Expr, sp.Expr] = {}  # r's expression -> the sum of its c's
    for term in sp.Add.make_args(sp.expand(expr)):
        parts: dict[str, sp.Expr] = {"i": sp.Integer(1), "j": sp.Integer(1), "eye": sp.Integer(1)}
        for factor in sp.Mul.make_args(term):
            base, _ = factor.as_base_exp()
            found = [sides[i] for i in range(len(args)) if base == arg_symbol(i)]
            side = found[0] if found else ("i" if not factor.free_symbols & set(
                arg_symbol(i) for i in range(len(args))) else None)
            if side is None:
                return None
            parts[side] *= factor
        if parts["eye"] != 1:
            if parts["j"] != 1 or parts["eye"] != arg_symbol(sides.index("eye")):
                return None
            diagonal += parts["i"]
        else:
            outers[parts["j"]] = outers.get(parts["j"], sp.Integer(0)) + parts["i"]
    pairs = []
    for j_part, i_part in outers.items():
        c = _coefficient(b, i_part, args, rows, k)
        r = _coefficient(b, j_part, args, rows, k, along=2)
        if c is None or r is None:
            return None
        pairs.append((c, r))
    d = None if diagonal == 0 else _coefficient(b, diagonal, args, rows, k)
    if diagonal != 0 and d is None:
        return None
    return d, pairs


def _side(a: Node, eye: Node, rows: Dim, k: Dim) -> str | None:
    """How an operand of ``h`` varies: "eye" (the seed), "i" (constant along ``j``: shape
    broadcasting to (n, k, 1)), "j" (constant along ``i``, not along ``j``: (n, 1, k)); None
    when it varies along both, or its rows are not ``h``'s."""
    if a is eye:
        return "eye"
    shape = (1,) * (3 - a.ndim) + tuple(a.shape) if a.ndim <= 3 else None
    if shape is None or not (same_dim(shape[0], rows) or same_dim(shape[0], 1)):
        return None
    if same_dim(shape[2], 1):
        return "i"
    return "j" if same_dim(shape[1], 1) and same_dim(shape[2], k) else None


def _coefficient(b: Builder, expr: sp.Expr, args: list[Node], rows: Dim, k: Dim,
                 along: int = 1) -> Node | None:
    """The (n, k) array of ``expr`` (of operands constant along the other axis of the last
    two), read along axis ``along`` of (n, k, k): 1 for ``c`` (i), 2 for ``r`` (j)."""
    full = (rows, k, 1) if along == 1 else (rows, 1, k)
    if not expr.has(*(arg_symbol(i) for i in range(len(args)))):
        return b.fill(expr, (rows, k))
    node = b.map(expr, args)
    if node.op == "broadcast":  # to the shape of every operand of h, the unused ones too
        node = node.args[0]
    if node.ndim == 3 and not same_dim(node.shape[3 - along], 1):
        return None
    return b.reshape(b.broadcast(node, full), (rows, k))


def _flatten(h: Node, inline: Callable[[Node], bool]) -> tuple[sp.Expr, list[Node]]:
    """``h`` as one expression of its operands, with the elementwise operands for which
    ``inline`` holds written out (``e[..., None] * eye`` inside ``h``, not a name),
    recursively."""
    args: list[Node] = []
    position: dict[int, int] = {}

    def symbol(a: Node) -> sp.Symbol:
        if id(a) not in position:
            position[id(a)] = len(args)
            args.append(a)
        return arg_symbol(position[id(a)])

    def written(node: Node) -> sp.Expr:
        if node.op != "map" or not inline(node):
            return symbol(node)
        values = {arg_symbol(i): written(a) for i, a in enumerate(node.args)}
        return node.attrs[0].xreplace(values)

    return written(h), args


def _depends_on(args: list[Node], seed: Node) -> set[int]:
    """Ids of the nodes under ``args`` that depend on ``seed``."""
    found: set[int] = {id(seed)}
    for node in topological(args):
        if any(id(a) in found for a in node.args):
            found.add(id(node))
    return found
