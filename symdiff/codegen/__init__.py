"""The emit, render and load stages: SymPy outputs to NumPy text (:mod:`.printer`, names by
:mod:`.naming`), one module (:mod:`.emit`, templates by :mod:`.render`, helper code pasted from
:mod:`.helpers`), and source to callable (:mod:`.load`)."""
