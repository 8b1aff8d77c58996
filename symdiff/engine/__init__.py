"""The derive stage: one scalar engine. Forward mode (:mod:`.forward`) and reverse mode
(:mod:`.reverse`) read the same local rules (:mod:`.local`, :mod:`.rules`) and record their steps
(:mod:`.steps`, :mod:`.adjoints`); :mod:`.tangents` pushes tangents through a program (forward over
reverse); :mod:`.sweeps` keeps the recorded sweeps; :mod:`.lines` prints steps."""
