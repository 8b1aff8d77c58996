"""A/B of this checkout against another one (main's, say) in one process: the same functions,
built by both, timed interleaved, round by round.

Run: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/bench_ab.py
--base PATH [--repeat R] [--sections elementwise,points,threads,tensor,resnet,warm]`` with PATH
the root of the other checkout (``git archive main | tar -x -C PATH`` makes one). Its
``symdiff`` package is copied into a temporary folder as ``symdiff_base`` (the few absolute
module names in its text renamed), so that both versions live in this process and every pair
of peers is timed in the same rounds, each round starting with the other one. The table gives
median times and the ratio this checkout / base (lower is better; 1.00 = the same speed).

Sections (the benchmark each one follows):

- ``elementwise``: the gradients of ``bench_elementwise.py`` over 1e6 points, on one thread and
  on the default number of threads;
- ``points``: the point path of ``bench_many_names.py`` (``g(*floats)`` at 2, 10 and 100
  names; ``objective(...).jac`` at the same sizes);
- ``threads``: the gradients of ``bench_threads.py`` on two threads over 1e6 and 1e7 points;
- ``tensor``: the tensor logistic gradient ``sum(log(1 + exp(-y*(X @ w))))``, n=2000, d=100;
- ``resnet``: one training step of ``examples/train_resnet_digits.py`` (batch 64, width 16);
- ``warm``: a cached gradient called in a fresh process (wall time of the whole process), the
  versions alternated process by process, next to ``python -c "import numpy"``; with
  bytecode caching on (in a temporary ``PYTHONPYCACHEPREFIX``), as an installed package has
  its ``.pyc`` files, unless ``--no-bytecode`` (then every process compiles symdiff's sources).

Every pair is checked to give the same numbers before it is timed. Both versions build with
``cache=False`` (``warm``: each in a cache folder of its own).
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import symdiff as sd  # noqa: E402

BASE = "symdiff_base"


def load_base(path: Path) -> types.ModuleType:
    """The ``symdiff`` package of the checkout at ``path``, imported as ``symdiff_base``."""
    folder = Path(tempfile.mkdtemp(prefix="symdiff-ab-"))
    shutil.copytree(path / "symdiff", folder / BASE)
    shutil.copytree(path / "templates", folder / "templates")
    for file in (folder / BASE).rglob("*.py"):
        text = file.read_text(encoding="utf-8")
        renamed = text.replace('"symdiff.', f'"{BASE}.').replace("'symdiff.", f"'{BASE}.")
        if renamed != text:
            file.write_text(renamed, encoding="utf-8")
    sys.path.insert(0, str(folder))
    return importlib.import_module(BASE)


def load_example(path: Path, package: str, name: str) -> types.ModuleType:
    """An example script of ``examples/`` imported with ``symdiff`` read as ``package``."""
    text = path.read_text(encoding="utf-8").replace("symdiff", package)
    module = types.ModuleType(name)
    module.__file__ = str(path)
    exec(compile(text, str(path), "exec"), module.__dict__)
    return module


#: The clock of the timings: wall time, or with ``--clock cpu`` this process's CPU time (all its
#: threads; none of the time it waits for a core, most of the noise on a shared machine).
CLOCK = {"clock": time.perf_counter}


def pair_times(new: Callable, base: Callable, repeat: int, loops: int = 1
               ) -> tuple[float, float, float]:
    """Median seconds per call of ``new`` and ``base``, and the median over rounds of their
    ratio in the round, interleaved: each round times both, the first one alternating from
    round to round (a ratio within one round keeps a slow spell of the machine out of it)."""
    clock = CLOCK["clock"]
    new(), base()
    times: dict[int, list[float]] = {0: [], 1: []}
    peers = (new, base)
    for round_ in range(repeat):
        for i in ((0, 1) if round_ % 2 else (1, 0)):
            start = clock()
            for _ in range(loops):
                peers[i]()
            times[i].append((clock() - start) / loops)
    ratios = [a / b for a, b in zip(times[0], times[1], strict=True)]
    return statistics.median(times[0]), statistics.median(times[1]), statistics.median(ratios)


def loops_for(fn: Callable, seconds: float = 0.05) -> int:
    """How many calls of ``fn`` take about ``seconds``."""
    fn()
    start = time.perf_counter()
    fn()
    return max(1, int(seconds / max(time.perf_counter() - start, 1e-7)))


def alternate(fn: Callable, points: list) -> object:
    """``fn`` at the first of ``points``, which then moves to the end: an objective keeps its
    last point, so that each call computes."""
    points.append(points.pop(0))
    return fn(points[-1])


def same(a, b) -> bool:
    """Whether two results are equal bit for bit (nested tuples of arrays)."""
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(same, a, b))
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


class Table:
    """Rows of (name, new, base, ratio), printed as they come; the geometric mean per section.
    The ratio is the median of the rounds' ratios (without one, that of the medians)."""

    def __init__(self, title: str, unit: str = "ms", scale: float = 1e3) -> None:
        self.unit, self.scale, self.ratios = unit, scale, []
        print(f"\n{title}\n{'case':58} {'new ' + unit:>10} {'base ' + unit:>10} {'new/base':>9}")

    def row(self, name: str, new: float, base: float, ratio: float | None = None) -> None:
        ratio = new / base if ratio is None else ratio
        self.ratios.append(ratio)
        print(f"{name[:58]:58} {new * self.scale:10.3f} {base * self.scale:10.3f} "
              f"{ratio:9.3f}", flush=True)

    def close(self) -> None:
        if self.ratios:
            print(f"{'geometric mean':58} {'':10} {'':10} "
                  f"{statistics.geometric_mean(self.ratios):9.3f}")


