"""A process that builds many functions holds a bounded number of them: the in-process memos
keep the most recently used (:data:`symdiff.cache.MEMO_SIZE`), and a module's lines leave
linecache when its last function is freed."""

from __future__ import annotations

import gc
import linecache

import pytest

import symdiff as sd
from symdiff import pipeline, request_index
from symdiff.cache import LRU
from symdiff.codegen import load

from .conftest import reset_memory


def test_the_lru_keeps_the_most_recently_used():
    memo: LRU[str, int] = LRU(3)
    for i in range(3):
        memo.put(str(i), i)
    assert memo.get("0") == 0  # now the most recent
    memo.put("3", 3)
    assert "1" not in memo and memo.get("0") == 0 and len(memo) == 3
    memo.put("0", 10)
    assert memo.get("0") == 10 and len(memo) == 3
    memo.clear()
    assert len(memo) == 0 and memo.get("0") is None


@pytest.mark.parametrize("cache", [True, False])
def test_builds_beyond_the_memo_size_are_freed_with_their_lines(cache_dir, monkeypatch, cache):
    monkeypatch.setattr(pipeline._MEMO, "size", 4)
    monkeypatch.setattr(request_index._RAW_MEMO, "size", 4)
    reset_memory()
    gc.collect()
    before = load.registered()
    names = set()
    for k in range(12):
        g = sd.grad(f"x**{k + 2}*y + {k}", wrt="x", cache=cache)
        assert float(g(2.0, 3.0)) == (k + 2) * 2.0 ** (k + 1) * 3.0
        names.add(g._fn.__code__.co_filename)
        del g
    gc.collect()
    assert len(pipeline._MEMO) <= 4 and len(request_index._RAW_MEMO) <= 4
    assert load.registered() - before <= 8  # what the memos still hold, at most
    assert len(names & set(linecache.cache)) <= 8
    kept = sd.grad("x**13*y + 11", wrt="x", cache=cache)  # the last one: still in memory
    if cache:
        assert sd.grad("x**13*y + 11", wrt="x") is kept
    assert kept._fn.__code__.co_filename in linecache.cache
    reset_memory()
