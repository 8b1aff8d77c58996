"""The on-disk module cache: verification, atomicity across processes, safety, eviction."""

from __future__ import annotations

import errno
import hashlib
import hmac
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import symdiff.cache.disk as disk
import symdiff.cache.files as files
import symdiff.cache.usage as usage
from symdiff.cache import (
    DEFAULT_MAX_MB,
    FORMAT_VERSION,
    DiskStore,
    MemoryStore,
    Store,
    SymdiffCacheWarning,
    cache_key,
    open_store,
    reset_store,
)
from tests.cache_workers.common import N_KEYS, big_text, entry_text, key

ROOT = Path(__file__).resolve().parent.parent
WORKERS = Path(__file__).resolve().parent / "cache_workers"
MB = 1024 * 1024
K1 = "0123456789abcdef" * 4
K2 = "fedcba9876543210" * 4
ENV_VARS = ("SYMDIFF_CACHE_DIR", "SYMDIFF_DISABLE_CACHE", "SYMDIFF_CACHE_MAX_MB")
on_posix = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions and signals")


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    """Every test gets its own cache root in SYMDIFF_CACHE_DIR and a fresh process store."""
    for var in ENV_VARS:
        monkeypatch.delenv(var, raising=False)
    root = tmp_path / "cache"
    monkeypatch.setenv("SYMDIFF_CACHE_DIR", str(root))
    reset_store()
    yield root
    reset_store()


# -- helpers ---------------------------------------------------------------------------------------
def entry_path(root: Path, namespace: str, k: str) -> Path:
    """Where the documented layout puts an entry."""
    return root / f"v{FORMAT_VERSION}" / namespace / k[:2] / f"{k}.py"


def secret_of(root: Path) -> bytes:
    """The cache's secret, as a store creates it (opening one first if there is none)."""
    if not (root / "secret").exists():
        DiskStore(root, MB)
    return (root / "secret").read_bytes()


def make_entry(body: bytes, version: int = FORMAT_VERSION, *, root: Path | None = None,
               namespace: str = "module", k: str = "0123456789abcdef" * 4,
               secret: bytes | None = None) -> bytes:
    """A file in the documented format, written independently of the module: the header
    ``# symdiff-cache v<version> <namespace>/<key> bytes=<n> hmac-sha256=<hex>`` whose MAC,
    keyed by the secret in ``root`` (or ``secret``), covers the header before it, a newline
    and the body."""
    if secret is None:
        secret = secret_of(root) if root is not None else b"\0" * 32
    signed = f"# symdiff-cache v{version} {namespace}/{k} bytes={len(body)}".encode()
    mac = hmac.new(secret, signed + b"\n" + body, hashlib.sha256).hexdigest()
    return signed + f" hmac-sha256={mac}\n".encode() + body


def plant(root: Path, namespace: str, k: str, data: bytes) -> Path:
    path = entry_path(root, namespace, k)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_bytes(data)
    return path


def files_under(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*")
                  if p.is_file() and p.name not in (".lock", ".usage", "secret"))


def temp_files(root: Path) -> list[Path]:
    return [p for p in files_under(root) if p.name.startswith(".tmp-")]


def cache_warnings(record: list[warnings.WarningMessage]) -> list[warnings.WarningMessage]:
    return [w for w in record if issubclass(w.category, SymdiffCacheWarning)]


def open_recording() -> tuple[Store, list[warnings.WarningMessage]]:
    """open_store() with every warning recorded."""
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        store = open_store()
    return store, cache_warnings(record)


def child_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ENV_VARS}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


# -- basics ----------------------------------------------------------------------------------------
def test_round_trip_and_next_process_view(cache_dir):
    store = open_store()
    assert isinstance(store, DiskStore)
    assert isinstance(store, Store)
    assert store.get("module", K1) is None
    store.put("module", K1, "def f(x):\n    return x\n")
    assert store.get("module", K1) == "def f(x):\n    return x\n"
    # a new store over the same directory (what the next process sees) reads it back
    reset_store()
    again = open_store()
    assert again is not store
    assert again.get("module", K1) == "def f(x):\n    return x\n"
    data = entry_path(cache_dir, "module", K1).read_bytes()
    assert data == make_entry(b"def f(x):\n    return x\n", root=cache_dir, k=K1)


