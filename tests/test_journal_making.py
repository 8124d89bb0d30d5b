"""A crash while the table makes a new journal or commits its first record (the first seconds
of a first start, a power cut then) leaves a journal the next start opens, with that record
whole or not at all: never one it refuses as what is left of a journal whose write-ahead log
held it all and was lost (a database without tables), which is what a making cut short leaves
too, and which the mark beside a journal being made tells apart. Each crash here is a child process ending at once (`os._exit`, what `kill -9`
leaves on disk) at one statement, or one file operation, of the making; the next start then
opens the journal, writes and verifies it."""
from __future__ import annotations

import os
import sqlite3

import pytest

from controller.journal import schema
from controller.journal.store import Journal

#: what the child's exit says: the making ran to its end before the crash point came
WHOLE = 17


def _crash_while_making(path: str, at: int, step: str) -> int:
    """The exit status of a child that makes the journal at `path`, commits its first record
    and dies at its `at`-th SQLite statement (step "sql") or file operation (step "file")."""
    pid = os.fork()
    if pid == 0:                                    # the child: never returns
        try:
            count = [0]

            def tick(*_: object) -> None:
                count[0] += 1
                if count[0] == at:
                    os._exit(9)
            if step == "sql":
                real = sqlite3.connect

                def connect(*a, **k):
                    conn = real(*a, **k)
                    conn.set_trace_callback(tick)
                    return conn
                sqlite3.connect = connect           # type: ignore[assignment]
            else:
                for name in ("fsync", "unlink", "close"):
                    real_op = getattr(os, name)

                    def op(*a, _real=real_op, **k):
                        tick()
                        return _real(*a, **k)
                    setattr(os, name, op)
            journal = Journal(path, durable=True)
            journal.append("note", {"text": "first"}, durable=True)
            journal.close()
            os._exit(WHOLE)
        except BaseException:
            os._exit(3)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


@pytest.mark.parametrize("step", ["sql", "file"])
def test_a_crash_at_any_step_of_making_a_journal_leaves_one_the_next_start_opens(tmp_path, step):
    crashed = 0
    for at in range(1, 200):
        path = str(tmp_path / f"j{at}.db")
        code = _crash_while_making(path, at, step)
        assert code in (9, WHOLE), f"the making failed otherwise at {step} {at}: exit {code}"
        left = os.path.exists(path)
        # the next start: a new journal where nothing was left, the made one otherwise
        journal = Journal(path, durable=False)
        journal.append("note", {"text": "after the crash"})
        journal.close()
        readback = Journal.open_readonly(path)
        result = readback.verify()
        texts = [r.data["text"] for r in readback.records()]
        readback.close()
        # the first record is there whole, or nothing of it
        assert result.ok and texts in (["after the crash"], ["first", "after the crash"]), \
            (step, at, left, result, texts)
        assert not os.path.exists(path + schema.MAKING)
        if code == WHOLE:
            break
        crashed += 1
    else:
        pytest.fail("the making never ran to its end")
    assert crashed >= 3            # the crash points were inside the making, not after it
