"""Tasks for the worker pool's tests (run in worker processes, so a module of their own)."""

from __future__ import annotations

import os
import time

import symdiff as sd


def handle(task: str, payload: dict) -> object:
    if task == "echo":
        return payload
    if task == "pid":
        return os.getpid()
    if task == "sleep":
        time.sleep(payload["seconds"])
        return "slept"
    if task == "spin":
        while True:
            pass
    if task == "burn":  # spend this much CPU time, then answer
        until = time.process_time() + payload["seconds"]
        while time.process_time() < until:
            pass
        return "burnt"
    if task == "refuse":
        raise sd.ParseError("not an expression", "x +", 3)
    if task == "hog":
        hoard = []
        while True:
            hoard.append(bytearray(50 * 2**20))
    raise RuntimeError(f"no task {task}")
