"""Parameter trees: nested lists, tuples and dicts of arrays, as JAX's pytrees and autograd's
``flatten`` take them.

A *tree* is a list, a tuple (a named tuple too), a dict or ``None`` (an empty subtree), nested
to any depth; anything else is a *leaf* (an array or a number). Leaves are laid out depth
first, a dict's items in the order of its sorted keys (insertion order where the keys do not
sort), as ``jax.tree_util`` and ``autograd.misc.flatten`` do, so the same parameters flatten
to the same vector in all three.

:func:`structure` splits a tree into its :class:`TreeDef` and its leaves, and
:meth:`TreeDef.build` puts leaves back; :func:`flatten` and :func:`unflatten` (``sd.flatten``,
``sd.unflatten``) turn a tree of arrays into one float vector and back, for optimisers that
want one vector. They use NumPy functions only, so they also work inside a traced function.
No SymPy here.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import SymdiffError

#: The kinds of tree nodes: a leaf, or one of the containers.
KINDS = ("leaf", "none", "list", "tuple", "dict")


@dataclass(frozen=True)
class TreeDef:
    """The structure of a tree: the containers and where the leaves go (not the leaves)."""

    kind: str
    children: tuple[TreeDef, ...] = ()
    #: A dict's keys in the order of its children (sorted where they sort).
    keys: tuple[Any, ...] = ()
    #: The container's own type when it is a subclass (a named tuple, an OrderedDict).
    cls: type | None = None

    @property
    def count(self) -> int:
        """How many leaves the tree holds."""
        if self.kind == "leaf":
            return 1
        return sum(child.count for child in self.children)

    @property
    def is_leaf(self) -> bool:
        """Whether the whole tree is one leaf (a plain array argument)."""
        return self.kind == "leaf"

    def build(self, leaves: Sequence[Any] | Iterator[Any]) -> Any:
        """The tree with these leaves, in order (containers of the same types)."""
        items = iter(leaves)
        tree = self._build(items)
        if next(items, _END) is not _END:
            raise SymdiffError(f"{self.describe()} takes {self.count} leaves; more were given")
        return tree

    def _build(self, items: Iterator[Any]) -> Any:
        if self.kind == "leaf":
            item = next(items, _END)
            if item is _END:
                raise SymdiffError(f"{self.describe()} takes more leaves than were given")
            return item
        if self.kind == "none":
            return None
        built = [child._build(items) for child in self.children]
        if self.kind == "list":
            return built if self.cls is None else self.cls(built)
        if self.kind == "tuple":
            if self.cls is None:
                return tuple(built)
            return self.cls(*built) if hasattr(self.cls, "_fields") else self.cls(built)
        pairs = zip(self.keys, built, strict=True)
        return dict(pairs) if self.cls is None else self.cls(pairs)

    def paths(self) -> list[tuple[Any, ...]]:
        """The path of each leaf, in order: the list or tuple positions and dict keys on the way
        from the root."""
        if self.kind == "leaf":
            return [()]
        found = []
        steps = self.keys if self.kind == "dict" else range(len(self.children))
        for step, child in zip(steps, self.children, strict=True):
            found += [(step, *path) for path in child.paths()]
        return found

    def describe(self) -> str:
        """The structure in words: ``a list of 2 (tuple of 2 leaves)``, for messages."""
        if self.kind == "leaf":
            return "an array"
        if self.kind == "none":
            return "None"
        inner = ", ".join(child.describe() for child in self.children[:4])
        more = ", ..." if len(self.children) > 4 else ""
        if self.kind == "dict":
            inner = ", ".join(f"{k!r}: {c.describe()}"
                              for k, c in zip(self.keys[:4], self.children[:4], strict=False))
            return "{" + inner + more + "}"
        opening, closing = ("[", "]") if self.kind == "list" else ("(", ")")
        return opening + inner + more + closing


_END = object()


def is_container(value: object) -> bool:
    """Whether ``value`` is a tree node rather than a leaf: a list, a tuple, a dict or None."""
    return value is None or isinstance(value, list | tuple | dict)


def _sorted_keys(mapping: dict[Any, Any]) -> tuple[Any, ...]:
    try:
        return tuple(sorted(mapping))
    except TypeError:  # keys of kinds that do not compare: insertion order
        return tuple(mapping)


def structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None
              ) -> tuple[TreeDef, list[Any]]:
    """The structure of ``tree`` and its leaves, depth first (dict items by sorted key).
    ``is_leaf`` may declare a container a leaf (a shape tuple in ``shapes=``)."""
    leaves: list[Any] = []

    def walk(node: Any, depth: int) -> TreeDef:
        if depth > 100:
            raise SymdiffError("a parameter tree is nested more than 100 levels deep")
        if (is_leaf is not None and is_leaf(node)) or not is_container(node):
            leaves.append(node)
            return TreeDef("leaf")
        if node is None:
            return TreeDef("none")
        cls = None if type(node) in (list, tuple, dict) else type(node)
        if isinstance(node, dict):
            keys = _sorted_keys(node)
            return TreeDef("dict", tuple(walk(node[k], depth + 1) for k in keys), keys, cls)
        kind = "list" if isinstance(node, list) else "tuple"
        return TreeDef(kind, tuple(walk(item, depth + 1) for item in node), (), cls)

    return walk(tree, 0), leaves


def leaves_of(tree: Any) -> list[Any]:
    """The leaves of ``tree``, in order."""
    return structure(tree)[1]


def map_leaves(fn: Callable[[Any], Any], tree: Any) -> Any:
    """``tree`` with ``fn`` applied to each leaf."""
    treedef, leaves = structure(tree)
    return treedef.build([fn(leaf) for leaf in leaves])


def same_structure(expected: TreeDef, tree: Any, what: str) -> list[Any]:
    """The leaves of ``tree``, which must have the structure ``expected`` (a
    :class:`~symdiff.errors.ShapeError` naming ``what`` otherwise)."""
    from .errors import ShapeError

    found, leaves = structure(tree)
    if _plain(found) != _plain(expected):
        raise ShapeError(f"{what} has the structure {found.describe()}, but the function was "
                         f"built for {expected.describe()}")
    return leaves


def _plain(treedef: TreeDef) -> tuple[Any, ...]:
    """The structure without container subclasses (a named tuple matches its plain tuple)."""
    return (treedef.kind, treedef.keys, tuple(_plain(c) for c in treedef.children))


# -- leaf names -------------------------------------------------------------------------------
_NOT_NAME = re.compile(r"[^A-Za-z0-9_]+")


def leaf_names(prefix: str, treedef: TreeDef, taken: set[str]) -> list[str]:
    """One identifier per leaf of ``treedef``: ``prefix`` and the leaf's path joined by ``_``
    (``params_0_1``, ``params_W``), made unique against ``taken`` (which receives them)."""
    names = []
    for path in treedef.paths():
        parts = [prefix, *(_NOT_NAME.sub("_", str(step)).strip("_") or "k" for step in path)]
        base = "_".join(parts)[:80]
        if keyword.iskeyword(base):
            base += "_"
        name, serial = base, 1
        while name in taken:
            serial += 1
            name = f"{base}_{serial}"
        taken.add(name)
        names.append(name)
    return names


# -- one vector -------------------------------------------------------------------------------
def flatten(tree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """``(vector, unflatten)``: the leaves of ``tree`` raveled and joined into one 1-D float
    array, and the function that takes such a vector back to a tree of the same structure and
    shapes (autograd's ``flatten``, JAX's ``ravel_pytree``). Works on traced values too, so a
    traced function may call it (``np.dot(v, v)`` of the flattened parameters).

    >>> import numpy as np
    >>> v, unflatten = flatten([(np.ones((2, 2)), np.zeros(2)), {"s": 3.0}])
    >>> v.tolist()
    [1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 3.0]
    >>> unflatten(2 * v)[1]["s"]
    array(6.)
    """
    treedef, leaves = structure(tree)
    for leaf in leaves:
        _check_leaf(leaf)
    shapes = [np.shape(leaf) for leaf in leaves]
    parts = [np.ravel(leaf) for leaf in leaves]
    if not parts:
        vector: Any = np.zeros(0)
    elif any(_traced(leaf) for leaf in leaves):
        vector = np.concatenate(parts)
    else:
        vector = np.concatenate([np.asarray(p, dtype=float) for p in parts])

    def unflatten(flat: Any) -> Any:
        return _unflatten(flat, treedef, shapes)

    return vector, unflatten


def unflatten(vector: Any, like: Any) -> Any:
    """The tree of the structure and leaf shapes of ``like`` whose leaves are the consecutive
    pieces of the 1-D ``vector`` (the inverse of :func:`flatten` for ``like``)."""
    treedef, leaves = structure(like)
    for leaf in leaves:
        _check_leaf(leaf)
    return _unflatten(vector, treedef, [np.shape(leaf) for leaf in leaves])


def _unflatten(flat: Any, treedef: TreeDef, shapes: list[tuple[int, ...]]) -> Any:
    size = sum(int(np.prod(s, dtype=np.int64)) for s in shapes)
    if np.ndim(flat) != 1 or np.shape(flat)[0] != size:
        raise SymdiffError(f"unflatten takes a vector of {size} numbers, not an array of shape "
                           f"{np.shape(flat)}")
    pieces, start = [], 0
    for shape in shapes:
        stop = start + int(np.prod(shape, dtype=np.int64))
        pieces.append(np.reshape(flat[start:stop], shape))
        start = stop
    return treedef.build(pieces)


def _traced(leaf: Any) -> bool:
    return bool(getattr(leaf, "_symdiff_symbolic", False))


def _check_leaf(leaf: Any) -> None:
    if _traced(leaf) or isinstance(leaf, np.ndarray | np.generic | int | float):
        if isinstance(leaf, np.ndarray) and leaf.dtype.kind not in "biuf" and not _traced(leaf):
            raise SymdiffError(f"flatten takes arrays of real numbers, not of dtype {leaf.dtype}")
        return
    raise SymdiffError(f"flatten takes lists, tuples and dicts of arrays and numbers; a leaf "
                       f"is a {type(leaf).__name__}")


__all__ = ["TreeDef", "flatten", "leaf_names", "leaves_of", "map_leaves", "same_structure",
           "structure", "unflatten"]
