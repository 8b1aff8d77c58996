"""The teach stage: ``derive`` (:mod:`.derivation`) and ``explain`` (:mod:`.explain`); their
expressions are printed in the input language (:mod:`symdiff.engine.inputtext`)."""
