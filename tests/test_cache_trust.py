"""What the disk cache trusts: an entry is served only under the key it was written for, only
if it carries the MAC of this cache's secret, and only from directories and files that no one
but this user (or root) could have written; odd files (FIFOs, sockets, directories, huge files)
are misses that never block. Each case checks that the right gradient comes back."""

from __future__ import annotations

import hashlib
import os
import shutil
import socket
import stat
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest

import symdiff as sd
from symdiff import cache
from symdiff.cache import DiskStore, MemoryStore, SymdiffCacheWarning, open_store, reset_store

from .conftest import ROOT, reset_memory

MB = 1024 * 1024
K1 = "0123456789abcdef" * 4
K2 = "fedcba9876543210" * 4
VERSION = f"v{cache.FORMAT_VERSION}"
posix = pytest.mark.skipif(os.name != "posix", reason="POSIX owners, modes, FIFOs and sockets")
as_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can chown to another uid"
)
NOBODY = 65534


def entries(root: Path, namespace: str) -> list[Path]:
    return sorted((root / VERSION / namespace).glob("*/*.py"))


def only(root: Path, namespace: str) -> Path:
    (entry,) = entries(root, namespace)
    return entry


def recorded_warnings(action):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = action()
    return result, [w for w in record if issubclass(w.category, SymdiffCacheWarning)]


def fresh_grad(expr: str, **options):
    """``sd.grad`` as a new process would call it: nothing held in memory."""
    reset_memory()
    return sd.grad(expr, **options)


# -- bound to its key ------------------------------------------------------------------------------
@pytest.mark.parametrize("namespace", ["index", "module"])
def test_a_swapped_entry_is_rebuilt_not_served(cache_dir, namespace):
    """Moving one valid entry over another (no edit at all) is caught: the header names the
    key the entry was written for, under the MAC."""
    square, cube = sd.grad("x**2", wrt="x"), sd.grad("x**3", wrt="x")
    assert (square(2.0), cube(2.0)) == (4.0, 12.0)
    by_function = {}  # which file is which
    for path in entries(cache_dir, namespace):
        text = path.read_text()
        by_function["x**3" if "x**3" in text or "3*x**2" in text else "x**2"] = path
    assert len(by_function) == 2
    shutil.copyfile(by_function["x**3"], by_function["x**2"])  # the cube's, as the square's
    assert fresh_grad("x**2", wrt="x")(2.0) == 4.0
    assert "x**2" in by_function["x**2"].read_text()  # rebuilt in place
    assert fresh_grad("x**3", wrt="x")(2.0) == 12.0


def test_a_recomputed_header_does_not_pass(cache_dir, tmp_path):
    """An edit whose header is recomputed as a plain SHA-256 (what anyone can do), or as an
    HMAC with a guessed secret, is rebuilt; the edited code never runs."""
    sd.grad("sin(x)*y", wrt="x")
    entry = only(cache_dir, "module")
    header, body = entry.read_bytes().split(b"\n", 1)
    canary = tmp_path / "canary"
    edited = body.replace(b"_np.cos(x)", b"_np.sin(x)").replace(
        b"import numpy as _np\n", f"import numpy as _np\nopen({str(canary)!r}, 'w')\n".encode()
    )
    assert edited != body
    import hmac

    signed = header.rsplit(b" hmac-sha256=", 1)[0].replace(
        b"bytes=%d" % len(body), b"bytes=%d" % len(edited))
    for mac in (
        hashlib.sha256(edited).hexdigest(),
        hmac.new(b"\0" * 32, signed + b"\n" + edited, hashlib.sha256).hexdigest(),
    ):
        entry.write_bytes(signed + f" hmac-sha256={mac}\n".encode() + edited)
        g = fresh_grad("sin(x)*y", wrt="x")
        assert float(g(0.5, 2.0)) == pytest.approx(2.0 * 0.8775825618903728, rel=1e-15)
        assert "_np.cos(x)" in g.source and "canary" not in g.source
        assert not canary.exists()
        assert b"canary" not in entry.read_bytes()