def elementwise(old, repeat: int) -> None:
    from bench_elementwise import CASES

    rng = np.random.default_rng(0)
    for threads in (1, None):
        table = Table(f"elementwise gradients over 1e6 points, threads={threads}")
        for text, wrt, _, make in CASES:
            arrays = make(rng, 1_000_000)
            new = sd.grad(text, wrt=list(wrt), cache=False).with_threads(threads)
            base = old.grad(text, wrt=list(wrt), cache=False).with_threads(threads)
            assert same(new(**arrays), base(**arrays)), text
            table.row(text, *pair_times(partial(new, **arrays), partial(base, **arrays), repeat))
        table.close()


def points(old, repeat: int) -> None:
    from bench_many_names import SCALES, TEXTS

    table = Table("the point path: g(*floats), and objective.jac (two points in turn)", "us", 1e6)
    for problem in ("rosenbrock", "product", "logsumexp"):
        for n in (2, 10, 100):
            names = [f"x{i}" for i in range(n)]
            text = TEXTS[problem](n)
            rng = np.random.default_rng(1)
            low, high = SCALES[problem]
            x, other = rng.uniform(low, high, n), rng.uniform(low, high, n)
            new = sd.grad(text, wrt=names, cache=False)
            base = old.grad(text, wrt=names, cache=False)
            floats = [float(x[int(a[1:])]) for a in new.args]
            assert same(new(*floats), base(*floats)), (problem, n)
            loops = loops_for(partial(new, *floats))
            table.row(f"{problem} n={n} g(*floats)",
                      *pair_times(partial(new, *floats), partial(base, *floats), repeat, loops))
            new_obj = sd.objective(text, wrt=names)
            base_obj = old.objective(text, wrt=names)
            assert same(new_obj.jac(x), base_obj.jac(x))
            table.row(f"{problem} n={n} objective.jac", *pair_times(
                partial(alternate, new_obj.jac, [x, other]),
                partial(alternate, base_obj.jac, [x, other]), repeat, loops))
    table.close()


def threads(old, repeat: int) -> None:
    from bench_elementwise import CASES

    for points in (1_000_000, 10_000_000):
        table = Table(f"elementwise gradients on 2 threads over {points:.0e} points")
        rng = np.random.default_rng(0)
        for text, wrt, _, make in CASES:
            arrays = make(rng, points)
            new = sd.grad(text, wrt=list(wrt), cache=False).with_threads(2)
            base = old.grad(text, wrt=list(wrt), cache=False).with_threads(2)
            assert same(new(**arrays), base(**arrays)), text
            table.row(text, *pair_times(partial(new, **arrays), partial(base, **arrays), repeat))
        table.close()