def test_put_overwrites(cache_dir):
    store = open_store()
    store.put("module", K1, "a = 1\n")
    store.put("module", K1, "a = 2\n")
    assert store.get("module", K1) == "a = 2\n"
    assert len(files_under(cache_dir)) == 1


def test_text_round_trips_exactly(tmp_path):
    store = DiskStore(tmp_path / "prop", 50 * MB)

    @given(st.text(), st.sampled_from(["module", "index"]))
    def check(text, namespace):
        k = cache_key(text, namespace)
        store.put(namespace, k, text)
        assert store.get(namespace, k) == text
        assert DiskStore(tmp_path / "prop", 50 * MB).get(namespace, k) == text

    check()


def test_namespaces_are_separate():
    store = open_store()
    store.put("module", K1, "m")
    store.put("index", K2, "i")
    assert store.get("index", K1) is None
    assert store.get("module", K2) is None
    store.put("index", K1, "other")
    assert store.get("module", K1) == "m"
    assert store.get("index", K1) == "other"
    assert store.info()["entries"] == 3


BAD_NAMESPACES = ["", "Module", "mod-ule", "../x", "module/x", "mod1", "modulé", "module\n"]
BAD_KEYS = ["", "abc", "0123456789ABCDEF", "g" * 20, "../" + "a" * 16, "a" * 65, "a" * 16 + "\n"]


@pytest.mark.parametrize("kind", ["disk", "memory"])
def test_invalid_namespace_or_key_is_value_error(kind, tmp_path):
    store = DiskStore(tmp_path / "c", MB) if kind == "disk" else MemoryStore()
    for namespace in BAD_NAMESPACES:
        with pytest.raises(ValueError):
            store.get(namespace, K1)
        with pytest.raises(ValueError):
            store.put(namespace, K1, "x")
    for k in BAD_KEYS:
        with pytest.raises(ValueError):
            store.get("module", k)
        with pytest.raises(ValueError):
            store.put("module", k, "x")
    with pytest.raises(ValueError):
        store.get("module", 12345)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        store.put("module", K1, b"bytes")  # type: ignore[arg-type]
    store.put("module", "a" * 16, "shortest key")
    assert store.get("module", "a" * 16) == "shortest key"
    assert not list((tmp_path).glob("**/x*"))


# -- entries that do not verify --------------------------------------------------------------------
BODY = b"def f(x):\n    return x * 2\n"


def corruptions(root: Path) -> dict[str, bytes]:
    """Files that must not verify as the entry ``module/K1`` of the cache at ``root``."""
    good = make_entry(BODY, root=root, k=K1)
    return {
        "truncated": good[:-5],
        "edited": good.replace(b"x * 2", b"x * 3"),
        "foreign": BODY,
        "empty": b"",
        "wrong version": make_entry(BODY, FORMAT_VERSION + 1, root=root, k=K1),
        "bad header": good.replace(b"bytes=", b"size="),
        "extra bytes": good + b"\n",
        "not utf-8": make_entry(b"x = '\xff\xfe'\n", root=root, k=K1),
        "header only": good.split(b"\n")[0],
        "binary junk": bytes(range(256)) * 4,
        "another key's": make_entry(BODY, root=root, k=K2),
        "another namespace's": make_entry(BODY, root=root, namespace="index", k=K1),
        "another secret's": make_entry(BODY, k=K1, secret=b"s" * 32),
        "plain sha256 header": (
            f"# symdiff-cache v{FORMAT_VERSION} module/{K1} bytes={len(BODY)} "
            f"hmac-sha256={hashlib.sha256(BODY).hexdigest()}\n"
        ).encode() + BODY,
    }


CORRUPTIONS = [
    "truncated", "edited", "foreign", "empty", "wrong version", "bad header", "extra bytes",
    "not utf-8", "header only", "binary junk", "another key's", "another namespace's",
    "another secret's", "plain sha256 header",
]


