"""What `tablectl run` needs on a table PC around the table itself: a shoe that is not there
yet waited for, the software checked against its approval, the service manager told (ready,
status, watchdog), the clock watched, and the health view for `tablectl status` and the
console.
"""
from __future__ import annotations

import sys
import threading
from typing import Any

from controller.logsetup import get_logger
from controller.service.conditions import Gate
from controller.words import Words

log = get_logger("controller.run")

NO_DEVICES = "no_devices"
SOFTWARE = "software"


def shoe_not_there(url: str, protocol: str, **options: Any) -> str | None:
    """Open the shoe once before anything is journaled: a bad URL raises (one line, exit 2);
    a port that is missing or that another program holds gives why, and the table waits."""
    from drivers.errors import Busy, NotFound
    from drivers.shoe import open_shoe
    try:
        open_shoe(url, protocol, **options).close()
    except (NotFound, Busy) as err:
        return str(err)
    return None


def accepted_before(journal: Any, software: str) -> dict | None:
    """The manager's override that accepted this software on this journal, if any: a restart
    of the same software is not held again."""
    found = None
    for rec in journal.records(kinds=("override",)):
        d = rec.data
        if d.get("action") == "accept_software" and d.get("args", {}).get("software") == software:
            found = {"user": d.get("user"), "utc": rec.utc, "seq": rec.seq,
                     "reason": d.get("reason")}
    return found


def _identify(info: dict) -> None:
    """The software's identity into `info`, worked out apart; in process if that fails."""
    from controller.release import software
    try:
        info.update(software.identity_apart())
    except RuntimeError as err:
        log.warning("software identity worked out in process instead", why=str(err))
        info.update(software.identity())


def check_software(cfg: Any, journal: Any) -> tuple[dict, Gate | None]:
    """The software's identity and approval, and the gate that holds the table when it is not
    approved (None when it is, was accepted before on this journal, or is not checked)."""
    from controller.release import software
    sw = cfg.software
    info: dict[str, Any]
    if not (sw.approved or sw.manifest):
        # nothing to check against: the hashes are made for the health view by a process
        # of their own, which leaves the table's loop its interpreter to itself
        info = {"approval": "unchecked", "source": "", "detail": software.approval("").detail}
        threading.Thread(target=_identify, args=(info,), daemon=True,
                         name="software-id").start()
        return info, None
    ident = software.identity()
    appr = software.approval(ident["software_sha256"], approved=tuple(sw.approved),
                             manifest=sw.manifest, allowed_signers=sw.allowed_signers)
    info = {**ident, "approval": appr.status, "source": appr.source, "detail": appr.detail}
    if appr.status != "unapproved":
        return info, None
    accepted = accepted_before(journal, ident["software_sha256"])
    if accepted is not None:
        info["accepted"] = accepted
        return info, None
    reason = (f"HELD: {appr.detail}. A manager must accept it before anything is dealt: "
              f"tablectl override accept_software --reason \"…\"")
    return info, Gate(SOFTWARE, reason, "accept_software", Words("prompt.software_held"))


#: how many of the journal's newest records a start compares the clock with: many more than a
#: live table journals in the clock watch's 5 s between looks (a millisecond or so to read)
LOOK_BACK = 200


def latest_stamped(journal: Any) -> tuple[int, str] | None:
    """(seq, utc) of the record stamped latest among the journal's newest ones: back to its
    last clock_jump alarm (what came before that was said), at most LOOK_BACK. Not always the
    newest record: a clock set back just before a crash stamped the last records before the
    ones ahead of them, and the crash came before the clock watch's next look."""
    from datetime import datetime
    latest: tuple[int, str] | None = None
    latest_t = 0.0
    for n, rec in enumerate(journal.records_backward()):
        if n >= LOOK_BACK or (rec.kind == "alarm" and rec.data.get("source") == "clock"
                              and rec.data.get("code") == "clock_jump"):
            break
        t = datetime.fromisoformat(rec.utc.replace("Z", "+00:00")).timestamp()
        if latest is None or t > latest_t:
            latest, latest_t = (rec.seq, rec.utc), t
    return latest


