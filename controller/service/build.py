"""A table's service, built from a typed spec.

`build(spec)` opens the journal (checked, the table recovered from it), the one loop, the
devices by URL, the outlets (stdout, the console's memory, the floor feed, the web display,
metrics), the control socket and the table PC's parts, in the one order that works, and returns
the runtime started: `run()` serves until the shoes are dealt or it is stopped, `close()` closes
everything. Nobody sets the service's fields afterwards; what a caller wants differently is in
the spec.
"""
from __future__ import annotations

import socket
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from controller.journal.anchor import AnchorKey
from controller.journal.proof import BUDGET
from controller.service.clock import Clock
from controller.service.cycle import ShoePlan
from controller.service.parts import Hook, Outlet
from controller.service.recovery import Recovery
from controller.settings.profile import Profile
from controller.words import Words

if TYPE_CHECKING:
    from controller.service.runtime import TableRuntime


@dataclass(frozen=True)
class DeviceSettings:
    shoe_url: str
    protocol: str = "beetek"
    shoe_options: dict = field(default_factory=dict)      # read_timeout_s, baudrate, …
    min_pull_interval_s: float = 0.15
    shuffler_url: str | None = None                       # None: hand-shuffled shoes
    shuffler_options: dict = field(default_factory=dict)  # response_timeout_s, retries, …
    approved_firmware: tuple[str, ...] = ()
    shuffle_timeout_s: float = 300.0
    wait_for_shoe: bool = False     # a shoe missing or busy at start is waited for (no_devices)
    # wraps the shoe's driver each time it is opened (a benchmark's time stamps)
    shoe_driver: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class FeedSpec:
    """The floor feed to an MQTT broker (controller/feed)."""
    broker: Any
    drain_timeout_s: float = 5.0
    retry_max_s: float = 30.0
    pit: str = ""                    # the floor's pit the table stands in ([table] pit)


@dataclass(frozen=True)
class DisplaySpec:
    """The web display on a bound socket; the players' page names the table, its game and
    `limits` ({"min", "max"})."""
    sock: socket.socket
    language: str = "en"
    limits: dict | None = None


@dataclass(frozen=True)
class ControlSpec:
    socket_path: str
    users_db: str
    group: str | None = None
    reply_timeout_s: float = 5.0


@dataclass(frozen=True)
class TablePCSpec:
    """What `tablectl run` adds on a table PC (controller/service/tablepc.py): the software's
    approval, the service manager, the clock watch, the health view, and metrics."""
    cfg: Any                                 # controller.settings.config.Config
    shoe_waiting: str | None = None          # why the shoe could not be opened at start
    metrics_sock: socket.socket | None = None
    info: dict[str, str] = field(default_factory=dict)    # the metrics' build info
    clock_watch: bool = True
    notifier: Any = None                     # service/notify.Notifier (default: from the env)


#: a simulated person or other actor, made once the runtime exists (it needs the loop's
#: submit and timers, and knows which devices were opened)
Person = Callable[["TableRuntime"], Outlet]


@dataclass(frozen=True)
class TableSpec:
    profile: Profile
    devices: DeviceSettings
    plan: Callable[[int], ShoePlan | None]
    journal_path: str | None = None          # None: a scratch journal, deleted at the end
    outlets: tuple[Outlet, ...] = ()          # stdout, a collector: events, prompts, anchors
    listeners: tuple[Outlet, ...] = ()        # also told every status (the readable lines)
    shoes: int = 0                            # shoes to deal (0: until stopped)
    software: str = ""                        # the release digest each shoe records
    name: str = "T1"
    clock: Clock | None = None                # None: the real clock
    betting_seconds: float = 0.0
    rig: Any = None                           # simulators.rig.SimRig: closed at the end
    people: tuple[Person, ...] = ()           # who acts at a simulated table, in order
    virtual_supervisor: bool = False          # one of the people clears holds: prompts say so
    idle_seconds: float | None = None         # a shoe outside silent this long is empty
    simulated: bool = False                   # every prompt says SIMULATOR
    simulator_shoes: bool = False             # every shoe is on record as a simulation's
    count_resumed: bool = True                # a shoe resumed from the journal counts
    anchor_key: AnchorKey | None = None
    fsync: bool = True                        # [storage] fsync: durable records fsynced
    snapshot_every: int | None = None
    check_budget: int | None = BUDGET         # records checked before start (live)
    crash_after: int | None = None            # the crash@N fault: killed after N inputs
    on_recovered: Callable[[Recovery, Any], None] | None = None   # (recovery, table)
    hooks: tuple[Hook, ...] = ()              # before each input or commit, journal writes
    feed: FeedSpec | None = None
    display: DisplaySpec | None = None
    control: ControlSpec | None = None
    table_pc: TablePCSpec | None = None
    devices_lost: bool = False                # the devices died with the last process


@dataclass
class Started:
    """What the start has to say: the resume's lines (the first with the journal check's), and
    where the display and the metrics are."""
    said: list[Words]
    checking: Words | None
    display_url: str | None = None
    metrics_url: str | None = None


def build(spec: TableSpec) -> "TableRuntime":
    """The table's service, started: journal, table, loop, devices, outlets, resumed, its
    sources running; `run()` serves it. A failure closes what was opened and re-raises."""
    from controller.service.runtime import TableRuntime
    try:
        rt = TableRuntime(spec)
    except BaseException:
        if spec.rig is not None:
            spec.rig.close()        # a journal refused at start: nothing was dealt
        raise
    try:
        rt.start()
    except BaseException:
        rt.close()
        raise
    return rt
