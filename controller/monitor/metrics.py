"""The table's figures in Prometheus' data model (prometheus-client), each in one registry of
its own (several tables, or tests, in one process do not mix).

From the published events (counted as they go by): cards read, rounds by outcome, holds by
reason, irregularities by kind, device alarms, shoes ended, the last journal seq; from the
loop: the journal's write latency (a histogram); from the health view, read at each scrape:
device links, the shoe driver's counters, reads kept under a hold, the journal's size, its
anchors, the floor feed's lag, the clock, service conditions, and whether the loop answered.
"""
from __future__ import annotations

import math
import time
from typing import Any, Callable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

#: the journal's write (input + its events, one transaction, fsynced): 50 µs … 2.5 s
WRITE_BUCKETS = (0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                 0.1, 0.25, 0.5, 1.0, 2.5)
#: the links the health view reports: the shoe's (up, lost, waiting, down), the shuffler's
#: (unused until asked, ok, error), none for a device the table has not got
LINK_STATES = {"shoe": ("up", "lost", "waiting", "down", "none"),
               "shuffler": ("unused", "ok", "error", "none")}

__all__ = ["TableMetrics", "CONTENT_TYPE_LATEST"]


def _outcome(e: dict) -> str:
    if e.get("void"):
        return "void"
    if e.get("demo"):
        return "demo"
    return str(e.get("winner") or "none")


class TableMetrics:
    """A publisher (events), a subscriber (status) and the loop's journal-write observer;
    `health` answers the health view (None when the loop did not answer in time)."""

    def __init__(self, table: str, *, health: Callable[[], dict | None] | None = None,
                 info: dict[str, str] | None = None):
        self.registry = CollectorRegistry(auto_describe=True)
        self.health = health
        self.last_status_at: float | None = None
        self.on_hold = False
        r, t = self.registry, ["table"]
        self._table = table
        self.cards = Counter("tablectl_cards_read", "Cards read by the shoe and dealt (every "
                             "card event: burns, rounds, counts back)", t, registry=r)
        self.rounds = Counter("tablectl_rounds", "Rounds settled, by outcome (banker, player, "
                              "tie, andar, bahar, …; void; demo)", t + ["outcome"], registry=r)
        self.holds = Counter("tablectl_holds", "Holds opened, by reason", t + ["reason"],
                             registry=r)
        self.irregularities = Counter("tablectl_irregularities", "Irregularities recorded, by "
                                      "kind", t + ["kind"], registry=r)
        self.alarms = Counter("tablectl_alarms", "Device and integrity alarms, by source and "
                              "severity", t + ["source", "severity"], registry=r)
        self.overrides = Counter("tablectl_overrides", "Supervisor overrides, by action",
                                 t + ["action"], registry=r)
        self.shoes = Counter("tablectl_shoes_ended", "Shoes ended, by reason", t + ["reason"],
                             registry=r)
        self.seq = Gauge("tablectl_journal_last_seq", "The journal seq of the last event "
                         "published", t, registry=r)
        self.hold_gauge = Gauge("tablectl_on_hold", "1 while the table is on hold", t,
                                registry=r)
        self.write = Histogram("tablectl_journal_write_seconds", "Time to write an input and "
                               "its events to the journal (one transaction, fsynced for those "
                               "that change the table)", t, buckets=WRITE_BUCKETS, registry=r)
        self.started = Gauge("tablectl_start_time_seconds", "When this table process started "
                             "(Unix time)", t, registry=r)
        self.started.labels(table).set(time.time())
        if info:
            Gauge("tablectl_info", "The table's software and settings (value 1)",
                  t + sorted(info), registry=r).labels(table, *[info[k] for k in sorted(info)]
                                                      ).set(1)
        r.register(_HealthCollector(self))

    # ------------------------------------------------------------------ fed by the loop
    def publish(self, e: dict) -> None:
        kind, t = e.get("event"), self._table
        if kind == "card":
            self.cards.labels(t).inc()
        elif kind == "round_result" and e.get("reveal") != "pending":
            self.rounds.labels(t, _outcome(e)).inc()
        elif kind == "reveal" and isinstance(e.get("result"), dict):
            self.rounds.labels(t, _outcome(e["result"])).inc()
        elif kind == "hold":
            self.holds.labels(t, str(e.get("reason", "?"))).inc()
        elif kind == "irregularity":
            self.irregularities.labels(t, str(e.get("kind", "?"))).inc()
        elif kind in ("alarm", "integrity_alarm"):
            self.alarms.labels(t, str(e.get("source", kind)), str(e.get("severity", "error"))
                               ).inc()
        elif kind == "override":
            self.overrides.labels(t, str(e.get("action", "?"))).inc()
        elif kind == "shoe_ended":
            self.shoes.labels(t, str(e.get("reason", "?"))).inc()
        if isinstance(e.get("seq"), int):
            self.seq.labels(t).set(e["seq"])

    def on_status(self, status: dict) -> None:
        if status.get("event") != "status":
            return
        self.last_status_at = time.time()
        self.on_hold = status.get("hold") is not None
        self.hold_gauge.labels(self._table).set(1 if self.on_hold else 0)

    def journal_written(self, seconds: float) -> None:
        self.write.labels(self._table).observe(seconds)

    # ------------------------------------------------------------------ served
    def text(self) -> bytes:
        return generate_latest(self.registry)


