"""The older part of the journal checked in a process of its own while the table deals.

When the journal's seal vouches for the older records (controller/journal/seal.py) the table
deals at once and they are checked meanwhile. That check is seconds of pure computing on a long
journal; on the table's own interpreter it would take turns with the loop and the device readers
for the interpreter's lock and add its turns to every card's latency. In a process of its own,
at a lower priority, it takes the processor's idle time instead. Its outcome comes back on a
pipe: nothing else crosses (the key goes as the process's arguments, through the pipe
multiprocessing starts it with, never on a command line).
"""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import threading
import time
from dataclasses import replace
from multiprocessing.connection import Connection
from typing import Callable

from controller.journal import Journal, JournalError
from controller.journal.anchor import AnchorKey
from controller.journal.proof import StartCheck, check_rest

#: a fresh interpreter: the table's threads and locks are not copied into it
_CONTEXT = multiprocessing.get_context("spawn")
#: how much less the checking process counts than the table's own (os.nice)
NICENESS = 10

#: the outcomes: verified, refused (the journal does not verify: the line says why), failed
#: (the check itself could not be made)
OK, REFUSED, FAILED = "ok", "refused", "failed"


def _orphaned(parent: int) -> None:
    """The table's process gone (killed, say): the check is nobody's any more."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def outcome_of(path: str, check: StartCheck, key: AnchorKey | None,
               progress: Callable[[int], None] | None = None) -> tuple[str, str]:
    """`check`'s rest checked on a reader of its own: (OK, ""), (REFUSED, the line saying why
    the journal does not verify) or (FAILED, why the check could not be made)."""
    try:
        with Journal.open_readonly(path) as reader:
            check_rest(reader, check, key, progress)
    except JournalError as err:
        return REFUSED, str(err)
    except Exception as err:            # the check itself failed: reported as such
        return FAILED, repr(err)
    return OK, ""


def _check(path: str, check: StartCheck, key: AnchorKey | None, conn: Connection,
           parent: int) -> None:
    with contextlib.suppress(OSError):
        os.nice(NICENESS)
    threading.Thread(target=_orphaned, args=(parent,), daemon=True).start()
    outcome = outcome_of(path, check, key)
    with contextlib.suppress(OSError):
        conn.send(outcome)
        conn.close()


class CheckApart:
    """One check of `check`'s rest in a process of its own; `done(outcome, line)` is called
    once from a thread of its own, unless stopped first."""

    def __init__(self, path: str, check: StartCheck, key: AnchorKey | None,
                 done: Callable[[str, str], None]):
        self._done, self._stopped = done, False
        receive, send = _CONTEXT.Pipe(duplex=False)
        # (the snapshot the restart built on is not needed there: check_rest leaves it)
        self._proc = _CONTEXT.Process(target=_check, name="tablectl-journal-check",
                                      args=(path, replace(check, snapshot=None), key, send,
                                            os.getpid()),
                                      daemon=True)
        self._proc.start()
        send.close()
        self._receive = receive
        self._waiter = threading.Thread(target=self._wait, name="journal-check", daemon=True)
        self._waiter.start()

    @property
    def done(self) -> bool:
        """Its outcome was reported (or it was stopped)."""
        return not self._waiter.is_alive()

    def wait(self, timeout: float) -> bool:
        """Wait for the outcome to be reported, at most `timeout` seconds; whether it was."""
        self._waiter.join(timeout)
        return not self._waiter.is_alive()

    def _wait(self) -> None:
        try:
            outcome, line = self._receive.recv()
        except (EOFError, OSError):
            self._proc.join()
            outcome, line = FAILED, (f"the checking process ended without a word (exit code "
                                     f"{self._proc.exitcode})")
        self._proc.join()
        if not self._stopped:
            self._done(outcome, line)

    def stop(self) -> None:
        """The table closes: the check is given up (nothing is reported)."""
        self._stopped = True
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(5)
