"""symdiff's modules import each other without cycles, counting every import: at the top of a
module, inside functions (the deferred imports that keep ``import symdiff`` cheap) and under
``if TYPE_CHECKING:``. None is excluded: a deferred import still means the two modules can only
be understood (and changed) together, and a type-only import is still a dependency of the
reader's; a module that needs a type from above names it without importing it.

An import of a package counts as an import of its ``__init__``; a submodule importing its own
package (``from . import x`` inside ``symdiff.tensor``) is not an edge to it, since Python runs
the package first anyway.
"""

from __future__ import annotations

import ast
from pathlib import Path

from .conftest import ROOT

PACKAGE = ROOT / "symdiff"


def _modules(root: Path) -> dict[str, Path]:
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        modules[".".join(parts)] = path
    return modules


def _imported(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement can bind (``from a import b``: ``a`` and ``a.b``)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - (node.level - 1)]
        base = ".".join(parts + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    return [base] + [f"{base}.{alias.name}" for alias in node.names]


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """``{module: modules it imports}`` over every import statement of the package."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):  # every statement, at any depth
            for target in _imported(node, module, path.name == "__init__.py"):
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != module and not module.startswith(target + "."):
                    graph[module].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            advanced = False
            for target in edges:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph[target]))))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_graph_sees_every_kind_of_import():
    """The walk must see deferred and type-only imports, or the test below proves nothing."""
    graph = import_graph()
    assert "symdiff.pipeline" in graph["symdiff.api"]  # top level
    assert "symdiff.build" in graph["symdiff.pipeline"]  # inside a function
    assert "symdiff.tensor.build" in graph["symdiff.pipeline"]
    assert "symdiff.engine.steps" in graph["symdiff.teach.derivation"]  # under TYPE_CHECKING
    assert "symdiff.cache" in graph["symdiff.request_index"]  # a package: its __init__


def test_cycles_are_found():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "import cycles: " + "; ".join(" <-> ".join(c) for c in found)


def test_compiled_functions_do_not_reach_up_to_the_builders():
    """``compiled`` is a leaf of the pipeline: nothing it imports (at any depth) builds."""
    graph = import_graph()
    seen: set[str] = set()
    todo = ["symdiff.compiled"]
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph[module])
    assert not seen & {"symdiff.api", "symdiff.pipeline", "symdiff.build", "symdiff.request_index",
                       "symdiff.tensor.build"}
