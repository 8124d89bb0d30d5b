"""A wall clock that does not oblige: set back or forward while the table deals, or wrong
when it starts (an RTC that lost its battery, a journal written while the clock was ahead).
Timers run on the monotonic clock; the wall clock only stamps the records, and where it jumped
the table says so once and nothing that measures a time between two moments believes it."""
import json
import time
from pathlib import Path

from controller.cli import main
from controller.journal import Journal
from controller.journal import store
from controller.service.timesync import ClockWatch

ROOT = Path(__file__).resolve().parents[1]
CONFIG = str(ROOT / "config" / "table.toml")
DAY_NS = 86_400 * 10 ** 9


def deal_a_shoe(journal: Path, capsys) -> list[dict]:
    """`tablectl run` on the embedded simulator, one shoe at once; its events."""
    assert main(["run", "--config", CONFIG, "--shoes", "1", "--pace", "0", "--no-control",
                 "--journal", str(journal), "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def clock_alarms(journal: Path) -> list[dict]:
    with Journal(journal) as j:
        return [r.data for r in j.records(kinds=("alarm",)) if r.data.get("source") == "clock"]


def test_a_start_on_a_clock_behind_the_journal_is_a_clock_jump_said_once(tmp_path, monkeypatch,
                                                                          capsys):
    journal = tmp_path / "j.db"
    # the first run's clock is a day ahead: its records are in the "future" ...
    real = time.time_ns
    monkeypatch.setattr(time, "time_ns", lambda: real() + DAY_NS)
    monkeypatch.setattr(store, "_time_ns", time.time_ns)
    deal_a_shoe(journal, capsys)
    # ... then the clock is put right (or lost its battery) while the table is stopped
    monkeypatch.setattr(time, "time_ns", real)
    monkeypatch.setattr(store, "_time_ns", real)
    assert clock_alarms(journal) == []
    events = deal_a_shoe(journal, capsys)
    assert {e["shoe"] for e in events if e.get("event") == "round_result"} == {2}   # resumed
    alarms = clock_alarms(journal)
    assert [(a["code"], a["severity"]) for a in alarms] == [("clock_jump", "warning")]
    assert "behind the journal's record seq" in alarms[0]["text"]
    assert any(e.get("event") == "alarm" and e.get("code") == "clock_jump" for e in events)
    # the records after it are the newer ones: the next start has nothing to say
    deal_a_shoe(journal, capsys)
    assert len(clock_alarms(journal)) == 1
    assert main(["verify-journal", "--journal", str(journal)]) == 0


def test_a_clock_set_back_just_before_a_crash_is_a_clock_jump_at_the_next_start(
        tmp_path, monkeypatch, capsys):
    journal = tmp_path / "j.db"
    real = time.time_ns
    monkeypatch.setattr(time, "time_ns", lambda: real() + 3600 * 10 ** 9)
    monkeypatch.setattr(store, "_time_ns", time.time_ns)
    deal_a_shoe(journal, capsys)
    monkeypatch.setattr(time, "time_ns", real)
    monkeypatch.setattr(store, "_time_ns", real)
    # the clock set back an hour, a record stamped by it, and the process killed before the
    # clock watch looked again: the newest record agrees with the clock, those before it do not
    with Journal(journal) as j:
        before = j.last_seq
        j.record_cursors(j.chained_cursors())
    deal_a_shoe(journal, capsys)
    alarms = clock_alarms(journal)
    assert [a["code"] for a in alarms] == ["clock_jump"]
    assert f"record seq {before} (" in alarms[0]["text"]      # the last one stamped ahead
    deal_a_shoe(journal, capsys)                   # said once
    assert len(clock_alarms(journal)) == 1


def test_the_clock_is_compared_with_the_journals_newest_record_within_the_limit():
    said = []
    wall = [1_800_000_000.0]
    watch = ClockWatch(said.append, wall=lambda: wall[0], mono=lambda: 5.0)
    newest = "2027-01-15T08:00:00.000000Z"          # 1_800_000_000 s after the epoch
    wall[0] += 10.0
    assert watch.behind_journal(7, newest) == 0.0   # the clock after the record: as it should
    wall[0] -= 11.5
    assert watch.behind_journal(7, newest) == 0.0   # 1.5 s behind: within the 2 s allowed
    wall[0] -= 3600.0
    assert round(watch.behind_journal(7, newest), 1) == 3601.5
    assert [a.code for a in said] == ["clock_jump"] and "seq 7" in said[0].text
    assert watch.view()["jumps"] == 1 and watch.view()["last_jump_s"] == -3601.5


def test_the_health_views_time_up_is_not_the_wall_clocks(monkeypatch):
    from controller.service.clock import RealClock
    from controller.service.health import Health
    from controller.service.loop import TableService
    from controller.service.recovery import open_table
    from controller.settings.profile import load_profile
    with Journal(":memory:") as journal:
        table, _ = open_table(load_profile("classic"), journal)
        svc = TableService(table, journal, RealClock())
        health = Health(svc, journal_path=None)
        real = time.time
        monkeypatch.setattr(time, "time", lambda: real() - 3600.0)   # set back an hour
        back = health.view(table)
        monkeypatch.setattr(time, "time", lambda: real() + 86_400.0)  # then on a day
        ahead = health.view(table)
    assert 0.0 <= back["up_s"] <= ahead["up_s"] < 60.0


class Stamps:
    """The journal's clock, set by the test: (UTC µs, monotonic µs)."""

    def __init__(self) -> None:
        self.utc, self.mono = 1_800_000_000 * 10 ** 6, 5_000 * 10 ** 6

    def __call__(self) -> tuple[int, int]:
        return self.utc, self.mono

    def both(self, seconds: float) -> None:
        self.utc += int(seconds * 1e6)
        self.mono += int(seconds * 1e6)


def hold_seconds(path, during) -> list[float | None]:
    """A shoe with a hold of 10 s on the monotonic clock; `during(stamps)` is what the wall
    clock (or the PC) does meanwhile. The report's length of each hold."""
    from controller.report.collect import collect
    stamps = Stamps()
    with Journal(path, clock=stamps) as j:
        j.append_event({"event": "shoe_started", "shoe": 1, "decks": 8, "game": "punto_banco",
                        "profile": "macau"})
        for n in (1, 2):
            stamps.both(30.0)
            j.append_event({"event": "hold", "shoe": 1, "round": n, "reason": "hold"})
            stamps.both(4.0)
            during(stamps)
            stamps.both(6.0)
            j.append_event({"event": "resume", "shoe": 1, "round": n})
    with Journal(path, readonly=True) as j:
        return [h.seconds for h in collect(j, shoe=1).holds]


def test_a_holds_length_in_the_report_is_not_the_wall_clocks_jump(tmp_path):
    def back_an_hour(s):
        s.utc -= 3600 * 10 ** 6

    def on_a_day(s):
        s.utc += 86_400 * 10 ** 6

    def restarted(s):
        # the PC restarted during the hold: its monotonic clock began again (the wall clock
        # is all there is to tell how long the hold lasted)
        s.utc += 600 * 10 ** 6
        s.mono = 20 * 10 ** 6

    assert hold_seconds(tmp_path / "a.db", lambda s: None) == [10.0, 10.0]
    assert hold_seconds(tmp_path / "b.db", back_an_hour) == [10.0, 10.0]
    assert hold_seconds(tmp_path / "c.db", on_a_day) == [10.0, 10.0]
    assert hold_seconds(tmp_path / "d.db", restarted) == [610.0, 610.0]


def test_a_minute_of_failed_sign_ins_is_journaled_once_over_whatever_the_wall_clock():
    from controller.access.accounts import AuthResult
    from controller.service.signins import SignInJournal
    written: list[dict] = []
    wall, mono = [600.0], [50.0]
    log = SignInJournal(lambda d, durable: written.append(d), clock=lambda: wall[0],
                        mono=lambda: mono[0])
    for i in range(3):
        log.record(AuthResult(False, "sam", "wrong_pin", "", context="hold", at=600.0 + i,
                              failures=i + 1))
    wall[0] -= 3600.0                   # set back an hour in that minute
    mono[0] += 30.0
    assert log.flush() == 0             # the minute is not over yet
    wall[0] += 31.0
    mono[0] += 31.0
    assert log.flush() == 1             # (on the wall clock it would be over in an hour)
    assert written[-1]["event"] == "auth_failures" and written[-1]["count"] == 3
    assert not log.pending()


def test_a_dropped_link_on_the_embedded_simulator_comes_back_while_the_table_waits(tmp_path):
    """The embedded simulator's devices keep a time of their own that the dealer's pulls
    advance; a dropped link must also end while the dealer waits (the table is held for the
    link), or the run waits for ever."""
    import os
    import subprocess
    import sys
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")
           or k == "TABLECTL_STORAGE_FSYNC"}
    env.update(PYTHONPATH=str(ROOT), TABLECTL_SIMULATOR_FAULTS="drop@30",
               TABLECTL_SHOE_RECONNECT_INITIAL_S="0.05")
    done = subprocess.run([sys.executable, "-m", "controller.cli", "run", "--config", CONFIG,
                           "--shoes", "1", "--pace", "0", "--no-control", "--journal",
                           str(tmp_path / "j.db"), "--json"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    events = [json.loads(line) for line in done.stdout.splitlines()]
    codes = [e.get("code") for e in events if e.get("event") == "alarm"]
    assert "link_lost" in codes and "link_back" in codes
    assert any(e.get("event") == "shoe_ended" for e in events)


def test_the_shoes_last_read_age_is_not_the_wall_clocks(monkeypatch):
    """A shoe that has just read a card: set on an hour, the wall clock had it silent for an
    hour (the metric an alert watches); set back, it looked alive for an hour whatever it
    did. Its age is counted on the monotonic clock; the time of the read stays the wall's."""
    import random
    from controller.service.clock import RealClock
    from controller.service.devices import ShoeSource
    from controller.service.health import Health
    from controller.service.loop import TableService
    from controller.service.recovery import open_table
    from controller.settings.profile import load_profile
    from drivers.shoe import open_shoe
    from simulators.install import install
    from simulators import registry
    from simulators.shoe import ShoeModel
    install()
    model = ShoeModel(["AS", "KD"], protocol="beetek", session=1)
    name = f"clock-jump-shoe-{random.getrandbits(32):08x}"
    registry.register(name, model)
    got: list = []
    source = ShoeSource(got.append, lambda: open_shoe(f"shoesim://{name}", "beetek",
                                                     read_timeout_s=0.01),
                        protocol="beetek", read_timeout_s=0.0)
    try:
        with Journal(":memory:") as journal:
            table, _ = open_table(load_profile("classic"), journal)
            health = Health(TableService(table, journal, RealClock()), journal_path=None,
                            shoe=source)
            model.pull()
            deadline = time.monotonic() + 10
            while not got and time.monotonic() < deadline:
                source.pump()
            assert got, "the card was not read"
            real = time.time
            monkeypatch.setattr(time, "time", lambda: real() + 3600.0)   # set on an hour
            ahead = health.view(table)["devices"]["shoe"]
            monkeypatch.setattr(time, "time", lambda: real() - 3600.0)   # and back
            back = health.view(table)["devices"]["shoe"]
        assert ahead["last_read_age_s"] < 60.0 and back["last_read_age_s"] < 60.0
        assert ahead["last_read"] == back["last_read"] is not None
    finally:
        source.close()
        registry.unregister(name)