def test_an_entry_from_another_account_is_rebuilt(cache_dir, tmp_path, monkeypatch):
    """Another cache (another account or machine: another secret) writes the same entries;
    copied here, they are misses."""
    other = tmp_path / "other-account"
    monkeypatch.setenv("SYMDIFF_CACHE_DIR", str(other))
    reset_memory()
    sd.grad("exp(x)*y", wrt="y")
    monkeypatch.setenv("SYMDIFF_CACHE_DIR", str(cache_dir))
    reset_memory()
    before = sd.grad("exp(x)*y", wrt="y").source
    for namespace in ("index", "module"):
        for path in entries(other, namespace):
            target = cache_dir / path.relative_to(other)
            target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            shutil.copyfile(path, target)
    assert (other / "secret").read_bytes() != (cache_dir / "secret").read_bytes()
    store = DiskStore(cache_dir, 10 * MB)
    for path in entries(cache_dir, "module") + entries(cache_dir, "index"):
        assert store.get(path.parent.parent.name, path.stem) is None  # none verifies here
    g = fresh_grad("exp(x)*y", wrt="y")
    assert float(g(1.0, 5.0)) == pytest.approx(2.718281828459045, rel=1e-15)
    assert g.source == before


def test_the_secret_is_private_and_checked(cache_dir):
    open_store()
    secret = cache_dir / "secret"
    if os.name == "posix":
        assert stat.S_IMODE(secret.stat().st_mode) == 0o600
    assert len(secret.read_bytes()) == 32
    DiskStore(cache_dir, MB)  # reused, not replaced
    assert len(secret.read_bytes()) == 32
    if os.name != "posix":
        return
    secret.chmod(0o644)  # readable by others: anyone could forge entries
    reset_store()
    store, caught = recorded_warnings(open_store)
    assert isinstance(store, MemoryStore) and len(caught) == 1
    assert "chmod 600" in store.info()["reason"]
    secret.chmod(0o600)


def test_concurrent_first_use_agrees_on_one_secret(tmp_path):
    code = "import sys; from symdiff.cache import DiskStore; DiskStore(sys.argv[1], 10**6)"
    root = tmp_path / "new"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    processes = [subprocess.Popen([sys.executable, "-c", code, str(root)], env=env)
                 for _ in range(6)]
    assert [p.wait(timeout=120) for p in processes] == [0] * 6
    assert len((root / "secret").read_bytes()) == 32
    assert not [p for p in root.iterdir() if p.name.startswith(".tmp-")]


# -- the whole path --------------------------------------------------------------------------------
def shard_of(root: Path, namespace: str = "module") -> Path:
    return only(root, namespace).parent


def assert_memory_with_one_warning(expr: str, wrt: str, point: tuple, expected: float,
                                   *words: str) -> None:
    g, caught = recorded_warnings(lambda: fresh_grad(expr, wrt=wrt))
    assert float(g(*point)) == pytest.approx(expected, rel=1e-15)
    again, more = recorded_warnings(lambda: sd.grad(expr + " + 1", wrt=wrt))
    assert float(again(*point)) == pytest.approx(expected, rel=1e-15)
    assert len(caught) + len(more) == 1, [str(w.message) for w in caught + more]
    info = sd.cache_info()
    assert info["kind"] == "memory" and info["path"] is None
    for word in words:
        assert word in info["reason"], info["reason"]


@posix
@pytest.mark.parametrize("where", ["namespace", "shard"])
def test_a_world_writable_directory_below_the_root_is_refused(cache_dir, where):
    sd.grad("x**2*y", wrt="x")
    shard = shard_of(cache_dir)
    directory = shard if where == "shard" else shard.parent
    directory.chmod(0o777)
    planted = only(cache_dir, "module").read_bytes()
    assert_memory_with_one_warning("x**2*y", "x", (3.0, 2.0), 12.0, "writable by group or others")
    assert only(cache_dir, "module").read_bytes() == planted  # nothing written there either


@posix
@as_root
def test_a_foreign_owned_entry_is_refused(cache_dir):
    """An entry owned by another user (as root: really chowned to uid 65534, mode 0666) is
    not read, whatever its content; the store turns to memory with one warning."""
    sd.grad("x**2*y", wrt="x")
    entry = only(cache_dir, "module")
    os.chown(entry, NOBODY, NOBODY)
    entry.chmod(0o666)
    assert_memory_with_one_warning("x**2*y", "x", (3.0, 2.0), 12.0, "owned by another user")
    assert entry.stat().st_uid == NOBODY  # left alone


