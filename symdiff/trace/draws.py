"""Random draws met while tracing: never frozen into the trace silently.

A traced function that draws noise (``rs.randn(n)``, ``np.random.normal(size=3)``,
``rng.standard_normal((n, d))`` of a ``np.random.Generator``) would otherwise draw it once, when
traced, and every call of the compiled function would reuse that one draw. While a function is
traced, every generator it reaches by name (:mod:`symdiff.trace.environment`: a closed-over or
global ``RandomState`` or ``Generator``, NumPy's legacy ``np.random.*`` functions, a sampler
imported by name) is seen through a :class:`GeneratorView`, and each call of a sampler is
handed to the trace's :class:`Recorder` as a :class:`Call`: the tensor tracer turns a draw of
floats into a draw the compiled function makes again at every call, from the same generator with
the same method and arguments in the same order; the scalar tracer refuses it. What cannot be
drawn again so is refused, with the way to pass the noise as an argument: integer samplers
(``randint``, ``choice``, ``permutation``), seeding or setting a generator's state, ``shuffle``,
``out=``, a generator made inside the function, and a draw from a generator symdiff did not see
(the states of the generators it knows are compared before and after the trace).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import UnsupportedError
from . import scipy_forms
from .environment import Replace, rewired

#: The generators a traced function can draw from.
GENERATORS = (np.random.RandomState, np.random.Generator)

_CONTINUOUS = frozenset({
    "beta", "chisquare", "dirichlet", "exponential", "f", "gamma", "gumbel", "laplace",
    "logistic", "lognormal", "multivariate_normal", "noncentral_chisquare", "noncentral_f",
    "normal", "pareto", "power", "random", "rayleigh", "standard_cauchy",
    "standard_exponential", "standard_gamma", "standard_normal", "standard_t", "triangular",
    "uniform", "vonmises", "wald", "weibull",
})
#: The methods that draw floats, by generator type: drawn again at every call.
SAMPLERS: dict[type, frozenset[str]] = {
    np.random.RandomState: _CONTINUOUS | {"rand", "randn", "random_sample", "ranf", "sample"},
    np.random.Generator: _CONTINUOUS,
}
#: Methods that only read a generator.
_READING = frozenset({"get_state", "__getstate__", "__reduce__", "__repr__", "__str__"})
_INTEGERS = frozenset({
    "binomial", "geometric", "hypergeometric", "integers", "logseries", "multinomial",
    "multivariate_hypergeometric", "negative_binomial", "poisson", "randint", "random_integers",
    "tomaxint", "zipf", "choice", "bytes",
})
_REORDERING = frozenset({"permutation", "permuted", "shuffle"})
_STATE = frozenset({"seed", "set_state", "__setstate__", "spawn", "jumped"})

#: NumPy's legacy module-level functions that are not methods of its global ``RandomState``,
#: and the method each stands for.
_ALIASES: dict[Any, str] = {
    getattr(np.random, name): method
    for name, method in (("ranf", "random_sample"), ("sample", "random_sample"), ("seed", "seed"))
    if hasattr(np.random, name) and not hasattr(getattr(np.random, name), "__self__")
}
#: What makes a new generator.
_MAKERS = (np.random.default_rng, np.random.RandomState, np.random.Generator)

PASS_NOISE = (
    "pass the noise as an argument instead, e.g. def f(w, eps): ... with shapes={'w': ..., "
    "'eps': (n,)}, and call g(w, rs.standard_normal(n)) (or sd.objective(..., params={'eps': "
    "...}))"
)


def legacy_generator() -> np.random.RandomState:
    """NumPy's global ``RandomState``, which ``np.random.normal`` and friends draw from."""
    return np.random.mtrand._rand


@dataclass(frozen=True)
class Call:
    """A sampler call seen while tracing: ``generator.method(*args, **kwargs)``, where the
    traced function reads the generator as ``label`` (``np.random`` for NumPy's global one)."""

    generator: Any
    label: str
    method: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]

    @property
    def text(self) -> str:
        """The call as Python: ``rs.normal(0.0, 1.0, size=3)``."""
        items = [_short(a) for a in self.args] + [f"{k}={_short(v)}" for k, v in self.kwargs]
        return f"{self.label}.{self.method}({', '.join(items)})"

    def with_arguments(self, change: Callable[[Any], Any]) -> Call:
        """This call with ``change`` applied to each argument."""
        return Call(self.generator, self.label, self.method, tuple(map(change, self.args)),
                    tuple((k, change(v)) for k, v in self.kwargs))

    def sample(self) -> Any:
        """One draw of this call from a copy of the generator (the generator is unchanged)."""
        return getattr(copy.deepcopy(self.generator), self.method)(*self.args,
                                                                  **dict(self.kwargs))


