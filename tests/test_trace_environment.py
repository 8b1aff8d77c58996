"""The reach of a traced function by name (closure, globals, helpers, modules) and its rewired
copy: replacements seen by the copy only, the user's namespaces untouched, globals the copy
assigns written back."""

from __future__ import annotations

import types

import numpy as np

from symdiff.trace.environment import ModuleView, rewired

DATA = np.arange(3.0)
calls = 0


def _replace(value, label):
    return ("replaced", label) if isinstance(value, np.ndarray) else None


def _helper():
    return DATA


def _even(n):
    return DATA if n == 0 else _odd(n - 1)


def _odd(n):
    return _even(n - 1) if n else None


def _counting():
    global calls
    calls += 1
    return DATA


def _untouched():
    return len("abc")


def _keeping():
    global KEPT
    KEPT = DATA


def test_the_copy_reads_replacements_and_the_originals_are_untouched():
    local = np.ones(2)

    def f():
        return local, _helper(), np.random.normal

    found = rewired(f, _replace)
    assert found.function is not f
    got_local, got_global, _ = found.function()
    assert got_local == ("replaced", "local") and got_global == ("replaced", "DATA")
    assert f()[0] is local and _helper() is DATA  # the user's function and module unchanged
    assert f.__closure__[0].cell_contents is local
    assert {r.label for r in found.replaced} == {"local", "DATA"}


def test_functions_calling_each_other_read_each_others_copies():
    found = rewired(lambda: _even(4), _replace)
    assert found.function() == ("replaced", "DATA")
    assert _even(4) is DATA


def test_what_reaches_nothing_replaced_is_not_copied():
    found = rewired(_untouched, _replace)
    assert found.function is _untouched and not found.replaced


def test_modules_are_seen_through_a_view():
    def f():
        return np.random.normal, np.sum

    found = rewired(f, lambda v, label: "sampler" if label == "normal" else None)
    normal, total = found.function()
    assert normal == "sampler" and total is np.sum
    scope = found.function.__globals__
    assert isinstance(scope["np"], ModuleView) and globals()["np"] is np


def test_bound_methods_keep_their_object():
    class Model:
        def loss(self):
            return DATA, self

    model = Model()
    found = rewired(model.loss, _replace)
    assert isinstance(found.function, types.MethodType)
    assert found.function() == (("replaced", "DATA"), model)


def test_assigned_globals_are_written_back_but_never_a_replacement():
    before = calls
    found = rewired(_counting, _replace)
    found.function()
    found.write_back()
    assert calls == before + 1
    view = ModuleView(types.ModuleType("stand_in"), {})  # a value of symdiff's own
    found = rewired(_keeping, lambda v, label: view if isinstance(v, np.ndarray) else None)
    found.function()
    found.write_back()
    assert "KEPT" not in globals()


def test_objects_and_containers_are_noticed_not_replaced():
    class Holder:
        pass

    holder = Holder()
    holder.inner = {"array": np.zeros(1)}
    seen = []

    def f():
        return holder.inner

    found = rewired(f, lambda v, label: None, lambda v, label: seen.append(label))
    assert found.function is f
    assert "inner" in seen and "array" in seen
