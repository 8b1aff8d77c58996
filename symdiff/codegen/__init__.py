"""The emit, render and load stages: SymPy outputs to NumPy text (:mod:`.printer`, names by
:mod:`.naming`), one module (:mod:`.emit`, templates by :mod:`.render`; the helpers it calls
imported from :mod:`symdiff.runtime`, or copied into it by :mod:`.standalone`), and source to
callable (:mod:`.load`)."""