def _short(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"<array {value.shape}>"
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


class Recorder:
    """What one trace does with the sampler calls of the generators it sees: ``on_draw(call)``
    gives the value the traced function gets for a draw of floats (or refuses it). Active only
    while the trace runs: a view kept beyond it draws from its generator as usual."""

    def __init__(self, on_draw: Callable[[Call], Any]):
        self.on_draw = on_draw
        self.active = True

    def call(self, generator: Any, label: str, method: str, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Any:
        """``generator.method(*args, **kwargs)`` called by the traced function."""
        if not self.active or method in _READING:
            return getattr(generator, method)(*args, **kwargs)
        where = f"{label}.{method}()"
        if method in _STATE:
            raise UnsupportedError(
                f"{where} changes the generator's state inside a traced function, which the "
                "compiled function cannot repeat; seed the generator before building and "
                "calling (each call then draws afresh), or for the same noise at every call "
                "draw it once outside the function and use that array; or " + PASS_NOISE)
        if method in _REORDERING or method in _INTEGERS:
            what = "reorders values" if method in _REORDERING else "draws integers"
            raise UnsupportedError(
                f"{where} {what} (random indices, a minibatch, a mask); a traced function "
                "can draw floats only (rs.rand(n) < p for a mask used with np.where); "
                + PASS_NOISE.replace("the noise", "them"))
        if method not in SAMPLERS.get(type(generator), frozenset()):
            raise UnsupportedError(
                f"{where} is not a sampler symdiff can draw again at every call of the "
                f"compiled function (it knows {', '.join(sorted(SAMPLERS[_kind(generator)]))}); "
                + PASS_NOISE)
        if "out" in kwargs:
            raise UnsupportedError(f"{where} with out= writes into an array, which a traced "
                                   "function cannot do; drop out=")
        return self.on_draw(Call(generator, label, method, tuple(args),
                                 tuple(sorted(kwargs.items()))))

    def close(self) -> None:
        """End of the trace: the views pass calls through from now on."""
        self.active = False


def _kind(generator: Any) -> type:
    return np.random.Generator if isinstance(generator, np.random.Generator) else (
        np.random.RandomState)


class GeneratorView:
    """A generator as a traced function sees it: its methods go through the trace's
    :class:`Recorder`, every other attribute is the generator's own."""

    __slots__ = ("_generator", "_label", "_recorder")

    def __init__(self, generator: Any, label: str, recorder: Recorder):
        self._generator = generator
        self._label = label
        self._recorder = recorder

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._generator, name)
        if name.startswith("__") or not callable(value) or not self._recorder.active:
            return value
        return Method(self._generator, self._label, name, self._recorder)

    def __repr__(self) -> str:
        return repr(self._generator)


class Method:
    """A sampler of a generator (``rs.randn``, ``np.random.normal``) as a traced function sees
    it: calls go through the trace's :class:`Recorder`."""

    __slots__ = ("generator", "label", "name", "recorder")

    def __init__(self, generator: Any, label: str, name: str, recorder: Recorder):
        self.generator = generator
        self.label = label
        self.name = name
        self.recorder = recorder

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.recorder.call(self.generator, self.label, self.name, args, kwargs)

    def __repr__(self) -> str:
        return f"<{self.label}.{self.name} (traced)>"


def _maker(maker: Any, recorder: Recorder) -> Callable[..., Any]:
    name = getattr(maker, "__name__", "a generator")

    def make(*args: Any, **kwargs: Any) -> Any:
        if recorder.active:
            raise UnsupportedError(
                f"np.random.{name}() makes a new generator inside a traced function, whose "
                "draws the compiled function could not repeat; make the generator outside the "
                "function and use it there (each call of the compiled function then draws "
                "afresh from it), or for the same noise at every call draw it once outside "
                "and use that array; or " + PASS_NOISE)
        return maker(*args, **kwargs)

    return make


class Watch:
    """The generators one trace sees, seen through views, and the check that nothing else drew
    from them: :meth:`replace` for :func:`symdiff.trace.environment.rewired`, then
    :meth:`check` after the trace."""

    def __init__(self, recorder: Recorder):
        self.recorder = recorder
        self.known: dict[int, tuple[Any, str]] = {}
        self._note(legacy_generator(), "np.random")
        self.states: dict[int, Any] = {}

    def _note(self, generator: Any, label: str) -> None:
        self.known.setdefault(id(generator), (generator, label))

    def replace(self, value: Any, label: str) -> Any:
        """The view a traced function reads instead of ``value``, if it is a generator, a
        sampler of one or a maker of one (else None)."""
        if isinstance(value, GENERATORS):
            self._note(value, label)
            return GeneratorView(value, label, self.recorder)
        owner = getattr(value, "__self__", None)
        if isinstance(owner, GENERATORS) and callable(value):
            name = "np.random" if owner is legacy_generator() else label
            self._note(owner, name)
            return Method(owner, name, value.__name__, self.recorder)
        if isinstance(value, np.random.BitGenerator):
            self._note(value, label)
            return None
        try:
            alias = _ALIASES.get(value)
        except TypeError:  # unhashable
            return None
        if alias is not None:
            return Method(legacy_generator(), "np.random", alias, self.recorder)
        if any(value is maker for maker in _MAKERS):
            return _maker(value, self.recorder)
        return None

    def notice(self, value: Any, label: str) -> None:
        """A value found inside an object or container the function reaches (never
        replaced): a generator there is checked after the trace."""
        if isinstance(value, (*GENERATORS, np.random.BitGenerator)):
            self._note(value, label)

    def start(self) -> None:
        """Note the states of the generators seen (just before the trace runs)."""
        self.states = {key: _state(g) for key, (g, _) in self.known.items()}

    def check(self) -> None:
        """After the trace: an UnsupportedError if a generator seen changed its state (a draw
        that did not go through a view)."""
        for key, (generator, label) in self.known.items():
            if key in self.states and not _same(self.states[key], _state(generator)):
                _restore(generator, self.states[key])  # the refused trace's draws undone
                raise UnsupportedError(
                    f"the traced function drew from the generator {label} in a way symdiff "
                    "cannot follow (through an object attribute, a container, a library "
                    "function or a BitGenerator), so the compiled function would reuse one "
                    "draw at every call; call the generator's sampler directly in the "
                    "function (rs.standard_normal(n)), or " + PASS_NOISE)


def _state(generator: Any) -> Any:
    if isinstance(generator, np.random.RandomState):
        return generator.get_state(legacy=False)
    if isinstance(generator, np.random.Generator):
        return generator.bit_generator.state
    return generator.state


def _restore(generator: Any, state: Any) -> None:
    if isinstance(generator, np.random.RandomState):
        generator.set_state(state)
    elif isinstance(generator, np.random.Generator):
        generator.bit_generator.state = state
    else:
        generator.state = state


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    return bool(a == b)


def refuse_draws(call: Call) -> Any:
    """The scalar tracer's answer to a draw: refused, saying what works instead."""
    raise UnsupportedError(
        f"{call.text} draws random numbers inside a function traced without shapes=, whose "
        "compiled function cannot draw them again at each call; give shapes= (then the "
        "compiled function draws afresh at every call, from the same generator), or "
        + PASS_NOISE)


@contextmanager
def watched(fn: Callable[..., Any], on_draw: Callable[[Call], Any],
            also: Replace | None = None, views: dict[str, Any] | None = None
            ) -> Iterator[Callable[..., Any]]:
    """``fn`` rewired (:func:`~symdiff.trace.environment.rewired`) to see the generators it
    reaches through views whose draws go to ``on_draw``, and the values ``also`` replaces;
    to be called inside the ``with``. On leaving it without an error, an UnsupportedError if a
    generator seen drew without a view (:meth:`Watch.check`). ``views`` holds the values of
    static arguments by name: a generator among them is replaced there by its view."""
    recorder = Recorder(on_draw)
    watch = Watch(recorder)

    def replace(value: Any, label: str) -> Any:
        found = watch.replace(value, label)
        if found is None:
            found = scipy_forms.replace(value, label)  # SciPy's densities as formulas
        return found if found is not None or also is None else also(value, label)

    found = rewired(fn, replace, watch.notice)
    for name, value in (views or {}).items():
        if isinstance(value, GENERATORS):
            views[name] = watch.replace(value, name)  # type: ignore[index]
    watch.start()
    try:
        yield found.function
    finally:
        recorder.close()
        found.write_back()
    watch.check()


__all__ = ["GENERATORS", "PASS_NOISE", "SAMPLERS", "Call", "GeneratorView", "Method",
           "Recorder", "Watch", "legacy_generator", "refuse_draws", "watched"]
