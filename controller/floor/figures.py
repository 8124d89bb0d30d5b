"""What the pit view counts for a shift, from the records the floor store holds: per table and
per dealer the hands an hour (over the last hour and the shift), the share of time on hold and
the irregularities. Pure: records in, figures out.

A hand is a round result that is neither void nor a demonstration. A hold lasts from its `hold`
event to the next `resume`, a void result or the shoe's end (still open: until now). The rates
are over the time the table was seen in the window (a table opened ten minutes ago is not
counted idle for the fifty before). The dealer at a table is the last one who signed in there
for a command, or entered one, in the dealer's role; each hand counts for the dealer at the
table when it ended.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Iterable

#: the record kinds the figures read
KINDS = ("round_result", "hold", "resume", "shoe_ended", "irregularity", "auth", "input")


@dataclass
class Figures:
    hands_hour: int = 0
    hands_shift: int = 0
    hold_s: float = 0.0
    irregularities: int = 0
    first: datetime | None = None          # the first record of the table in the shift
    first_hour: datetime | None = None     # … in the last hour
    dealers: set[str] = field(default_factory=set)
    on_duty_s: float = 0.0

    def pace_hour(self, now: datetime) -> float | None:
        return _rate(self.hands_hour, self.first_hour, now)

    def pace_shift(self, now: datetime) -> float | None:
        return _rate(self.hands_shift, self.first, now)

    def hold_share(self, now: datetime) -> float | None:
        seen = (now - self.first).total_seconds() if self.first else 0.0
        return min(1.0, self.hold_s / seen) if seen > 0 else None


def _rate(n: int, since: datetime | None, now: datetime) -> float | None:
    if since is None:
        return None
    hours = (now - since).total_seconds() / 3600
    return n / hours if hours >= 1 / 360 else None          # 10 s seen, at least


def _dealer_of(kind: str, data: dict) -> str | None:
    if kind == "auth" and data.get("ok") and data.get("role") == "dealer":
        return str(data.get("user"))
    if kind == "input" and data.get("type") == "command" and data.get("role") == "dealer" \
            and not data.get("refused") and data.get("user"):
        return str(data["user"])
    return None


def shift_figures(records: Iterable[tuple[str, datetime, str, dict]], now: datetime,
                  start: datetime) -> tuple[dict[str, Figures], dict[str, Figures]]:
    """(per table, per dealer) from (table, at, kind, data) in seq order per table, the
    records journaled since `start`."""
    tables: dict[str, Figures] = {}
    dealers: dict[str, Figures] = {}
    hour_ago = now - timedelta(hours=1)
    at_table: dict[str, tuple[str, datetime]] = {}        # table → (dealer, since)
    holding: dict[str, datetime] = {}
    for table, at, kind, data in records:
        if at < start:
            continue
        f = tables.setdefault(table, Figures())
        f.first = f.first or at
        if at >= hour_ago:
            f.first_hour = f.first_hour or at
        who = _dealer_of(kind, data)
        if who is not None:
            before = at_table.get(table)
            if before is None or before[0] != who:
                if before is not None:
                    dealers[before[0]].on_duty_s += (at - before[1]).total_seconds()
                at_table[table] = (who, at)
                d = dealers.setdefault(who, Figures())
                d.first = d.first or at
                d.dealers.add(table)
        dealer = dealers.get(at_table[table][0]) if table in at_table else None
        if kind == "round_result":
            if data.get("void") and table in holding:
                _end_hold(f, dealer, holding.pop(table), at)
            if not data.get("void") and not data.get("demo") and data.get("reveal") != "pending":
                f.hands_shift += 1
                f.hands_hour += at >= hour_ago
                if dealer is not None:
                    dealer.hands_shift += 1
                    dealer.hands_hour += at >= hour_ago
        elif kind == "hold":
            holding.setdefault(table, at)
        elif kind in ("resume", "shoe_ended") and table in holding:
            _end_hold(f, dealer, holding.pop(table), at)
        elif kind == "irregularity":
            f.irregularities += 1
            if dealer is not None:
                dealer.irregularities += 1
    for table, since in holding.items():
        on_duty = at_table.get(table)
        _end_hold(tables[table], dealers.get(on_duty[0]) if on_duty else None, since, now)
    for who, since in at_table.values():
        dealers[who].on_duty_s += (now - since).total_seconds()
    return tables, dealers


def _end_hold(f: Figures, dealer: Figures | None, since: datetime, until: datetime) -> None:
    seconds = max(0.0, (until - since).total_seconds())
    f.hold_s += seconds
    if dealer is not None:
        dealer.hold_s += seconds


def dealer_pace(d: Figures) -> float | None:
    hours = d.on_duty_s / 3600
    return d.hands_shift / hours if hours >= 1 / 360 else None


def dealer_hold_share(d: Figures) -> float | None:
    return min(1.0, d.hold_s / d.on_duty_s) if d.on_duty_s > 0 else None
