"""The CPU-time budget of a build, enforced inside SymPy's own evaluation too.

The builder checks its deadline between nodes, but SymPy evaluates constants while it constructs
one node, and some of that has no bound: ``floor``, ``mod``, ``atan2``, ``abs``, ``where`` of a
constant that is an integer or zero in disguise (``softplus(1) - log(1 + exp(1))``) make
``evalf`` raise its precision until it gives up, which takes a second for one such term and
minutes for a sum of ten. So the nodes whose construction may evaluate a constant numerically
(:func:`watched_nodes`) are built under a profile hook (:func:`make_hook`) that raises
:class:`OverBudget` in whatever Python code runs once the thread's CPU time has passed the
deadline. The hook makes the code it watches two to three times slower, so nodes of variables
and rational numbers only, and sums of watched terms, are built without it.

Whoever installs the hook removes it with ``sys.setprofile`` itself, never through a Python
function: past the deadline the hook raises on every Python call, that one included.
"""

from __future__ import annotations

import ast
import inspect
import sys
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

from .functions import CONSTANTS

#: Python calls between two reads of the thread's CPU time.
_CHECK_EVERY = 256
#: Functions the hook never interrupts, nor anything they call: cleanup that restores SymPy's and
#: mpmath's global state (``with workprec(...)``, ``with evaluate(False)``).
_CLEANUP = frozenset({"__exit__", "__aexit__", "__del__", "close"})
#: Generators are resumed by the garbage collector too (to close them), where an exception is
#: only printed: the hook waits for the next ordinary call.
_GENERATORS = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR

Hook = Callable[[FrameType, str, Any], None]


class OverBudget(BaseException):
    """The build used its CPU-time budget inside SymPy. A ``BaseException``, so that
    ``except Exception`` in SymPy and mpmath lets it through; ``node`` is the innermost node
    being built when it was raised (set by the builder)."""

    node: ast.AST | None = None


def _operands(node: ast.AST) -> list[ast.AST]:
    kind = type(node)
    if kind is ast.BinOp:  # the operator node has no operands
        return [node.left, node.right]  # type: ignore[attr-defined]
    if kind is ast.UnaryOp:
        return [node.operand]  # type: ignore[attr-defined]
    if kind is ast.Name or kind is ast.Constant:
        return []
    if kind is ast.Call:  # the called name is not an operand
        return [*node.args, *(k.value for k in node.keywords)]  # type: ignore[attr-defined]
    return list(ast.iter_child_nodes(node))


def watched_nodes(tree: ast.AST) -> frozenset[int]:
    """The ids of the nodes to build under the hook: each constant SymPy may evaluate
    numerically (a call or a power with no variable below it: ``exp(1)``, ``2**0.5``, and
    arithmetic on those), and each node with such a constant among its operands, looking
    through ``+ - * / **`` and signs (``floor(x + exp(1))``, ``abs(2*x*sqrt(2))``), not through
    calls (``sin(sqrt(2)*x) + y`` is a sum of a watched term and ``y``, built without the hook).
    ``pi`` and ``e`` alone do not count: SymPy evaluates polynomials in them quickly, and
    ``sin(pi*x/3)`` is common."""
    constant: dict[int, bool] = {}  # no variable below
    numeric: dict[int, bool] = {}  # an evaluable constant, seen through arithmetic
    watched: set[int] = set()
    order, pending = [], [tree]  # the operands of every node before the node (the called
    while pending:  # names of calls are not operands, nor reached)
        node = pending.pop()
        order.append(node)
        pending.extend(_operands(node))
    for node in reversed(order):
        operands = _operands(node)
        if isinstance(node, ast.Name):
            constant[id(node)] = node.id in CONSTANTS
        else:
            constant[id(node)] = all(constant[id(o)] for o in operands)
        evaluable = constant[id(node)] and (
            isinstance(node, ast.Call)
            or (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow))
            or any(numeric[id(o)] for o in operands)
        )
        arithmetic = isinstance(node, ast.BinOp | ast.UnaryOp)
        numeric[id(node)] = evaluable or (arithmetic and any(numeric[id(o)] for o in operands))
        if evaluable or any(numeric[id(o)] for o in operands):
            watched.add(id(node))
    return frozenset(watched)


def _interruptible(frame: FrameType | None) -> bool:
    if frame is None or frame.f_code.co_flags & _GENERATORS:
        return False
    while frame is not None:
        if frame.f_code.co_name in _CLEANUP:
            return False
        frame = frame.f_back
    return True


def make_hook(deadline: float) -> Hook | None:
    """A profile hook (for ``sys.setprofile``) that raises :class:`OverBudget` once
    ``time.thread_time()`` has passed ``deadline``, then on every further Python call (so that a
    bare ``except:`` cannot swallow it), except in generators and cleanup code. None when a
    profiler is already installed in this thread: the builder's checks between nodes remain."""
    if sys.getprofile() is not None:
        return None
    calls = 0
    over = False

    def hook(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls, over
        if event != "call":
            return
        if not over:
            calls += 1
            if calls % _CHECK_EVERY or time.thread_time() <= deadline:
                return
            over = True
        if _interruptible(frame):
            raise OverBudget

    return hook
