"""Imported by the process that classroom workers are started from (``forkserver``): it
imports what the tasks need and runs one derivation, so that every worker, and every worker
that replaces one, starts warm."""

from __future__ import annotations

from .tasks import warm

warm()