@pytest.mark.parametrize("case", CORRUPTIONS)
def test_entry_that_does_not_verify_is_a_miss_and_deleted(case, cache_dir):
    store = open_store()
    good = make_entry(BODY, root=cache_dir, k=K1)
    plant(cache_dir, "module", K1, good)
    assert store.get("module", K1) == BODY.decode()  # the reference file itself verifies
    path = plant(cache_dir, "module", K1, corruptions(cache_dir)[case])
    assert store.get("module", K1) is None
    assert not path.exists()
    store.put("module", K1, "y = 1\n")
    assert store.get("module", K1) == "y = 1\n"


def test_bad_entry_replaced_meanwhile_is_not_deleted(cache_dir, monkeypatch):
    """A reader that saw a bad file must not delete the good one a writer put there since."""
    store = open_store()
    path = plant(cache_dir, "module", K1, corruptions(cache_dir)["edited"])
    real = disk.decode_entry

    def read_then_writer_replaces(*args):
        DiskStore(cache_dir, MB).put("module", K1, "good = 1\n")
        return real(*args)

    monkeypatch.setattr(disk, "decode_entry", read_then_writer_replaces)
    assert store.get("module", K1) is None
    monkeypatch.undo()
    monkeypatch.setenv("SYMDIFF_CACHE_DIR", str(cache_dir))
    assert path.exists()
    assert store.get("module", K1) == "good = 1\n"


def test_symlinked_entry_is_not_followed(cache_dir, tmp_path):
    store = open_store()
    elsewhere = tmp_path / "elsewhere.py"
    elsewhere.write_bytes(make_entry(b"planted = True\n"))
    path = entry_path(cache_dir, "module", K1)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(elsewhere)
    assert store.get("module", K1) is None
    assert not path.is_symlink()
    assert elsewhere.exists()


def test_unreadable_entry_never_raises(cache_dir):
    store = open_store()
    path = entry_path(cache_dir, "module", K1)
    path.mkdir(parents=True)  # a directory where the file should be
    assert store.get("module", K1) is None
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        store.put("module", K1, "z = 0\n")  # os.replace onto a directory fails
    assert len(cache_warnings(record)) == 1
    assert store.get("module", K1) == "z = 0\n"


