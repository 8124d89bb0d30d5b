"""The application core: one input at a time → table → journal → publishers → device acks.

`Controller.submit` is the only way anything reaches the table. The input is applied to the
machine in memory, then the input and every domain event it caused are journaled together
(durably for cards and commands), and only then published and acknowledged to the device. On
start, `Controller.open` rebuilds the table from the latest snapshot plus the inputs after it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol

from controller.actions import apply_input
from controller.errors import CommandRefused
from controller.inputs import DURABLE
from controller.logsetup import get_logger
from controller.profile import Profile
from controller.table import Table

log = get_logger("controller.app")
SNAPSHOT_EVERY = 1000      # inputs between snapshots: bounds replay work at restart


class Publisher(Protocol):
    def publish(self, event: dict) -> None: ...


@dataclass
class Recovery:
    """What `Controller.open` found in the journal."""
    inputs_replayed: int = 0
    snapshot_seq: int = 0
    cards_read: int = 0             # cards out of the current shoe so far (read or reported)
    last_seq: int = 0               # the shoe's sequence number of the last journaled read
    resumed: bool = False


@dataclass
class Controller:
    table: Table
    journal: Any = None             # controller.journal.Journal or None
    publishers: list[Publisher] = field(default_factory=list)
    ack: Callable[[int], None] | None = None
    inputs_since_snapshot: int = 0
    last_prompt: str = ""

    @classmethod
    def open(cls, profile: Profile, journal: Any = None, **table_kw: Any) -> tuple["Controller", Recovery]:
        """A controller whose table is rebuilt from the journal (or new when it is empty)."""
        rec = Recovery()
        table = Table(profile, **table_kw)
        if journal is not None and journal.last_seq > 0:
            snap = journal.latest_snapshot()
            after = 0
            if snap is not None:
                after, state = snap
                table = Table.restore(profile, state["table"], **table_kw)
                rec.snapshot_seq, rec.cards_read = after, state.get("cards_read", 0)
                rec.last_seq = state.get("last_seq", 0)
            for r in journal.records(after_seq=after, kinds=["input"]):
                inp = r.data
                rec.cards_read = _cards_after(inp, rec.cards_read)
                if inp.get("seq"):
                    rec.last_seq = inp["seq"]
                try:
                    apply_input(table, inp)
                except CommandRefused:
                    pass        # it was refused the first time too; the journal says so
                except Exception:   # it failed the first time too: the table went on hold
                    log.warning("journaled input fails again on replay", seq=r.seq)
                table.drain()   # these events are already in the journal
                rec.inputs_replayed += 1
            rec.resumed = True
            log.info("journal replayed", snapshot_seq=rec.snapshot_seq,
                     inputs=rec.inputs_replayed, state=table.state)
        ctl = cls(table=table, journal=journal)
        ctl._cards_read, ctl._last_seq = rec.cards_read, rec.last_seq
        return ctl, rec

    def __post_init__(self) -> None:
        self._cards_read = 0
        self._last_seq = 0
        self.crash_after: int | None = None   # fault injection: die after N journaled inputs

    def submit(self, inp: dict) -> list[dict]:
        """Apply one input. Raises CommandRefused (journaled as refused) when it does not apply."""
        refused: CommandRefused | None = None
        failed: Exception | None = None
        try:
            apply_input(self.table, inp)
        except CommandRefused as err:
            refused = err
        except Exception as err:    # a defect: the machine is on hold; the input is still kept
            failed = err
            log.exception("input could not be applied; table on hold", input=inp.get("type"))
        outputs = self.table.drain()
        prompt = self.table.prompt()
        if prompt != self.last_prompt:
            self.last_prompt = prompt
            outputs.append({"event": "prompt", "shoe": self.table.shoe_no, "state": self.table.state,
                            "text": prompt})
        self._cards_read = _cards_after(inp, self._cards_read, refused is not None)
        if inp.get("seq"):
            self._last_seq = inp["seq"]
        record = dict(inp, refused=str(refused)) if refused else inp
        if failed is not None:
            record = dict(inp, error=repr(failed))
        self._journal(record, outputs)
        if self.crash_after is not None:
            self.crash_after -= 1
            if self.crash_after <= 0:
                _die()
        for out in outputs:
            for pub in self.publishers:
                pub.publish(out)
        if self.ack is not None and inp["type"] == "card" and "seq" in inp:
            self.ack(inp["seq"])
        if refused is not None:
            log.warning("input refused", input=inp.get("action", inp["type"]), why=str(refused))
            raise refused
        if failed is not None:
            raise failed
        return outputs

    def submit_many(self, inputs: Iterable[dict]) -> list[dict]:
        out: list[dict] = []
        for inp in inputs:
            out += self.submit(inp)
        return out

    @property
    def cards_read(self) -> int:
        return self._cards_read

    def _journal(self, inp: dict, outputs: list[dict]) -> None:
        if self.journal is None:
            return
        durable = inp["type"] in DURABLE or any(o["event"] in ("override", "hold") for o in outputs)
        records = [("input", inp)] + [(o["event"], o) for o in outputs if o["event"] != "prompt"]
        self.journal.append_many(records, durable=durable)
        self.inputs_since_snapshot += 1
        if self.inputs_since_snapshot >= SNAPSHOT_EVERY or any(
                o["event"] == "shoe_ended" for o in outputs):
            self.snapshot()

    def snapshot(self) -> None:
        if self.journal is None:
            return
        self.journal.snapshot({"table": self.table.snapshot(), "cards_read": self._cards_read,
                               "last_seq": self._last_seq}, self.journal.last_seq)
        self.inputs_since_snapshot = 0


def _cards_after(inp: dict, count: int, refused: bool = False) -> int:
    """Cards out of the current shoe after this input: reads, failed reads, reported cards."""
    if inp["type"] in ("card", "read_failed"):
        return count + 1
    if inp["type"] == "command" and not (refused or inp.get("refused")):
        if inp.get("action") == "new_shoe":
            return 0
        if inp.get("action") == "report_unread":
            return count + 1
    return count


def _die() -> None:
    """The `crash@N` fault: the process is killed outright, as by a power cut or kill -9."""
    import os
    import signal
    os.kill(os.getpid(), signal.SIGKILL)
