"""The arguments and ``wrt`` of a builder call, decided the same way in the scalar and the tensor
layer once the expressions are parsed or traced.

* A traced Python function's signature (:func:`symdiff.trace.signature`) gives the arguments:
  its parameters in the ``def``'s order, used or not; every variable of the expressions must
  be one of them. ``wrt=None`` means every parameter, in that order.
* Otherwise (strings, SymPy) the arguments are the variables sorted by name, and ``wrt=None``
  means every variable, sorted.
* An explicit ``wrt`` (:func:`symdiff.parsing.check_wrt`: names, ordered, distinct) must name
  variables: parameters of the traced function, else variables of the expressions or names
  their text uses although they cancel (``x - x``). Anything else is a
  :class:`~symdiff.errors.ParseError` with a did-you-mean, or saying that the name is a function
  or a constant (:func:`symdiff.parsing.check_wrt_occurs`).
"""

from __future__ import annotations

import inspect
from collections.abc import Collection, Sequence

from .errors import SymdiffError, UnsupportedError
from .parsing import check_wrt, check_wrt_occurs, text_names


def check_parameters(
    signature: inspect.Signature, variables: Collection[str], label: str
) -> None:
    """Every variable of a traced function's expressions must be one of its parameters (a
    SymPy symbol from a closure, or a string of a mixed Jacobian list, is refused by name)."""
    outside = sorted(set(variables) - set(signature.parameters))
    if outside:
        raise UnsupportedError(
            f"the variable(s) {', '.join(outside)} are not parameters of {label} (its "
            f"parameters: {', '.join(signature.parameters) or 'none'}); make them parameters"
        )


def resolve_wrt(
    wrt: object,
    signature: inspect.Signature | None,
    variables: Collection[str],
    texts: Sequence[object],
    functions: Collection[str],
    label: str,
    occurs: bool = True,
) -> tuple[tuple[str, ...], bool]:
    """The ``wrt`` names and whether one name (not a list) was given (see the module docstring).

    ``variables`` are the variables of the parsed expressions, ``texts`` the inputs (strings
    among them are scanned for names only when a ``wrt`` name is not a variable), ``functions``
    the function names of the expression language, ``label`` the traced function(s) as a
    message names them. ``occurs=False`` skips the check that the names occur (``derive``
    shows the steps of a zero derivative instead).
    """
    if wrt is None:
        names = tuple(signature.parameters) if signature is not None else tuple(sorted(variables))
        if not names:
            raise SymdiffError("the expression has no variables; give wrt= explicitly")
        return names, False
    names, single = check_wrt(wrt)
    if not occurs:
        return names, single
    if signature is not None:
        check_wrt_occurs(names, tuple(signature.parameters), function=label)
    else:
        strings = [t for t in texts if isinstance(t, str)]
        check_wrt_occurs(
            names,
            sorted(variables),
            more=lambda: set().union(*(text_names(t) for t in strings)),
            functions=functions,
        )
    return names, single