# -- many processes at once ------------------------------------------------------------------------
@pytest.mark.slow
def test_eight_processes_share_the_same_keys(cache_dir):
    rounds, n_procs = 15, 8
    env = child_env(SYMDIFF_CACHE_DIR=str(cache_dir))
    procs = [
        subprocess.Popen(
            [sys.executable, str(WORKERS / "hammer.py"), str(rounds), str(seed)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for seed in range(n_procs)
    ]
    try:
        for proc in procs:
            assert proc.stdout.readline().strip() == "ready", proc.stderr.read()
        start = time.perf_counter()
        for proc in procs:  # release them together
            proc.stdin.write("go\n")
            proc.stdin.flush()
        reports = []
        for proc in procs:
            out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0, err
            reports.append(json.loads(out))
        wall = time.perf_counter() - start
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    for report in reports:
        assert report["kind"] == "disk"
        assert report["errors"] == []
        assert report["discarded"] == []  # no reader ever saw a partial or foreign file
        assert report["hits"] + report["misses"] == rounds * N_KEYS
    print(
        f"\n8 processes x {rounds} rounds x {N_KEYS} keys: wall {wall:.2f}s, per process "
        + ", ".join(f"{r['seconds']:.2f}s" for r in reports)
    )
    files = files_under(cache_dir)
    assert temp_files(cache_dir) == []
    assert sorted(files) == sorted(entry_path(cache_dir, "module", key(k)) for k in range(N_KEYS))
    fresh = DiskStore(cache_dir, DEFAULT_MAX_MB * MB)
    for k in range(N_KEYS):
        assert fresh.get("module", key(k)) == entry_text(k)


# -- writers that die ------------------------------------------------------------------------------
@on_posix
def test_temp_files_of_dead_writers_are_removed_at_once(cache_dir):
    import fcntl

    store = open_store()
    store.put("module", K1, "a = 1\n")
    shard = entry_path(cache_dir, "module", K1).parent
    dead = shard / ".tmp-abandoned.part"  # nobody holds it: its writer is gone
    dead.write_bytes(make_entry(BODY)[:10])
    live = shard / ".tmp-in-progress.part"  # a writer still at work holds its lock
    fd = os.open(live, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, b"being written")
        store = DiskStore(cache_dir, DEFAULT_MAX_MB * MB)  # as the next process opens it
        assert store.get("module", K1) == "a = 1\n"
        store.put("module", K2, "b = 2\n")  # a process's first put measures the tree
        assert not dead.exists()
        assert live.exists()
        assert store.get("module", K2) == "b = 2\n"
        assert store.info()["entries"] == 2  # temp files are not entries
        assert store.prune() == 0
        assert live.exists()
    finally:
        os.close(fd)
    assert store.prune() == 1  # its writer let go without putting it in place
    assert not live.exists()
    assert store.get("module", K1) == "a = 1\n"


@pytest.mark.slow
@on_posix
def test_writer_killed_mid_write_leaves_nothing_half_written(cache_dir):
    env = child_env(SYMDIFF_CACHE_DIR=str(cache_dir))
    for delay in (0.0, 0.05, 0.13, 0.31):
        proc = subprocess.Popen(
            [sys.executable, str(WORKERS / "writer.py")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        try:
            line = proc.stdout.readline()
            assert line.strip() == "wrote", proc.stderr.read()
            time.sleep(delay)
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        assert proc.returncode == -signal.SIGKILL
    reset_store()
    store = open_store()
    entries = [p for p in files_under(cache_dir) if not p.name.startswith(".tmp-")]
    assert entries  # every writer completed at least one put
    expected = {key(k, "big"): big_text(k) for k in range(3)}
    for path in entries:  # every complete file verifies: never half a file under the final name
        assert store.get("module", path.stem) == expected[path.stem]
    store.put("module", K1, "after = True\n")  # the next write removes what they left
    assert temp_files(cache_dir) == []
    assert store.get("module", K1) == "after = True\n"


# -- unusable or unsafe directories ----------------------------------------------------------------
def assert_memory_fallback(store: Store, record: list, *words: str) -> None:
    assert isinstance(store, MemoryStore)
    assert len(record) == 1, [str(w.message) for w in record]
    message = str(record[0].message)
    assert "kept in memory" in message
    info = store.info()
    assert info["kind"] == "memory" and info["path"] is None
    assert info["reason"] and info["reason"] in message
    for word in words:
        assert word in info["reason"]
    store.put("module", K1, "kept = 1\n")
    assert store.get("module", K1) == "kept = 1\n"
    # the store is reused: no second warning
    with warnings.catch_warnings(record=True) as again:
        warnings.simplefilter("always")
        assert open_store() is store
    assert cache_warnings(again) == []


def test_unwritable_root_under_a_regular_file(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("not a directory")
    root = tmp_path / "file" / "cache"
    monkeypatch.setenv("SYMDIFF_CACHE_DIR", str(root))
    store, record = open_recording()
    assert_memory_fallback(store, record, "cannot create")
    assert (tmp_path / "file").read_text() == "not a directory"


@on_posix
@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="root ignores permission bits; covered by the regular-file and probe-failure tests",
)
def test_read_only_root_chmod(cache_dir):
    cache_dir.mkdir(mode=0o700)
    cache_dir.chmod(0o500)
    try:
        store, record = open_recording()
        assert_memory_fallback(store, record)
    finally:
        cache_dir.chmod(0o700)


def test_existing_root_that_cannot_be_written(cache_dir, monkeypatch):
    """An existing, safe directory whose write probe fails (read-only for us, or a read-only
    file system): simulated by failing the probe, which works for root too."""
    DiskStore(cache_dir, MB)  # create it properly first

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(files, "new_temp", refuse)
    store, record = open_recording()
    assert_memory_fallback(store, record, "not writable")


@on_posix
@pytest.mark.parametrize("which", ["root", "version"])
def test_world_writable_directory_is_never_read(which, cache_dir):
    planted = DiskStore(cache_dir, MB)
    planted.put("module", K1, "import os  # planted by someone else\n")
    assert planted.get("module", K1) is not None
    target = cache_dir if which == "root" else cache_dir / f"v{FORMAT_VERSION}"
    target.chmod(0o777)
    store, record = open_recording()
    assert isinstance(store, MemoryStore)
    assert store.get("module", K1) is None
    assert_memory_fallback(store, record, "writable by group or others")
    assert entry_path(cache_dir, "module", K1).exists()  # nothing touched there either


@on_posix
def test_group_writable_directory_is_unsafe(cache_dir):
    cache_dir.mkdir(mode=0o700)
    cache_dir.chmod(0o770)
    store, record = open_recording()
    assert_memory_fallback(store, record, "chmod go-w")
    assert not (cache_dir / f"v{FORMAT_VERSION}").exists()  # nothing created inside it


@on_posix
@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can chown to another uid"
)
def test_directory_owned_by_another_user_is_unsafe(cache_dir):
    DiskStore(cache_dir, MB).put("module", K1, "planted = 1\n")
    os.chown(cache_dir, 65534, -1)
    store, record = open_recording()
    assert store.get("module", K1) is None
    assert_memory_fallback(store, record, "owned by another user")


@on_posix
def test_created_directories_are_private(cache_dir):
    old = os.umask(0)
    try:
        store = open_store()
        store.put("module", K1, "p = 1\n")
    finally:
        os.umask(old)
    path = entry_path(cache_dir, "module", K1)
    for directory in (cache_dir, *path.relative_to(cache_dir).parents):
        mode = stat.S_IMODE((cache_dir / directory).stat().st_mode)
        assert mode == 0o700, (directory, oct(mode))
    assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0


# -- failing writes --------------------------------------------------------------------------------
@pytest.mark.parametrize("failing", ["replace", "fsync", "new_temp"])
def test_disk_full_during_put(failing, cache_dir, monkeypatch):
    store = open_store()
    assert isinstance(store, DiskStore)

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    target = files if failing == "new_temp" else files.os
    monkeypatch.setattr(target, failing, full)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        store.put("module", K1, "first = 1\n")
        store.put("index", K2, "second = 2\n")
    record = cache_warnings(record)
    assert len(record) == 1
    assert "kept in memory" in str(record[0].message)
    assert store.get("module", K1) == "first = 1\n"
    assert store.get("index", K2) == "second = 2\n"
    assert temp_files(cache_dir) == []
    assert files_under(cache_dir) == []
    monkeypatch.undo()
    monkeypatch.setenv("SYMDIFF_CACHE_DIR", str(cache_dir))
    store.put("module", K1, "first = 1\n")  # the disk works again
    assert DiskStore(cache_dir, MB).get("module", K1) == "first = 1\n"


# -- size cap --------------------------------------------------------------------------------------
def test_lru_eviction_under_small_cap(cache_dir):
    cap = 12_000
    store = DiskStore(cache_dir, cap)
    text = "# " + "z" * 900 + "\n"  # ~1 KB per file with its header
    keys = [cache_key("lru", str(i)) for i in range(12)]
    for k in keys[:8]:
        store.put("module", k, text)
    base = time.time() - 1000
    for i, k in enumerate(keys[:8]):  # distinct, increasing ages: keys[0] is the oldest
        os.utime(entry_path(cache_dir, "module", k), (base + i, base + i))
    assert store.get("module", keys[0]) == text  # touched: now the most recent
    assert store.get("module", keys[1]) == text
    for k in keys[8:]:
        store.put("module", k, text)
    present = {k for k in keys if entry_path(cache_dir, "module", k).exists()}
    info = store.info()
    assert info["bytes"] <= cap
    assert {keys[0], keys[1], *keys[8:]} <= present
    assert keys[2] not in present and keys[3] not in present  # the oldest untouched ones
    assert info["entries"] == len(present) < 12
    for k in present:
        assert store.get("module", k) == text


def test_busy_lock_skips_eviction(cache_dir, monkeypatch):
    import filelock

    monkeypatch.setattr(disk, "LOCK_WAIT_SECONDS", 0.05)
    store = DiskStore(cache_dir, 3000)
    text = "# " + "z" * 900 + "\n"
    holder = filelock.FileLock(str(cache_dir / f"v{FORMAT_VERSION}" / ".lock"))
    with holder:  # another process is evicting
        for i in range(5):
            store.put("module", cache_key("busy", str(i)), text)
        assert store.info()["entries"] == 5  # nothing evicted, nothing raised
        assert store.clear() == 5  # clear goes ahead without the lock
        for i in range(5):
            store.put("module", cache_key("busy", str(i)), text)
    assert store.prune() > 0
    assert store.info()["bytes"] <= 3000


def test_running_estimate_does_not_scan_every_put(cache_dir, monkeypatch):
    store = DiskStore(cache_dir, 10 * MB)
    scans = []
    real = usage.walk
    monkeypatch.setattr(usage, "walk", lambda top: scans.append(top) or real(top))
    for i in range(usage.SCAN_EVERY_PUTS):
        store.put("module", cache_key(str(i)), "s = 1\n")
    assert len(scans) == 1  # the first put measures the tree, the rest only count


def test_entry_larger_than_cap_is_kept_in_memory(cache_dir):
    store = DiskStore(cache_dir, 1000)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        store.put("module", K1, "q" * 5000)
    assert store.get("module", K1) == "q" * 5000
    assert files_under(cache_dir) == []


def test_clear_removes_everything(cache_dir):
    store = open_store()
    for i in range(5):
        store.put("module", cache_key("m", str(i)), "m\n")
    for i in range(3):
        store.put("index", cache_key("i", str(i)), "i\n")
    info = store.info()
    assert info["entries"] == 8 and info["bytes"] > 0
    assert store.clear() == 8
    assert store.info()["entries"] == 0 and store.info()["bytes"] == 0
    top = cache_dir / f"v{FORMAT_VERSION}"
    assert sorted(p.name for p in top.iterdir()) == [".lock"]  # no empty shard directory left
    assert store.get("module", cache_key("m", "0")) is None
    assert store.clear() == 0
    memory = MemoryStore()
    memory.put("module", K1, "a")
    memory.put("index", K1, "b")
    assert memory.clear() == 2 and memory.get("module", K1) is None


def test_info_shapes(cache_dir):
    info = open_store().info()
    assert info == {
        "path": str(cache_dir / f"v{FORMAT_VERSION}"),
        "entries": 0,
        "bytes": 0,
        "cap": DEFAULT_MAX_MB * MB,
        "kind": "disk",
        "reason": None,
    }
    memory = MemoryStore(1000, reason="why")
    memory.put("module", K1, "é")
    assert memory.info() == {
        "path": None,
        "entries": 1,
        "bytes": 2,
        "cap": 1000,
        "kind": "memory",
        "reason": "why",
    }


def test_memory_store_is_bounded():
    memory = MemoryStore(10)
    memory.put("module", K1, "12345678")
    memory.get("module", K1)
    memory.put("module", K2, "1234")
    assert memory.get("module", K1) is None and memory.get("module", K2) == "1234"


# -- environment -----------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["1", "true", "yes", "TRUE", " Yes "])
def test_disable_cache(value, monkeypatch, cache_dir):
    monkeypatch.setenv("SYMDIFF_DISABLE_CACHE", value)
    store, record = open_recording()
    assert isinstance(store, MemoryStore) and record == []
    assert store.info()["reason"] == "disabled by SYMDIFF_DISABLE_CACHE"
    store.put("module", K1, "m = 1\n")
    assert store.get("module", K1) == "m = 1\n"
    assert not cache_dir.exists()


@pytest.mark.parametrize("value", ["0", "", "no"])
def test_disable_cache_off(value, monkeypatch):
    monkeypatch.setenv("SYMDIFF_DISABLE_CACHE", value)
    assert open_store().info()["kind"] == "disk"


@pytest.mark.parametrize(("value", "cap"), [("0.5", MB // 2), ("3", 3 * MB)])
def test_max_mb(value, cap, monkeypatch):
    monkeypatch.setenv("SYMDIFF_CACHE_MAX_MB", value)
    store, record = open_recording()
    assert record == [] and store.info()["cap"] == cap


@pytest.mark.parametrize("value", ["0", "0.0", " 0 "])
def test_max_mb_zero_means_no_disk_cache(value, monkeypatch, cache_dir):
    monkeypatch.setenv("SYMDIFF_CACHE_MAX_MB", value)
    store, record = open_recording()
    assert record == [] and isinstance(store, MemoryStore)
    info = store.info()
    assert info["kind"] == "memory" and info["path"] is None
    assert info["reason"] == "disabled by SYMDIFF_CACHE_MAX_MB=0"
    store.put("module", K1, "m = 1\n")
    assert store.get("module", K1) == "m = 1\n"  # this process still keeps what it built
    assert not cache_dir.exists()


@pytest.mark.parametrize("value", ["lots", "-1", "nan", "inf", "1e400"])
def test_invalid_max_mb_warns_and_uses_default(value, monkeypatch):
    monkeypatch.setenv("SYMDIFF_CACHE_MAX_MB", value)
    store, record = open_recording()
    assert len(record) == 1 and "SYMDIFF_CACHE_MAX_MB" in str(record[0].message)
    assert store.info()["kind"] == "disk"
    assert store.info()["cap"] == DEFAULT_MAX_MB * MB


def test_default_root_comes_from_platformdirs(tmp_path, monkeypatch):
    import platformdirs

    monkeypatch.delenv("SYMDIFF_CACHE_DIR")
    calls = []

    def fake(appname, *args, **kwargs):
        calls.append(appname)
        return str(tmp_path / "platform" / appname)

    monkeypatch.setattr(platformdirs, "user_cache_dir", fake)
    expected = tmp_path / "platform" / "symdiff" / f"v{FORMAT_VERSION}"
    assert open_store().info()["path"] == str(expected)
    assert calls == ["symdiff"]


def test_open_store_is_reused_until_reset(monkeypatch, tmp_path):
    first = open_store()
    assert open_store() is first
    monkeypatch.setenv("SYMDIFF_CACHE_DIR", str(tmp_path / "other"))
    assert open_store() is first
    reset_store()
    assert open_store().info()["path"] == str(tmp_path / "other" / f"v{FORMAT_VERSION}")


# -- import cost and keys --------------------------------------------------------------------------
def test_import_is_cheap_and_does_no_io(tmp_path):
    code = (
        "import sys, symdiff.cache\n"
        "heavy = {'sympy', 'numpy', 'jinja2'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    target = tmp_path / "never"
    env = child_env(
        SYMDIFF_CACHE_DIR=str(target), HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(target)
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"
    assert not target.exists() and not (tmp_path / "home").exists()


# sha256(b"1:a;1:b;"): each part as "<utf-8 length>:<utf-8 bytes>;"
GOLDEN_KEY = "d3bfd0a218bb20b3c8a571e4fff25d38b41887aa708d3f87c0fa2ae170bed6d9"


def test_cache_key_is_stable_across_processes_and_hash_seeds():
    parts = ("sin(x)*exp(y)", "grad", "x,y", "é")
    here = cache_key(*parts)
    assert len(here) == 64 and int(here, 16) >= 0
    code = f"from symdiff.cache import cache_key; print(cache_key(*{parts!r}))"
    for seed in ("0", "1", "12345", "random"):
        out = subprocess.run(
            [sys.executable, "-c", code],
            env=child_env(PYTHONHASHSEED=seed),
            capture_output=True,
            text=True,
            check=True,
        )
        assert out.stdout.strip() == here
    assert cache_key("a", "b") == GOLDEN_KEY  # changing the key scheme orphans every entry


def test_cache_key_is_unambiguous():
    assert cache_key("ab", "c") != cache_key("a", "bc")
    assert cache_key("a", "") != cache_key("a")
    assert cache_key("") != cache_key()
    assert cache_key("1:a") != cache_key("a")
    with pytest.raises(TypeError):
        cache_key(b"bytes")  # type: ignore[arg-type]


@given(st.lists(st.text(max_size=5), max_size=4), st.lists(st.text(max_size=5), max_size=4))
def test_cache_key_is_injective(first, second):
    if first != second:
        assert cache_key(*first) != cache_key(*second)
    else:
        assert cache_key(*first) == cache_key(*second)


def test_no_temp_file_left_by_a_normal_put(cache_dir):
    store = open_store()
    for i in range(10):
        store.put("module", cache_key(str(i)), f"n = {i}\n")
    assert temp_files(cache_dir) == []
    assert not list(Path(tempfile.gettempdir()).glob(".tmp-*.part"))