def _num(v: Any) -> float:
    if v is None:
        return math.nan
    if isinstance(v, bool):
        return 1.0 if v else 0.0
    return float(v)


class _HealthCollector:
    """What the health view says, at each scrape (the loop builds the view on its thread)."""

    def __init__(self, m: TableMetrics):
        self.m = m

    def describe(self) -> list:
        return []           # the families depend on the view; nothing to check at register

    def collect(self) -> Iterator[Any]:
        t = self.m._table
        view = self.m.health() if self.m.health is not None else None

        def one(family: Any, name: str, text: str, value: Any) -> Any:
            # a family of one sample, labelled by the table
            m = family(name, text, labels=["table"])
            m.add_metric([t], _num(value))
            return m
        yield one(GaugeMetricFamily, "tablectl_loop_responsive", "1 when the table's loop "
                  "answered the health view in time", view is not None)
        if view is None:
            return
        link = GaugeMetricFamily("tablectl_device_link", "Each device's link, 1 for the state "
                                 "it is in (shoe: up, lost, waiting, down; shuffler: unused, "
                                 "ok, error; none)",
                                 labels=["table", "device", "state"])
        for device, d in (view.get("devices") or {}).items():
            now = d.get("link", "none")
            states = LINK_STATES.get(device, ())
            for state in states if now in states else (*states, now):
                link.add_metric([t, device, state], 1.0 if now == state else 0.0)
        yield link
        shoe = (view.get("devices") or {}).get("shoe") or {}
        counters = CounterMetricFamily("tablectl_shoe_driver", "The shoe driver's counters "
                                       "(frames, cards, bad frames, checksum errors, timeouts, "
                                       "link losses, …) since the table started",
                                       labels=["table", "counter"])
        for name, value in (shoe.get("counters") or {}).items():
            counters.add_metric([t, name], _num(value))
        yield counters
        yield one(GaugeMetricFamily, "tablectl_shoe_last_read_age_seconds", "Seconds since the "
                  "shoe last read a card (NaN before the first)", shoe.get("last_read_age_s"))
        yield one(GaugeMetricFamily, "tablectl_reads_queued", "Reads kept under the open hold",
                  view.get("reads_queued", 0))
        journal = view.get("journal") or {}
        yield one(GaugeMetricFamily, "tablectl_journal_bytes", "The journal's size on disk "
                  "(with its WAL)", journal.get("bytes"))
        yield one(GaugeMetricFamily, "tablectl_journal_proven", "1 once the whole chain is "
                  "proven since the start (0 while its older records are checked)",
                  journal.get("proven"))
        anchors = journal.get("anchors")
        yield one(GaugeMetricFamily, "tablectl_journal_anchored", "1 when an anchor key signs "
                  "the journal's head", anchors is not None)
        if anchors is not None:
            yield one(CounterMetricFamily, "tablectl_journal_anchors", "Anchors signed",
                      anchors.get("count"))
            yield one(GaugeMetricFamily, "tablectl_journal_records_since_anchor", "Records "
                      "written since the last anchor", anchors.get("since_last"))
        feed = view.get("feed")
        if feed is not None:
            yield one(GaugeMetricFamily, "tablectl_feed_lag_events", "Events the floor feed's "
                      "broker has not acknowledged yet", feed.get("lag_events"))
            yield one(GaugeMetricFamily, "tablectl_feed_connected", "1 while the floor feed is "
                      "connected to its broker", feed.get("connected"))
        clock = view.get("clock")
        if clock is not None:
            yield one(GaugeMetricFamily, "tablectl_clock_synchronised", "1 when the system "
                      "clock is synchronised (NaN: unknown)", clock.get("synchronised"))
            yield one(CounterMetricFamily, "tablectl_clock_jumps", "Jumps of the wall clock "
                      "against the monotonic one (over 2 s)", clock.get("jumps"))
            yield one(GaugeMetricFamily, "tablectl_clock_last_jump_seconds", "The last jump of "
                      "the wall clock, signed (NaN: none)", clock.get("last_jump_s"))
        sw = view.get("software") or {}
        soft = GaugeMetricFamily("tablectl_software", "The software's SHA-256 and whether it "
                                 "is approved (value 1)",
                                 labels=["table", "software_sha256", "approval"])
        soft.add_metric([t, str(sw.get("software_sha256", "")), str(sw.get("approval", ""))], 1.0)
        yield soft
        cond = GaugeMetricFamily("tablectl_condition", "Service conditions that stop dealing "
                                 "(no_devices, software), 1 while they hold",
                                 labels=["table", "condition"])
        for name in view.get("conditions") or {}:
            cond.add_metric([t, name], 1.0)
        yield cond
