"""The clock every record is stamped with: is it synchronised, and did it jump?

At start and every hour the watch asks the system whether the clock is synchronised
(`timedatectl show`, else `chronyc tracking`); between those checks it compares the wall clock
with the monotonic clock every few seconds, so that a wall clock set by hand (or stepped by a
time daemon) by more than `max_jump_s` is seen when it happens. An unsynchronised clock or a
jump is a table input (an `alarm` from the source "clock", journaled like any device's), sent
once when it begins; the health view shows the current state at any time.

A jump made while the table was stopped (the clock set back, or an RTC that lost its battery),
or just before a crash that came before the next comparison, happens before any of this
process's clocks began, so at start the wall clock is also compared with the journal's newest
records: a clock behind one of them by more than `max_jump_s` is a jump too.
"""
from __future__ import annotations

import shutil
import subprocess
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Sequence

from controller.logsetup import get_logger
from controller.table import inputs as ti

log = get_logger("controller.clock")

CHECK_EVERY_S = 3600.0
SAMPLE_EVERY_S = 5.0
MAX_JUMP_S = 2.0

Runner = Callable[[Sequence[str]], "str | None"]


def run_tool(argv: Sequence[str]) -> str | None:
    """The tool's output, or None when it is not installed or does not answer (e.g.
    timedatectl on a machine not booted with systemd)."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


@dataclass
class SyncState:
    synchronised: bool | None        # None: nothing could tell
    source: str                       # timedatectl | chronyc | none
    detail: str


def sync_state(run: Runner = run_tool) -> SyncState:
    """Ask timedatectl, then chrony, whether the system clock is synchronised."""
    out = run(("timedatectl", "show", "--property=NTPSynchronized", "--property=NTP"))
    if out is not None:
        props = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        synced = props.get("NTPSynchronized")
        if synced in ("yes", "no"):
            ntp = props.get("NTP", "?")
            return SyncState(synced == "yes", "timedatectl",
                             f"NTPSynchronized={synced}, NTP={ntp}")
    out = run(("chronyc", "-n", "tracking"))
    if out is not None:
        fields = {k.strip(): v.strip() for k, _, v in
                  (line.partition(":") for line in out.splitlines()) if v}
        leap = fields.get("Leap status", "")
        if leap:
            detail = f"leap status {leap}; system time {fields.get('System time', '?')}"
            return SyncState(leap.lower() == "normal", "chronyc", detail)
    return SyncState(None, "none", "neither timedatectl nor chronyc answered")


class ClockWatch:
    """A thread of its own (the tools may take a while): `submit` gets the alarms as inputs."""

    def __init__(self, submit: Callable[[Any], None], *, run: Runner = run_tool,
                 wall: Callable[[], float] = time.time,
                 mono: Callable[[], float] = time.monotonic,
                 check_every_s: float = CHECK_EVERY_S, sample_every_s: float = SAMPLE_EVERY_S,
                 max_jump_s: float = MAX_JUMP_S):
        self.submit, self.run = submit, run
        self.wall, self.mono = wall, mono
        self.check_every_s, self.sample_every_s = check_every_s, sample_every_s
        self.max_jump_s = max_jump_s
        self.state: SyncState | None = None
        self.checked_at: float | None = None
        self.jumps = 0
        self.last_jump_s: float | None = None
        self._offset = wall() - mono()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    # one step each, so that tests drive them without a thread
    def check_sync(self) -> SyncState:
        state = sync_state(self.run)
        was = self.state
        self.state, self.checked_at = state, self.wall()
        if state.synchronised is False and (was is None or was.synchronised is not False):
            log.warning("clock not synchronised", source=state.source, detail=state.detail)
            self.submit(ti.DeviceWarning(device="clock", code="clock_unsynchronised",
                                         text=f"the system clock is not synchronised "
                                         f"({state.source}: {state.detail})"))
        return state

    def sample(self) -> float:
        """Compare the wall clock with the monotonic one; a jump beyond the limit is an alarm."""
        offset = self.wall() - self.mono()
        jump, self._offset = offset - self._offset, offset
        if abs(jump) > self.max_jump_s:
            self.jumps += 1
            self.last_jump_s = round(jump, 3)
            log.warning("clock jumped", seconds=self.last_jump_s)
            self.submit(ti.DeviceWarning(device="clock", code="clock_jump", text=
                                         f"the wall clock moved {jump:+.1f} s against the "
                                         f"monotonic clock (limit {self.max_jump_s:g} s)"))
        return jump

    def behind_journal(self, seq: int, utc: str) -> float:
        """At start, before this process journals anything: the wall clock against the record
        stamped latest among the journal's newest ones (`seq`, its `utc`; the service's
        tablepc.latest_stamped). A clock behind it by more than the limit was set back while
        the table was stopped (or just before it stopped), or was ahead when that record was
        written; either way what is journaled next is stamped before what came earlier: an
        alarm, said here once (the next start looks back to it, no further). Returns how far
        behind (0: not)."""
        newest = datetime.fromisoformat(utc.replace("Z", "+00:00")).timestamp()
        behind = newest - self.wall()
        if behind <= self.max_jump_s:
            return 0.0
        self.jumps += 1
        self.last_jump_s = round(-behind, 3)
        log.warning("clock behind the journal", seconds=self.last_jump_s, seq=seq, utc=utc)
        self.submit(ti.DeviceWarning(device="clock", code="clock_jump", text=
                                     f"the wall clock is {behind:.1f} s behind the journal's "
                                     f"record seq {seq} ({utc}): it was set back before this "
                                     f"start, or was ahead then (limit {self.max_jump_s:g} s)"))
        return behind

    def view(self) -> dict:
        st = self.state
        return {"synchronised": None if st is None else st.synchronised,
                "source": None if st is None else st.source,
                "detail": None if st is None else st.detail,
                "checked_at": self.checked_at, "jumps": self.jumps,
                "last_jump_s": self.last_jump_s}

    def start(self) -> "ClockWatch":
        self._thread = threading.Thread(target=self._loop, daemon=True, name="clock-watch")
        self._thread.start()
        return self

    def _loop(self) -> None:
        next_check = 0.0
        while True:
            if self.mono() >= next_check:
                self.check_sync()
                next_check = self.mono() + self.check_every_s
            if self._stop.wait(self.sample_every_s):
                return
            self.sample()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
