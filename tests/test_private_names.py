"""No symdiff module uses another symdiff module's private names: neither
``from .other import _name`` nor ``other._name`` on an imported module. What one module needs
from another is public there, with a docstring, so that it can be read (and changed) as an
interface. Dunder names (``__version__``) are public by convention. The runtime helpers
(``_erf`` and the like) are names inside generated code, underscored by design: the modules of
the ``symdiff.runtime`` package call one another's (the only exemption), the tests import
them, and no other symdiff module does.
"""

from __future__ import annotations

import ast
import textwrap

from .test_import_graph import PACKAGE, _modules


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _base(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = module.split(".") if is_package else module.split(".")[:-1]
    parts = parts[: len(parts) - (node.level - 1)]
    return ".".join(parts + ([node.module] if node.module else []))


def private_uses(source: str, module: str, modules: set[str], is_package: bool = False) -> list:
    """``(line, text)`` for each private name of another symdiff module that ``source`` (the
    text of ``module``) imports or reads off an imported module."""
    tree = ast.parse(source)
    found = []
    aliases: dict[str, str] = {}  # local name -> symdiff module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _base(node, module, is_package)
            if base.split(".")[0] != "symdiff":
                continue
            for alias in node.names:
                if f"{base}.{alias.name}" in modules:
                    aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
                elif _private(alias.name) and base != module:
                    found.append((node.lineno, f"from {base} import {alias.name}"))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "symdiff" and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and isinstance(node.value, ast.Name)
            and aliases.get(node.value.id, module) != module
        ):
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
    return sorted(found)


def test_no_module_uses_another_modules_private_names():
    modules = _modules(PACKAGE)
    offences = []
    for module, path in modules.items():
        if module.startswith("symdiff.runtime"):  # the helpers call one another's
            continue
        source = path.read_text(encoding="utf-8")
        for line, text in private_uses(source, module, set(modules), path.name == "__init__.py"):
            offences.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {text}")
    assert offences == []


def test_the_check_finds_private_imports_and_attributes():
    modules = {"symdiff", "symdiff.a", "symdiff.b", "symdiff.pkg", "symdiff.pkg.c"}
    source = textwrap.dedent(
        """
        from . import b
        from .b import _hidden, public, __version__
        from symdiff.pkg import c as see
        import numpy as np

        def f():
            from .pkg.c import _deferred  # an import inside a function counts too

            return b._x + see._y + b.ok + np._NoValue
        """
    )
    found = sorted(text for _, text in private_uses(source, "symdiff.a", modules))
    assert found == sorted([
        "from symdiff.b import _hidden",
        "from symdiff.pkg.c import _deferred",
        "b._x",
        "see._y",
    ])


def test_a_module_may_use_its_own_private_names():
    source = "from symdiff.a import _mine\nimport symdiff.a as me\nme._also_mine\n"
    assert private_uses(source, "symdiff.a", {"symdiff", "symdiff.a"}) == []
