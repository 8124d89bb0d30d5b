"""The service manager's protocol (sd_notify: ready, status, a watchdog pinged from the loop's
own thread) and the clock watch (synchronisation and jumps become journaled alarms)."""
import socket
import threading
import time

from controller.journal import Journal
from controller.settings.profile import load_profile
from controller.service.clock import RealClock
from controller.service.loop import TableService
from controller.service.notify import Notifier, Watchdog, watchdog_interval_s
from controller.service.recovery import open_table
from controller.service.timesync import ClockWatch, sync_state
from controller.table import inputs as ti


def listener(tmp_path):
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(tmp_path / "notify"))
    sock.settimeout(2)
    return sock


def test_ready_status_and_stopping_reach_the_service_manager(tmp_path):
    sock = listener(tmp_path)
    n = Notifier(str(tmp_path / "notify"))
    assert n.ready("NO SHOE: waiting") and n.status("serving") and n.stopping()
    got = [sock.recv(4096).decode() for _ in range(3)]
    assert got == ["READY=1\nSTATUS=NO SHOE: waiting", "STATUS=serving", "STOPPING=1"]
    assert not Notifier("").ready()                       # no manager: nothing, no error
    assert not Notifier(str(tmp_path / "gone")).status("x")


def test_the_watchdog_interval_is_half_what_systemd_asks():
    assert watchdog_interval_s({"WATCHDOG_USEC": "30000000"}) == 15.0
    assert watchdog_interval_s({}) is None
    assert watchdog_interval_s({"WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"}) is None


def test_the_watchdog_is_pinged_by_the_turning_loop_and_stops_with_it(tmp_path):
    sock = listener(tmp_path)
    with Journal(":memory:") as journal:
        table, _ = open_table(load_profile("classic"), journal)
        svc = TableService(table, journal, RealClock())
        dog = Watchdog(svc.call_later, Notifier(str(tmp_path / "notify")), 0.05)
        svc.submit(dog.start)
        loop = threading.Thread(target=svc.run)
        loop.start()
        pings = [sock.recv(64) for _ in range(3)]
        assert pings == [b"WATCHDOG=1"] * 3
        stuck = threading.Event()
        svc.submit(lambda: (stuck.set(), time.sleep(0.4)))    # the loop hangs: no ping
        assert stuck.wait(2)
        before = dog.pings
        time.sleep(0.3)
        assert dog.pings == before
        svc.stop()
        loop.join(5)


def fake_tool(answers):
    def run(argv):
        return answers.get(argv[0])
    return run


def test_sync_state_from_timedatectl_or_chrony():
    assert sync_state(fake_tool({"timedatectl": "NTPSynchronized=yes\nNTP=yes\n"})).synchronised
    chrony = "Reference ID    : C0A80001 (ntp)\nSystem time     : 0.000012 seconds fast\n" \
             "Leap status     : Not synchronised\n"
    state = sync_state(fake_tool({"chronyc": chrony}))
    assert state.synchronised is False and state.source == "chronyc"
    assert sync_state(fake_tool({})).synchronised is None


def test_an_unsynchronised_clock_and_a_jump_are_journaled_alarms():
    answers = {"timedatectl": "NTPSynchronized=no\nNTP=yes\n"}
    wall = [1_000_000.0]
    mono = [50.0]
    with Journal(":memory:") as journal:
        table, _ = open_table(load_profile("classic"), journal)
        svc = TableService(table, journal, RealClock())
        watch = ClockWatch(svc.process, run=fake_tool(answers), wall=lambda: wall[0],
                           mono=lambda: mono[0])
        watch.check_sync()
        watch.check_sync()                               # still off: said once, not hourly
        answers["timedatectl"] = "NTPSynchronized=yes\nNTP=yes\n"
        watch.check_sync()
        wall[0] += 5.0
        mono[0] += 5.0
        assert watch.sample() == 0.0                     # both moved alike
        wall[0] += 1.5
        watch.sample()                                   # within the 2 s allowed
        wall[0] -= 3.0
        assert watch.sample() == -3.0
        alarms = [r.data for r in journal.records(kinds=("alarm",))]
    assert [(a["source"], a["code"]) for a in alarms] == [
        ("clock", "clock_unsynchronised"), ("clock", "clock_jump")]
    assert "-3.0 s" in alarms[1]["text"]
    assert watch.view()["synchronised"] is True and watch.view()["jumps"] == 1


def test_a_clock_alarm_is_a_table_input():
    warning = ti.DeviceWarning(device="clock", code="clock_jump", text="x")
    assert ti.parse_input(warning.to_dict()) == warning        # replayed like any input


class SetClock:
    """A real-time clock (not virtual) whose time the test sets."""
    virtual = False

    def __init__(self) -> None:
        self.t = 0.0

    def now(self) -> float:
        return self.t

    __call__ = now


def test_a_flood_of_inputs_does_not_hold_back_a_due_timer():
    clock = SetClock()
    order: list[str] = []
    with Journal(":memory:") as journal:
        table, _ = open_table(load_profile("classic"), journal)
        svc = TableService(table, journal, clock)
        svc.call_later(1.0, lambda: order.append("timer"))

        def item(n: int) -> None:
            order.append(f"item{n}")
            if n == 10:
                clock.t = 2.0                     # the timer falls due while 90 items wait
        for n in range(100):
            svc.submit(lambda n=n: item(n))
        svc.submit(svc.stop)
        svc.run()
    assert order.index("timer") == 11            # right after the item that made it due
    assert len(order) == 101