class TablePC:
    """Wires the table PC's parts into a table's runtime (`wire` before the loop runs,
    `start` once everything else has started); made by the builder (build.TablePCSpec)."""

    def __init__(self, asm: Any, cfg: Any, *, simulated: bool, shoe_waiting: str | None = None,
                 notifier: Any = None, clock_watch: bool = True):
        from controller.service.health import Health
        from controller.service.notify import Notifier
        self.asm, self.cfg = asm, cfg
        self.simulated, self.shoe_waiting = simulated, shoe_waiting
        self.notifier = notifier or Notifier()
        self.software, self.gate = check_software(cfg, asm.journal)
        if self.gate is not None:
            log.warning("software not approved: the table is held", detail=self.software["detail"])
        self.clock: Any = None
        self._newest: tuple[int, str] | None = None
        if clock_watch:
            from controller.service.timesync import ClockWatch
            self.clock = ClockWatch(asm.service.submit)
            # the journal as the last process left it (nothing of this one's is journaled
            # yet): the clock is compared with it at start
            self._newest = latest_stamped(asm.journal)
        self.health = Health(asm.service, journal_path=asm.journal_path,
                             shuffler_url=cfg.shuffler.url, clock=self.clock,
                             software=self.software)
        self._said = ""

    def wire(self) -> None:
        """After open_devices: conditions, the gate, and what the health view reads."""
        conditions, asm = self.asm.service.conditions, self.asm
        self.health.shoe, self.health.shuffler = asm.shoe, asm.shuffler
        conditions.on_change(self._conditions)
        if self.gate is not None:
            conditions.shut(self.gate)
        if self.shoe_waiting and asm.shoe is not None and asm.shoe.waiting:
            conditions.set(NO_DEVICES, waiting_line(asm.shoe.waiting), NO_SHOE_WORDS)

    def controlled(self, adapter: Any) -> None:
        """The control socket's adapter answers `health` and names the software accepted."""
        adapter.health = self.health.view
        adapter.software = self.software.get("software_sha256", "")

    def start(self) -> None:
        """Everything is up: the clock watch starts, the service manager hears READY, and the
        loop pings its watchdog from its own thread."""
        from controller.service.notify import Watchdog, watchdog_interval_s
        svc = self.asm.service
        if self.clock is not None:
            if self._newest is not None:
                self.clock.behind_journal(*self._newest)
            self.clock.start()
            self.asm.closing(self.clock.close)
        self.notifier.ready(self._status_line(svc.conditions.active))
        self.asm.closing(lambda: self.notifier.stopping("stopping"))
        interval = watchdog_interval_s()
        if interval is not None and self.notifier.enabled:
            svc.submit(Watchdog(svc.call_later, self.notifier, interval).start)

    # ------------------------------------------------------------------ conditions
    def _status_line(self, conditions: dict[str, str]) -> str:
        line = next(iter(conditions.values()), "") or "serving"
        return f"SIMULATOR: {line}" if self.simulated else line

    def _conditions(self, conditions: dict[str, str]) -> None:
        """On the loop's thread: tell the service manager, and say it once on stderr."""
        self.notifier.status(self._status_line(conditions))
        if self.gate is not None and SOFTWARE not in conditions:
            # a manager accepted the software: the health view names who
            self.gate = None
            self.software["accepted"] = accepted_before(self.asm.journal,
                                                        self.software["software_sha256"])
        waiting = conditions.get(NO_DEVICES, "")
        if waiting and waiting != self._said:
            print(f"tablectl run: {waiting}", file=sys.stderr, flush=True)
        elif self._said and not waiting:
            print("tablectl run: the shoe is there; dealing starts", file=sys.stderr,
                  flush=True)
        self._said = waiting


#: the dealer's and the console's words while the shoe is missing (the line has its port)
NO_SHOE_WORDS = Words("prompt.no_shoe_yet")


def waiting_line(why: str) -> str:
    return f"NO SHOE ({NO_DEVICES}): {why}; waiting for it, trying again with a growing pause"
