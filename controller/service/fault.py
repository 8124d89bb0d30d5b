"""The `crash@N` fault of a simulated table (`tablectl simulate --fault crash@N`): the process is
killed outright, as by a power cut or kill -9, right after its Nth input is durable and before
anything of that input is announced. The builder connects it only when a run asks for it."""
from __future__ import annotations

import os
import signal


class CrashAfter:
    """A watch on the loop: asks for the Nth input to be committed at once, then dies."""

    def __init__(self, inputs: int):
        if inputs < 1:
            raise ValueError(f"crash after {inputs} inputs: give 1 or more")
        self.left = inputs

    def staged(self) -> bool:
        self.left -= 1
        return self.left == 0

    def durable(self) -> None:
        die()


def die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)
