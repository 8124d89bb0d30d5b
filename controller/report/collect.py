"""What a shoe or shift report says, gathered from the journal (read-only, in seq order).

The selection is one shoe (`--shoe N`), or every shoe started within a time range (`--from`,
`--to`, UTC), or by default the latest shoe. For the shoes chosen it gathers: each shoe's start,
end, rounds and reconciliation; the roads as the table showed them (a result withheld for the
dealer's reveal enters when revealed, never if the shoe ended first); counts of results; the net
result of every bet per unit staked; irregularities; holds with how long each lasted (from the
`hold` event to the `resume`, the void that ended it, or the shoe's end); overrides with who and
why; and device health (alarms, identities, the card count at the shoe's end).

A hold's length is the wall clock's (each record's `utc`) unless the wall clock was stepped
during it: then the two clocks of its records disagree, and where the PC's monotonic clock ran
on through the hold (it never went back: the PC did not restart) the length is the monotonic
clock's.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable

from controller.reveal import RevealGate
from controller.errors import InputError
from controller.roads import ShoeRoads
from controller.words import Words

#: the wall clock and the monotonic one disagreeing by more than this: the wall clock was
#: stepped (as the clock watch, controller/service/timesync.py, tells a jump)
MAX_JUMP_S = 2.0
#: a record's monotonic time and which run of the PC's monotonic clock it belongs to (a new one
#: each time the clock went back: the PC restarted)
Mono = tuple[float, int]

KINDS = ("shoe_started", "shoe_ended", "round_result", "reveal", "irregularity", "hold",
         "resume", "override", "alarm", "device_identity", "reconciliation", "house_burn",
         "round_voided")


def parse_time(text: str, option: str) -> datetime:
    """An ISO 8601 time (a date alone is midnight); without a zone it is UTC."""
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InputError(f"{option} {text!r}: give a time as 2026-12-01T08:00 or a date "
                         "2026-12-01 (UTC unless it says otherwise)") from None
    return when if when.tzinfo else when.replace(tzinfo=timezone.utc)


def utc(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


@dataclass
class Hold:
    shoe: Any
    round: Any
    kind: str
    problem: dict
    start: datetime
    end: datetime | None = None
    cleared_by: str = ""            # who, with which action ("" for the table's own resume)
    cleared_with: str = ""
    start_mono: Mono | None = None
    end_mono: Mono | None = None

    @property
    def seconds(self) -> float | None:
        """How long it lasted: on the wall clock, or on the monotonic one where the wall clock
        was stepped meanwhile and the PC did not restart."""
        if self.end is None:
            return None
        wall = (self.end - self.start).total_seconds()
        a, b = self.start_mono, self.end_mono
        if a is not None and b is not None and a[1] == b[1] and abs(wall - (b[0] - a[0])) \
                > MAX_JUMP_S:
            return b[0] - a[0]
        return wall


@dataclass
class ShoeReport:
    number: Any
    game: str = ""
    profile: str = ""
    profile_sha256: str = ""
    decks: Any = None
    start: datetime | None = None
    end: datetime | None = None
    end_reason: str = ""
    end_fields: dict = field(default_factory=dict)      # the end's cause and what it did
    rounds: int = 0                 # the shoe's own count once ended; meanwhile, its rounds so far
    reconciliation: dict | None = None
    roads: dict = field(default_factory=dict)
    table: str = ""                 # the table's name, as the shoe's start recorded it
    simulator: bool = False         # dealt on the simulator (the shoe's start says so)
    played: set = field(default_factory=set)    # the rounds with a result


@dataclass
class Report:
    journal: str
    selection: str                  # in English, for the command's own line and the log
    selection_words: Words | None = None    # the same for the report's reader
    table: str = ""                 # the table's name, for a report from the floor store
    shoes: list[ShoeReport] = field(default_factory=list)
    results: list[dict] = field(default_factory=list)          # every result shown, in order
    result_times: list[datetime] = field(default_factory=list)
    void: int = 0
    demo: int = 0
    winners: Counter = field(default_factory=Counter)
    bets: dict[str, list[float]] = field(default_factory=dict)  # bet → [net sum, rounds]
    irregularities: Counter = field(default_factory=Counter)
    irregularity_list: list[dict] = field(default_factory=list)
    holds: list[Hold] = field(default_factory=list)
    overrides: list[dict] = field(default_factory=list)
    alarms: Counter = field(default_factory=Counter)
    identities: dict[str, dict] = field(default_factory=dict)
    cleared: list[Hold] = field(default_factory=list)           # the holds a resume just ended
    house_burns: list[dict] = field(default_factory=list)       # each card burned for the house
    #: (shoe, round) → its result in `results`, so that a round voided later is voided here
    by_round: dict[tuple, int] = field(default_factory=dict)

    @property
    def table_name(self) -> str:
        """The table's name: the floor store's, else as its shoes recorded it."""
        return self.table or next((s.table for s in self.shoes if s.table), "")

    @property
    def simulated(self) -> bool:
        """Any of its shoes dealt on the simulator."""
        return any(s.simulator for s in self.shoes)

    @property
    def counted(self) -> list[dict]:
        """The results that count for odds (neither void nor demonstration)."""
        return [r for r in self.results if not r.get("void") and not r.get("demo")]


def _choose(journal: Any, shoe: int | None, start: datetime | None, end: datetime | None
            ) -> tuple[list[tuple[int, Any]], str, Words]:
    """(first seq, shoe number) of each chosen shoe, and the selection in English and in
    Words."""
    starts = [(r.seq, r.data.get("shoe"), utc(r.utc))
              for r in journal.records(kinds=["shoe_started"])]
    if not starts:
        raise InputError(f"journal {journal.path}: no shoe has started in it")
    if shoe is not None:
        found = [(seq, n) for seq, n, _ in starts if n == shoe]
        if not found:
            raise InputError(f"journal {journal.path}: no shoe {shoe} (shoes {starts[0][1]}–"
                             f"{starts[-1][1]})")
        return found[-1:], f"shoe {shoe}", Words("report.selection.shoe", {"shoe": shoe})
    if start is not None or end is not None:
        found = [(seq, n) for seq, n, when in starts
                 if (start is None or when >= start) and (end is None or when < end)]
        if not found:
            raise InputError(f"journal {journal.path}: no shoe started in that time")
        what = (f"shoes started from {start:%Y-%m-%d %H:%M} UTC" if start else "shoes started") \
            + (f" to {end:%Y-%m-%d %H:%M} UTC" if end else "")
        times = {"start": f"{start:%Y-%m-%d %H:%M}" if start else "",
                 "end": f"{end:%Y-%m-%d %H:%M}" if end else ""}
        code = ("report.selection.from_to" if start and end else
                "report.selection.from" if start else "report.selection.to")
        return found, what, Words(code, times)
    latest = starts[-1][1]
    return [(starts[-1][0], latest)], f"the latest shoe ({latest})", \
        Words("report.selection.latest", {"shoe": latest})


def collect(journal: Any, *, shoe: int | None = None, start: datetime | None = None,
            end: datetime | None = None) -> Report:
    chosen, selection, words = _choose(journal, shoe, start, end)
    report = Report(str(journal.path), selection, words)
    firsts = {seq for seq, _ in chosen}
    numbers = [n for _, n in chosen]
    current: ShoeReport | None = None
    roads, gate = ShoeRoads(), RevealGate()
    open_holds: list[Hold] = []
    run, last_mono = 0, None
    for rec in journal.records(after_seq=min(firsts) - 1, kinds=KINDS):
        d = rec.data
        when = utc(rec.utc)
        if last_mono is not None and rec.mono < last_mono:
            run += 1                    # the monotonic clock went back: the PC restarted
        last_mono = rec.mono
        mono = (rec.mono, run)
        if rec.kind == "shoe_started":
            _close_holds(open_holds, when, "", mono)
            if current is not None:
                current.roads = roads.to_json()
            current = None
            if rec.seq in firsts:
                current = ShoeReport(d.get("shoe"), str(d.get("game", "")),
                                     str(d.get("profile", "")), str(d.get("profile_sha256", "")),
                                     d.get("decks"), when, table=str(d.get("table_name") or ""),
                                     simulator=d.get("simulator") is True)
                report.shoes.append(current)
                roads, gate = ShoeRoads(), RevealGate()
                roads.publish(d)
                gate.publish(d)
            elif len(report.shoes) == len(numbers):
                break
            continue
        if current is None or d.get("shoe") != current.number:
            continue
        _take(report, current, rec.kind, d, when, roads, gate, open_holds, mono)
    if current is not None:
        current.roads = roads.to_json()
    return report


def _take(report: Report, shoe: ShoeReport, kind: str, d: dict, when: datetime,
          roads: ShoeRoads, gate: RevealGate, open_holds: list[Hold], mono: Mono | None = None
          ) -> None:
    if kind == "shoe_ended":
        shoe.end, shoe.end_reason, shoe.rounds = when, str(d.get("reason", "")), d.get("rounds", 0)
        shoe.end_fields = {k: d[k] for k in ("cause", "results", "settled") if k in d}
        _close_holds(open_holds, when, "", mono)
        gate.publish(d)
    elif kind in ("round_result", "reveal"):
        if kind == "round_result":
            _result(report, d, when)
            if shoe.end is None and d.get("round") is not None:
                shoe.played.add(d.get("round"))          # a shoe still in play: so far
                shoe.rounds = len(shoe.played)
            if d.get("void") and open_holds:          # a void ends the hold it was on
                report.cleared = list(open_holds)
                _close_holds(open_holds, when, "", mono)
        for shown in gate.publish(d):
            roads.add_result(shown)
    elif kind == "house_burn":
        if d.get("stage") == "burned":
            report.house_burns.append({"utc": when, **d})
    elif kind == "round_voided":
        _voided(report, (d.get("shoe"), d.get("round")), str(d.get("reason", "")))
    elif kind == "irregularity":
        report.irregularities[str(d.get("kind"))] += 1
        report.irregularity_list.append({"utc": when, **d})
    elif kind == "hold":
        problem = {k: v for k, v in d.items() if k not in ("event", "reason", "actions",
                                                           "resume_to", "seq")}
        hold = Hold(d.get("shoe"), d.get("round"), str(d.get("reason")),
                    {"kind": d.get("reason"), **problem}, when, start_mono=mono)
        open_holds.append(hold)
        report.holds.append(hold)
    elif kind == "resume":
        report.cleared = list(open_holds)
        _close_holds(open_holds, when, "", mono)
    elif kind == "override":
        report.overrides.append({"utc": when, **d})
        before, after = d.get("before") or {}, d.get("after") or {}
        if before.get("state") == "hold" and after.get("state") != "hold":
            # the override that ended the hold (its resume, or a void, came just before it)
            cleared = open_holds or report.cleared
            _close_holds(open_holds, when, "", mono)
            for hold in cleared:
                hold.cleared_by, hold.cleared_with = str(d.get("user", "")), \
                    str(d.get("action", ""))
        report.cleared = []
    elif kind == "alarm":
        report.alarms[(str(d.get("source")), str(d.get("code")), str(d.get("severity")))] += 1
    elif kind == "device_identity":
        report.identities[str(d.get("device"))] = {k: d.get(k) for k in
                                                   ("model", "serial", "firmware")}
    elif kind == "reconciliation":
        shoe.reconciliation = dict(d)


def _result(report: Report, d: dict, when: datetime) -> None:
    report.by_round[(d.get("shoe"), d.get("round"))] = len(report.results)
    report.results.append(d)
    report.result_times.append(when)
    if d.get("void"):
        report.void += 1
        return
    if d.get("demo"):
        report.demo += 1
        return
    winner = d.get("winner")
    if winner:
        report.winners[str(winner)] += 1
    for bet, net in (d.get("bets") or {}).items():
        total = report.bets.setdefault(bet, [0.0, 0])
        total[0] += float(net)
        total[1] += 1


def _voided(report: Report, key: tuple, reason: str) -> None:
    """A round settled earlier is void now (its shoe declared invalid): its result no longer
    counts for the winners, the bets or the odds."""
    at = report.by_round.get(key)
    if at is None:
        return
    d = report.results[at]
    if d.get("void") or d.get("demo"):
        return                  # never counted: nothing to take back
    report.results[at] = {**d, "void": True, "reason": reason}
    winner = str(d.get("winner") or "")
    if winner:
        report.winners[winner] -= 1
        if report.winners[winner] <= 0:
            del report.winners[winner]
    for bet, net in (d.get("bets") or {}).items():
        total = report.bets.get(bet)
        if total is not None:
            total[0] -= float(net)
            total[1] -= 1
    report.void += 1


def _close_holds(holds: list[Hold], when: datetime, by: str, mono: Mono | None = None) -> None:
    for hold in holds:
        hold.end, hold.cleared_by, hold.end_mono = when, by, mono
    holds.clear()


def finished_holds(report: Report, holds: Iterable[Hold] | None = None) -> list[Hold]:
    return [h for h in (report.holds if holds is None else holds) if h.end is not None]