def tensor(old, repeat: int) -> None:
    table = Table("the tensor logistic gradient, n=2000, d=100")
    rng = np.random.default_rng(0)
    X, y, w = rng.normal(size=(2000, 100)), rng.choice([-1.0, 1.0], 2000), rng.normal(size=100)
    text = "sum(log(1 + exp(-y * (X @ w))))"
    shapes = {"X": ("n", "d"), "y": ("n",), "w": ("d",)}
    for kind in ("grad", "value_and_grad"):
        new = getattr(sd, kind)(text, wrt="w", shapes=shapes, cache=False)
        base = getattr(old, kind)(text, wrt="w", shapes=shapes, cache=False)
        assert same(new(X=X, y=y, w=w), base(X=X, y=y, w=w))
        loops = loops_for(partial(new, X=X, y=y, w=w))
        table.row(kind, *pair_times(partial(new, X=X, y=y, w=w), partial(base, X=X, y=y, w=w),
                                    repeat, loops))
    table.close()


def resnet(old, repeat: int) -> None:
    example = ROOT / "examples" / "train_resnet_digits.py"
    new_net = load_example(example, "symdiff", "resnet_new")
    base_net = load_example(example, BASE, "resnet_base")
    table = Table("one ResNet training step (value and gradient), batch 64, width 16")
    params = new_net.init(width=16)
    images, labels = new_net.synthetic_digits(64, 0)
    x, y = images[:, None].astype(np.float64), np.eye(new_net.CLASSES)[labels]
    new = sd.value_and_grad(new_net.loss, wrt=new_net.PARAMS, shapes=new_net.shapes(params))
    base = old.value_and_grad(base_net.loss, wrt=base_net.PARAMS,
                              shapes=base_net.shapes(params))
    assert same(new(x, y, **params), base(x, y, **params))
    table.row("resnet step", *pair_times(lambda: new(x, y, **params),
                                         lambda: base(x, y, **params), repeat))
    table.close()


WARM = "import {package} as sd; g = sd.grad('sin(x)*exp(y)/(1 + x**2)'); g(0.5, 0.5)"


def warm(old, repeat: int, bytecode: bool) -> None:
    base_folder = Path(old.__file__).resolve().parent.parent
    runs = {
        "numpy": ("import numpy", {}),
        "new": (WARM.format(package="symdiff"), {"PYTHONPATH": str(ROOT)}),
        "base": (WARM.format(package=BASE), {"PYTHONPATH": str(base_folder)}),
    }
    caches = {name: tempfile.mkdtemp(prefix=f"symdiff-ab-{name}-") for name in runs}
    base_env = dict(os.environ)
    if bytecode:
        base_env.pop("PYTHONDONTWRITEBYTECODE", None)
        base_env["PYTHONPYCACHEPREFIX"] = tempfile.mkdtemp(prefix="symdiff-ab-pycache-")

    def run(name: str) -> float:
        code, extra = runs[name]
        env = {**base_env, "SYMDIFF_CACHE_DIR": caches[name], **extra}
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        return time.perf_counter() - start

    for name in runs:  # build and cache
        run(name)
    times: dict[str, list[float]] = {name: [] for name in runs}
    for round_ in range(repeat):
        order = list(runs)[round_ % 3:] + list(runs)[:round_ % 3]
        for name in order:
            times[name].append(run(name))
    median = {name: statistics.median(t) for name, t in times.items()}
    table = Table(f"warm start of a cached gradient in a fresh process (median of {repeat}; "
                  f"bytecode caching {'on' if bytecode else 'off'})")
    table.row("process: import symdiff, load the cached gradient, call it",
              median["new"], median["base"])
    label = 'python -c "import numpy"'
    print(f"{label:58} {median['numpy'] * 1e3:10.3f}")
    print(f"{'new / import numpy':58} {median['new'] / median['numpy']:10.3f}")
    print(f"{'base / import numpy':58} {median['base'] / median['numpy']:10.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, type=Path, help="the other checkout's root")
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--sections", default="elementwise,points,threads,tensor,resnet,warm")
    parser.add_argument("--no-bytecode", dest="bytecode", action="store_false",
                        help="the warm start without .pyc files (every process compiles)")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                        help="wall time, or this process's CPU time (the warm start: wall)")
    options = parser.parse_args()
    if options.clock == "cpu":
        CLOCK["clock"] = time.process_time
    old = load_base(options.base.resolve())
    print(f"new: {Path(sd.__file__).parent}; base: {options.base}; {options.clock} clock; load "
          f"{', '.join(f'{v:.2f}' for v in os.getloadavg())}")
    for section in options.sections.split(","):
        if section == "warm":
            warm(old, max(options.repeat, 7), options.bytecode)
        else:
            globals()[section](old, options.repeat)
    print(f"\nload average at the end: {', '.join(f'{v:.2f}' for v in os.getloadavg())}")


if __name__ == "__main__":
    main()
