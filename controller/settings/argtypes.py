"""Types of command-line values: a bad one is refused by the parser, in one line naming the
flag (`tablectl run: argument --betting-seconds: nan is not a number of seconds; give 0 or
more`), before anything is opened or journaled."""
from __future__ import annotations

import argparse
import math
from typing import NoReturn


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds; give a finite "
                                         "number")
    return value


def seconds(text: str) -> float:
    """A finite number of seconds, 0 or more."""
    value = _number(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative; give 0 or more seconds")
    return value


def count(text: str) -> int:
    """A whole number, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; give 0 or "
                                         "more") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text} is negative; give 0 or more")
    return value


def positive(text: str) -> int:
    """A whole number, 1 or more."""
    value = count(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text}: give 1 or more")
    return value


class OneLineParser(argparse.ArgumentParser):
    """Bad command-line input is one line, like every other bad input (no usage block)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {' '.join(message.split())} (see {self.prog} --help)\n")
