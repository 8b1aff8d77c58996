"""The NumPy gallery: ordinary loss functions written the way JAX/autograd users write them.

Each module of this package holds one family's entries in a list ``GALLERY`` of
:class:`~tests.gallery.entry.Entry`; :mod:`tests.test_numpy_gallery` runs them all through
``sd.grad`` and checks each gradient against central differences. Add a module, then list it
in :data:`MODULES`.
"""

from __future__ import annotations

from . import (
    arrays,
    constants,
    conv,
    decompositions,
    indexing,
    linalg,
    numpy_more,
    scans,
    sorting,
)
from .entry import Entry

MODULES = (scans, arrays, linalg, sorting, constants, indexing, decompositions, conv,
           numpy_more)
GALLERY: list[Entry] = [entry for module in MODULES for entry in module.GALLERY]

__all__ = ["GALLERY", "Entry"]