@posix
@as_root
def test_owners_as_a_user_sees_them(cache_dir, monkeypatch):
    """The check as it runs for an ordinary user (uid 1000 here): files of root and of the
    user pass, a file of anyone else is refused; the directory of another user too."""
    store = DiskStore(cache_dir, MB)
    store.put("module", K1, "mine = 1\n")
    store.put("module", K2, "theirs = 1\n")
    user = 1000
    for path in [cache_dir, *cache_dir.rglob("*")]:
        os.chown(path, user, user, follow_symlinks=False)
    monkeypatch.setattr(os, "getuid", lambda: user)
    store = DiskStore(cache_dir, MB)
    assert store.get("module", K1) == "mine = 1\n"
    entry = cache_dir / VERSION / "module" / K1[:2] / f"{K1}.py"
    os.chown(entry, 0, 0)  # root's: root is trusted
    assert store.get("module", K1) == "mine = 1\n"
    os.chown(entry, 4242, 4242)
    _, caught = recorded_warnings(lambda: store.get("module", K1))
    assert len(caught) == 1 and "uid 4242" in str(caught[0].message)
    assert store.get("module", K2) is None  # the whole store is memory now
    os.chown(entry, user, user)
    os.chown(entry.parent, 4242, 4242)  # a shard directory of someone else
    _, caught = recorded_warnings(lambda: DiskStore(cache_dir, MB).get("module", K1))
    assert len(caught) == 1 and "owned by another user" in str(caught[0].message)


@posix
def test_a_symlinked_shard_directory_is_refused(cache_dir, tmp_path):
    """A shard directory replaced by a symlink to a world-writable directory (of another
    user, where root can make one) that holds a planted copy of the entry."""
    sd.grad("x**2*y", wrt="x")
    shard = shard_of(cache_dir)
    elsewhere = tmp_path / "world"
    shutil.copytree(shard, elsewhere)
    elsewhere.chmod(0o777)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        os.chown(elsewhere, NOBODY, NOBODY)
    shutil.rmtree(shard)
    shard.symlink_to(elsewhere, target_is_directory=True)
    assert_memory_with_one_warning("x**2*y", "x", (3.0, 2.0), 12.0, "symlink")


@posix
def test_a_symlinked_entry_is_a_miss(cache_dir, tmp_path):
    sd.grad("x**2*y", wrt="x")
    entry = only(cache_dir, "module")
    elsewhere = tmp_path / "elsewhere.py"
    shutil.copyfile(entry, elsewhere)
    entry.unlink()
    entry.symlink_to(elsewhere)
    g = fresh_grad("x**2*y", wrt="x")
    assert float(g(3.0, 2.0)) == 12.0
    assert not entry.is_symlink() and elsewhere.exists()
    assert sd.cache_info()["kind"] == "disk"


# -- odd files -------------------------------------------------------------------------------------
def run_with_timeout(code: str, cache_dir: Path, timeout: float = 120) -> str:
    """``code`` in a fresh process (which a hang cannot take the test run with it)."""
    env = {**os.environ, "SYMDIFF_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def make_odd(path: Path, kind: str) -> object:
    """Put a FIFO, a socket, a directory or a huge file where an entry is; returns what must
    stay alive (the socket)."""
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "socket":
        server = socket.socket(socket.AF_UNIX)
        here = os.getcwd()
        os.chdir(path.parent)  # (a socket's path is limited to ~100 characters)
        try:
            server.bind(path.name)
        finally:
            os.chdir(here)
        return server
    elif kind == "directory":
        path.mkdir()
    elif kind == "huge":
        with open(path, "wb") as handle:
            handle.truncate(2 * MB)  # over the cap of the process below
    return None


@posix
@pytest.mark.parametrize("kind", ["fifo", "socket", "directory", "huge"])
@pytest.mark.parametrize("namespace", ["index", "module"])
def test_an_odd_file_in_place_of_an_entry_never_blocks(cache_dir, kind, namespace):
    sd.grad("x**2*y", wrt="x")
    path = only(cache_dir, namespace)
    keep = make_odd(path, kind)
    started = time.monotonic()
    out = run_with_timeout("""
        import os, warnings
        os.environ["SYMDIFF_CACHE_MAX_MB"] = "1"
        warnings.simplefilter("error")
        import symdiff as sd
        try:
            print(float(sd.grad("x**2*y", wrt="x")(3.0, 2.0)))
        except Exception as exc:  # a failed write onto a directory warns: say so
            print(type(exc).__name__, exc)
    """, cache_dir)
    elapsed = time.monotonic() - started
    if kind == "directory":  # cannot be replaced by the rebuilt entry: kept in memory
        assert "could not write" in out or out.strip() == "12.0"
    else:
        assert out.strip() == "12.0"
        assert path.is_file() and not path.is_symlink()  # replaced by the rebuilt entry
    assert elapsed < 100  # (a FIFO once blocked forever)
    del keep


def test_reads_are_bounded_by_the_cap(cache_dir):
    store = DiskStore(cache_dir, 4096)
    store.put("module", K1, "small = 1\n")
    path = cache_dir / VERSION / "module" / K1[:2] / f"{K1}.py"
    with open(path, "ab") as handle:
        handle.write(b"#" * 10_000)
    assert store.get("module", K1) is None  # never read whole: larger than any entry
    assert not path.exists()


# -- malformed records -----------------------------------------------------------------------------
#: Values that are wrong for any field of a record (types, shapes, junk, a nesting too deep
#: for the JSON decoder's recursion).
BAD_VALUES = [None, -1, 2.5, True, "junk", [None], {"a": 1}, "DEEP"]
RECIPE_FIELDS = ["args", "exprs", "format", "kind", "mode", "options", "outputs", "shapes",
                 "single", "wrt", "options.cse", "options.mode", "options.simplify",
                 "options.backend", "constants"]
INDEX_FIELDS = ["format", "module", "recipe", *(f"recipe.{f}" for f in RECIPE_FIELDS)]


def with_field(record: dict, field: str, value: object) -> dict:
    """A deep copy of ``record`` with the dotted ``field`` set to ``value``."""
    import copy

    record = copy.deepcopy(record)
    *path, last = field.split(".")
    target = record
    for part in path:
        target = target[part]
    target[last] = value
    return record


def dumps(record: dict) -> str:
    import json

    text = json.dumps(record, sort_keys=True)
    return text.replace('"DEEP"', "[" * 100_000 + "]" * 100_000)  # RecursionError to decode


def test_every_malformed_index_field_is_a_miss(cache_dir):
    import json

    expected = float(sd.grad("x**2*y", wrt="x")(3.0, 2.0))
    store = open_store()
    key = only(cache_dir, "index").stem
    good = json.loads(store.get("index", key))
    for field in INDEX_FIELDS:
        for value in BAD_VALUES:
            store.put("index", key, dumps(with_field(good, field, value)))
            g = fresh_grad("x**2*y", wrt="x")
            assert float(g(3.0, 2.0)) == expected, (field, value)
            store = open_store()
    for text in ("", "not json", "[]", "null", "[" * 100_000, json.dumps({"format": 2})):
        store.put("index", key, text)
        assert float(fresh_grad("x**2*y", wrt="x")(3.0, 2.0)) == expected, text
        store = open_store()
        assert json.loads(store.get("index", key)) == good  # rebuilt and written again


def test_every_malformed_module_field_is_a_miss(cache_dir):
    import json

    expected = float(sd.grad("x**2*y", wrt="x")(3.0, 2.0))
    store = open_store()
    key = only(cache_dir, "module").stem
    text = store.get("module", key)
    line, source = text.split("\n", 1)
    tag, record = line.split(" {", 1)
    good = json.loads("{" + record)
    for field in RECIPE_FIELDS:
        for value in BAD_VALUES:
            store.put("module", key, f"{tag} {dumps(with_field(good, field, value))}\n{source}")
            g = fresh_grad("x**2*y", wrt="x")
            assert float(g(3.0, 2.0)) == expected, (field, value)
            store = open_store()
    for bad in ("", "no record", f"{tag} [1]\n{source}", f"{tag} {{\n{source}",
                f"{line}\n", f"{line}\n{source.replace('_x_bar', '_x_bar[')}",
                f"{line}\n{source.replace('def grad_f', 'def other')}"):
        store.put("module", key, bad)
        assert float(fresh_grad("x**2*y", wrt="x")(3.0, 2.0)) == expected, bad[:80]
        store = open_store()
    assert store.get("module", key) == text  # rebuilt and written again
