"""Crash recovery: the controller is killed at any moment and restarted on the same journal.

The table resumes in the same state, no card read is lost or applied twice, and the round
results in the journal equal those of an uninterrupted run.
"""
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import controller.service.fault as fault
from controller.shoe.cards import ordered_shoe
from controller.journal import Journal
from controller.settings.profile import load_profile
from controller.commands._simulation import run_simulation
from tests.golden import GOLDEN, compare, expected, needs_golden

ROOT = Path(__file__).resolve().parents[1]
TABLECTL = [sys.executable, "-m", "controller.cli"]


class Crash(Exception):
    pass


def journal_story(path):
    """Round results and card reads as the journal holds them."""
    j = Journal.open_readonly(path)
    try:
        rounds = [r.data for r in j.records(kinds=["round_result"])]
        cards = [r.data for r in j.records(kinds=["card"])]
        assert j.verify().ok
    finally:
        j.close()
    return rounds, cards


def same_rounds(rounds, ref) -> bool:
    """The same rounds as an uninterrupted run: the same cards, results and bets; a round
    the restart had checked says so (`restart_review` among its irregularities, and
    `card_entered` for a read lost with the crash that the supervisor typed), no more."""
    def plain(r):
        r = {k: v for k, v in r.items() if k != "seq"}
        marks = [m for m in r.pop("irregularities", [])
                 if m not in ("restart_review", "card_entered")]
        return dict(r, irregularities=marks) if marks else r
    return len(rounds) == len(ref) and all(plain(a) == plain(b) for a, b in zip(rounds, ref))


def short_shoe(tmp_path) -> str:
    codes = [c.code for c in ordered_shoe(6)]
    random.Random(11).shuffle(codes)
    lines = codes[:45] + ["CUT"] + codes[45:60]
    path = tmp_path / "short.shoe"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.slow
def test_every_event_of_a_shoe(tmp_path, monkeypatch):
    profile = load_profile("classic")
    shoe = short_shoe(tmp_path)
    ref_path = tmp_path / "ref.db"
    list(run_simulation(profile, shoe_file=shoe, journal_path=str(ref_path)))
    ref_rounds, ref_cards = journal_story(ref_path)
    j = Journal.open_readonly(ref_path)
    inputs = sum(1 for _ in j.records(kinds=["input"]))
    j.close()
    assert inputs > 50 and ref_rounds

    def die():
        raise Crash()
    monkeypatch.setattr(fault, "die", die)
    for k in range(1, inputs + 1):
        path = tmp_path / f"crash{k}.db"
        with pytest.raises(Crash):
            list(run_simulation(profile, shoe_file=shoe, journal_path=str(path), crash_after=k))
        list(run_simulation(profile, shoe_file=shoe, journal_path=str(path)))
        rounds, cards = journal_story(path)
        assert same_rounds(rounds, ref_rounds), f"crash after input {k}"
        assert [(c["n"], c["code"], c["slot"]) for c in cards] == \
            [(c["n"], c["code"], c["slot"]) for c in ref_cards], f"crash after input {k}"


def run_cli(*args, check=True, **kw):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(TABLECTL + list(args), capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120, **kw)
    if check:
        assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


@pytest.mark.slow
def test_kill_9_during_seeded_shoes_resumes_with_the_same_results(tmp_path, durable):
    ref = tmp_path / "ref.db"
    run_cli("simulate", "--profile", "live-commission", "--seed", "3", "--shoes", "2",
            "--journal", str(ref), "--json")
    ref_rounds, ref_cards = journal_story(ref)
    for n in (1, 230, 700):
        path = tmp_path / f"k{n}.db"
        killed = run_cli("simulate", "--profile", "live-commission", "--seed", "3", "--shoes", "2",
                         "--journal", str(path), "--json", "--fault", f"crash@{n}", check=False)
        assert killed.returncode in (-signal.SIGKILL, 137), killed.stderr[-500:]
        run_cli("simulate", "--profile", "live-commission", "--seed", "3", "--shoes", "2",
                "--journal", str(path), "--json")
        rounds, cards = journal_story(path)
        assert same_rounds(rounds, ref_rounds), f"killed after input {n}"
        assert [c["code"] for c in cards] == [c["code"] for c in ref_cards]


CRASH_AT = (4, 40, 100, 200, 333)


# Bee-Tek restarts like the barcode shoe (no resend: a restart review), so the everyday run
# takes barcode and framed; the slow run adds Bee-Tek
@pytest.mark.parametrize("protocol", [pytest.param("beetek", marks=pytest.mark.slow),
                                      "barcode", "framed"])
def test_a_crash_at_any_card_gives_the_rounds_of_a_clean_run(tmp_path, monkeypatch, protocol):
    """The simulated devices outlive the controller as real ones would: a framed shoe resends
    exactly what was never acknowledged; a Bee-Tek or barcode shoe cannot, so the table holds
    for a restart review, which the virtual supervisor settles from the cards on the table."""
    def die():
        raise Crash()
    monkeypatch.setattr(fault, "die", die)
    profile = load_profile("macau")
    clean = [e for e in run_simulation(profile, seed=3, protocol=protocol)
             if e["event"] == "round_result"]
    for at in CRASH_AT:
        path = str(tmp_path / f"j{at}.db")
        with pytest.raises(Crash):
            run_simulation(profile, seed=3, protocol=protocol, journal_path=path,
                           crash_after=at)
        run_simulation(profile, seed=3, protocol=protocol, journal_path=path)
        with Journal.open_readonly(path) as j:
            assert j.verify().ok
            rounds = [r.data for r in j.records(kinds=["round_result"])]
            restarted = [r.data for r in j.records(kinds=["restarted"])]
            holds = [r.data["reason"] for r in j.records(kinds=["hold"])]
            ended = [r.data for r in j.records(kinds=["shoe_ended"])]
            reconciled = [r.data for r in j.records(kinds=["reconciliation"])]
        assert same_rounds(rounds, clean), f"crash@{at}"
        assert ended[0]["reason"] == "cut_card" and reconciled[0]["ok"], f"crash@{at}"
        assert [r["resends"] for r in restarted] == [protocol == "framed"], f"crash@{at}"
        # every crash here comes while cards leave the shoe: reviewed unless the shoe resends
        assert holds == ([] if protocol == "framed" else ["restart_review"]), f"crash@{at}"


@pytest.fixture
def crashing(monkeypatch):
    """crash@N raises Crash here instead of killing the process (the restart runs here too)."""
    def die():
        raise Crash()
    monkeypatch.setattr(fault, "die", die)


def clean_run(profile, path: str, **kw) -> tuple[list[str], list[dict]]:
    """A simulation that never crashed: its inputs' types in journal order (crash@N counts
    them) and its rounds."""
    run_simulation(profile, journal_path=path, **kw)
    with Journal.open_readonly(path) as j:
        return ([r.data["type"] for r in j.records(kinds=["input"])],
                [r.data for r in j.records(kinds=["round_result"])])


def crash_and_restart(profile, path: str, at: int, **kw) -> None:
    """A simulation stopped by a crash after its `at`-th journaled input, then the same one
    again on its journal (as rerunning the same command does)."""
    with pytest.raises(Crash):
        run_simulation(profile, journal_path=path, crash_after=at, **kw)
    run_simulation(profile, journal_path=path, **kw)


@pytest.mark.slow
@pytest.mark.parametrize("name, protocol, seed, faults", [
    ("macau", "framed", 5, "misread@12 double_draw@30 noise@50 split@70 face_up@90 "
     "triple_draw@120 foreign_card@150"),
    ("macau-csm", "framed", 11, "misread@20 drop@40 double_draw@60 noise@80"),
    ("chemin-de-fer", "beetek", 11, "misread@20 drop@40 noise@80"),
])
def test_a_crash_all_along_a_faulty_shoe_gives_the_rounds_of_a_clean_run(
        tmp_path, crashing, name, protocol, seed, faults):
    """Every eleventh input of a shoe with the devices' faults on it (a continuous shuffler,
    a banking game's decisions, a shoe that cannot resend among them): restarted, the table
    deals the rounds of a run that never crashed."""
    from simulators.shoe import parse_fault
    profile = load_profile(name)
    kw = dict(seed=seed, protocol=protocol, keep_events=False)

    def given() -> list:
        return [parse_fault(f) for f in faults.split()]
    inputs, clean = clean_run(profile, str(tmp_path / "clean.db"), faults=given(), **kw)
    for at in range(1, len(inputs) + 1, 11):
        path = str(tmp_path / f"j{at}.db")
        crash_and_restart(profile, path, at, faults=given(), **kw)
        with Journal.open_readonly(path) as j:
            assert j.verify().ok, f"crash@{at}"
            rounds = [r.data for r in j.records(kinds=["round_result"])]
        assert same_rounds(rounds, clean), f"crash@{at}"


def test_a_crash_just_after_a_failed_read_or_the_cut_card_applies_neither_twice(
        tmp_path, crashing):
    """A framed shoe numbers its failed reads and the cut card as it numbers cards, and
    resends them as long as they are not acknowledged: journaled, each is acknowledged and
    the restart resumes after it, so that a crash just after one does not bring it back as
    another card left unread (a card the supervisor would be asked to type that never was)."""
    from simulators.shoe import parse_fault
    profile = load_profile("macau")
    faults = [parse_fault("misread@12")]
    inputs, clean = clean_run(profile, str(tmp_path / "clean.db"), seed=3, protocol="framed",
                              faults=faults)
    # the N-th journaled input, as crash@N counts them
    at = {kind: inputs.index(kind) + 1 for kind in ("read_failed", "cut_card")}
    for kind, n in at.items():
        path = str(tmp_path / f"{kind}.db")
        crash_and_restart(profile, path, n, seed=3, protocol="framed", faults=faults)
        with Journal.open_readonly(path) as j:
            assert j.verify().ok
            rounds = [r.data for r in j.records(kinds=["round_result"])]
            holds = [r.data["reason"] for r in j.records(kinds=["hold"])]
            again = [r.data["type"] for r in j.records(kinds=["input"])].count(kind)
        assert again == 1, f"crash after the {kind}"
        assert holds == ["unreadable_card"], f"crash after the {kind}"     # the misread's
        assert same_rounds(rounds, clean), f"crash after the {kind}"


def test_a_restart_between_shoes_tells_the_shoe_where_the_journal_stands(tmp_path):
    """The card that ends a shoe is journaled, and a crash can take its acknowledgement: the
    framed shoe resends it after the restart, between shoes. Told the last read journaled, the
    driver drops it; else it came into the next shoe as a card drawn while none was due (seen
    on the rig: kill -9 as a shoe ended, then a hold at the next shoe's start)."""
    from controller.service.build import DeviceSettings, TableSpec, build
    from controller.service.clock import VirtualClock
    from simulators.install import install
    from simulators.rig import SimRig
    profile = load_profile("macau")
    path = str(tmp_path / "ended.db")
    run_simulation(profile, seed=3, protocol="framed", journal_path=path, keep_events=False)
    with Journal.open_readonly(path) as j:
        inputs = [r.data for r in j.records(kinds=["input"])]
        last = [i["seq"] for i in inputs if i.get("seq")][-1]
        assert list(j.records(kinds=["shoe_ended"]))
    kinds = [i["type"] for i in inputs]
    assert kinds.count("shoe_session") == 1 and kinds.index("shoe_session") < kinds.index("card")
    session = inputs[kinds.index("shoe_session")]["session"]
    install()
    clock = VirtualClock()
    rig = SimRig(profile.decks, protocol="framed", seed=4, clock=clock)
    rt = build(TableSpec(profile, DeviceSettings(shoe_url=rig.shoe_url, protocol="framed"),
                         plan=lambda n: None, journal_path=path, clock=clock, rig=rig))
    try:
        assert rt.shoe is not None and rt.shoe.resume_seq == last
        # the shoe's session, put on record before its first read, goes with it
        assert rt.shoe.resume_session == session
    finally:
        rt.close()


def test_a_crash_in_a_lost_link_hold_restarts_with_the_link_found_up(tmp_path, crashing):
    """The hold for a lost link waits for the link to come back before its kept reads can be
    accepted; a restart that finds the shoe's link up says so (LinkBack), or the hold could
    never be cleared but by ending the shoe."""
    from simulators.shoe import parse_fault
    profile = load_profile("macau")
    faults = [parse_fault("drop@40")]
    inputs, clean = clean_run(profile, str(tmp_path / "clean.db"), seed=9, protocol="framed",
                              faults=faults)
    at = inputs.index("link_lost") + 1
    path = str(tmp_path / "lost.db")
    crash_and_restart(profile, path, at, seed=9, protocol="framed", faults=faults)
    with Journal.open_readonly(path) as j:
        assert j.verify().ok
        after = [r.data["type"] for r in j.records(kinds=["input"])][at:at + 2]
        rounds = [r.data for r in j.records(kinds=["round_result"])]
        overrides = [r.data["action"] for r in j.records(kinds=["override"])]
    assert after == ["restarted", "link_back"]
    assert "accept_reads" in overrides
    assert same_rounds(rounds, clean)


def test_a_crash_as_a_decision_is_due_has_it_given_after_the_restart_review(
        tmp_path, crashing):
    """Chemin de fer on a shoe that cannot resend: the restart holds for a review while the
    Player's decision is due; the simulated player, refused during the hold, decides once the
    table asks again, and the shoe is dealt to its end with a clean run's rounds."""
    profile = load_profile("chemin-de-fer")
    clean_path = str(tmp_path / "clean.db")
    run_simulation(profile, seed=11, protocol="beetek", journal_path=clean_path)
    with Journal.open_readonly(clean_path) as j:
        inputs = [r.data for r in j.records(kinds=["input"])]
        clean = [r.data for r in j.records(kinds=["round_result"])]
    # the card after which the table asks a decision: the next input is the decision
    at = next(n for n in range(1, len(inputs)) if inputs[n - 1]["type"] == "card"
              and inputs[n].get("action") == "decide" and n > 40)
    path = str(tmp_path / "decide.db")
    crash_and_restart(profile, path, at, seed=11, protocol="beetek")
    with Journal.open_readonly(path) as j:
        assert j.verify().ok
        rounds = [r.data for r in j.records(kinds=["round_result"])]
        holds = [r.data["reason"] for r in j.records(kinds=["hold"])]
    assert "restart_review" in holds
    assert same_rounds(rounds, clean)


def test_a_crash_as_a_round_goes_back_into_the_continuous_shuffler_returns_it_once(
        tmp_path, crashing):
    """The simulated dealer puts a round's cards back into the continuous shuffler as the round
    ends, before the journal has it; a restart tells that end again (nobody outside saw it):
    the cards are in the machine already, and go back no second time."""
    profile = load_profile("macau-csm")
    clean_path = str(tmp_path / "clean.db")
    run_simulation(profile, seed=11, protocol="framed", journal_path=clean_path)
    ends, n = [], 0
    with Journal.open_readonly(clean_path) as j:
        for r in j.records():
            n += r.kind == "input"
            if r.kind == "cards_returned":
                ends.append(n)       # the input whose round ended: crash@n comes just after
        clean = [r.data for r in j.records(kinds=["round_result"])]
    for at in (ends[3], ends[40]):
        path = str(tmp_path / f"j{at}.db")
        crash_and_restart(profile, path, at, seed=11, protocol="framed")
        with Journal.open_readonly(path) as j:
            assert j.verify().ok
            rounds = [r.data for r in j.records(kinds=["round_result"])]
        assert same_rounds(rounds, clean), f"crash@{at}"


def said_of(stderr: bytes | str | None) -> str:
    """A process's warnings and errors (its holds among them), for a failure's message."""
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr or ""
    lines = [line for line in text.splitlines()
             if '"level": "info"' not in line and '"level": "debug"' not in line]
    return "\n".join(lines[-40:])


@needs_golden
@pytest.mark.slow
def test_kill_9_with_devices_in_a_separate_process(tmp_path, durable):
    """A real rig: the devices run in their own process on ptys; the controller is killed, and
    the rig stalls while the last start meets the shoe."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    dev = subprocess.Popen(TABLECTL + ["devices", "--blind", "--shoe-file", str(GOLDEN / "classic-1.shoe"),
                                       "--profile", "classic", "--shoe-protocol", "framed",
                                       "--pace-ms", "15"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                           cwd=ROOT)
    try:
        line = dev.stdout.readline()
        assert line.startswith("shoe:"), line + dev.stderr.read()
        url = line.split()[1]
        journal = tmp_path / "rig.db"
        cmd = TABLECTL + ["run", "--profile", "classic", "--shoe-url", url, "--shoe-protocol",
                          "framed", "--shuffler-url", "none", "--journal", str(journal),
                          "--no-control", "--json", "--shoes", "1"]
        rng = random.Random(5)
        for _ in range(4):
            ctl = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                   env=env, cwd=ROOT)
            time.sleep(rng.uniform(0.8, 1.6))
            ctl.send_signal(signal.SIGKILL)
            ctl.wait()
        final = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True, env=env, cwd=ROOT)
        # the rig's computer stalls while the last start meets the shoe (a busy machine): the
        # shoe's answer and its resends come late, and are still taken for what they are
        time.sleep(rng.uniform(0.3, 1.5))
        dev.send_signal(signal.SIGSTOP)
        time.sleep(0.8)
        dev.send_signal(signal.SIGCONT)
        try:
            _, said = final.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            final.kill()
            pytest.fail("the last start did not finish the shoe in 120 s; what it said:\n"
                        + said_of(final.communicate()[1]))
        assert final.returncode == 0, said[-2000:]
        rounds, cards = journal_story(journal)
        j = Journal.open_readonly(journal)
        events = [r.data for r in j.records(kinds=["burn"])]
        j.close()
        events += rounds + [{"event": "shoe_ended", "rounds": len(rounds), "reason": "cut_card"}]
        compare(expected("classic-1"), events)
        assert len({c["n"] for c in cards}) == len(cards)      # no read applied twice
    finally:
        dev.send_signal(signal.SIGCONT)
        dev.send_signal(signal.SIGTERM)
        dev.wait(timeout=10)


def test_a_hold_present_at_the_crash_is_still_there_after_restart(tmp_path, monkeypatch):
    from controller.service.recovery import open_table
    from simulators.shoe import parse_fault
    profile = load_profile("macau")
    faults = [parse_fault("misread@30")]
    ref = tmp_path / "ref.db"
    list(run_simulation(profile, seed=9, faults=faults, journal_path=str(ref)))
    j = Journal.open_readonly(ref)
    inputs = [r.data for r in j.records(kinds=["input"])]
    j.close()
    at = next(i for i, inp in enumerate(inputs, 1) if inp["type"] == "read_failed")

    def die():
        raise Crash()
    monkeypatch.setattr(fault, "die", die)
    path = tmp_path / "hold.db"
    with pytest.raises(Crash):
        list(run_simulation(profile, seed=9, faults=faults, journal_path=str(path),
                            crash_after=at))
    journal = Journal(str(path))
    table, rec = open_table(profile, journal)
    assert rec.resumed and table.state == "hold"
    assert table.hold.last.kind == "unreadable_card"
    journal.close()
    list(run_simulation(profile, seed=9, faults=faults, journal_path=str(path)))
    assert same_rounds(journal_story(path)[0], journal_story(ref)[0])


@pytest.mark.slow
def test_a_restart_with_a_shoe_that_cannot_resend_holds_for_review(tmp_path, durable):
    """Bee-Tek cannot resend: after kill -9 mid-round the table holds with the round's layout;
    reads that come meanwhile wait; the supervisor enters a card the controller never saw (or
    confirms the layout), and every card ends up dealt in shoe order."""
    from tests.test_link_review import Rig, seeded_shoe
    import tempfile
    import shutil
    where = Path(tempfile.mkdtemp(prefix="rst", dir="/tmp"))
    rig = Rig(where)
    try:
        rig.accounts()
        # a card every 150 ms: the table keeps up even on a busy machine, so at most the one
        # read in flight dies with the process (more would each need an entered card)
        dev = subprocess.Popen(TABLECTL + ["devices", "--blind", "--seed", "5", "--pace-ms", "150"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=rig.env, cwd=where)
        rig.procs.append(dev)
        url = dev.stdout.readline().split()[1]
        ctl = rig.run(url)
        rig.wait(lambda s: s["round"] is not None and s["shoe"]["cards_out"] > 25,
                 "dealing a round")
        ctl.send_signal(signal.SIGKILL)
        ctl.wait()
        rig.procs.remove(ctl)
        rig.out.close()
        rig.err.close()
        ctl = rig.run(url)
        held = rig.wait(lambda s: s["hold"] is not None and s["hold"]["queued"],
                        "a restart review with reads kept")
        assert held["hold"]["problems"][-1]["kind"] == "restart_review"
        assert "layout" in held["hold"]["problems"][-1]
        shoe = seeded_shoe()
        reads = held["shoe"]["cards_out"]          # the cards dealt before the kill
        first_kept = shoe.index(held["hold"]["queued"][0], reads)
        if first_kept > reads:          # the read in flight at the kill was lost: enter it
            assert first_kept == reads + 1
            done = rig.override("enter_card", shoe[reads], reason="on the table, never read")
        else:
            done = rig.override("confirm_layout", reason="layout matches the cards")
        assert done.returncode == 0, done.stderr
        rig.wait(lambda s: s["hold"] is None and s["shoe"]["cards_out"] > reads + 10,
                 "dealing on")
        ctl.terminate()
        ctl.wait(timeout=10)
        with Journal.open_readonly(rig.journal) as j:
            assert j.verify().ok
            cards = [r.data for r in j.records(kinds=["card"])]
            restarted = [r.data for r in j.records(kinds=["restarted"])]
        assert [c["code"] for c in cards] == shoe[:len(cards)]      # none lost, none twice
        assert restarted and restarted[-1]["resends"] is False
    finally:
        rig.close()
        shutil.rmtree(where, ignore_errors=True)


def test_a_crash_after_a_misplaced_burn_card_has_the_dealer_misplace_none_again(
        tmp_path, crashing):
    """The dealer's skip_burn fault is the devices' side of the table (saved with them): a
    restart after it does not have the dealer misplace a second burn card."""
    from simulators.shoe import parse_fault
    profile = load_profile("live-commission")
    kw = dict(seed=5, protocol="barcode", keep_events=False)

    def faults() -> list:
        return [parse_fault("skip_burn@40")]

    def told(path: str) -> tuple[list, list]:
        with Journal.open_readonly(path) as j:
            assert j.verify().ok
            reports = [r.data for r in j.records(kinds=["input"])
                       if r.data.get("action") == "report_misplaced"]
            return reports, [r.data for r in j.records(kinds=["round_result"])]
    clean_path = str(tmp_path / "clean.db")
    run_simulation(profile, faults=faults(), journal_path=clean_path, **kw)
    clean_reports, clean = told(clean_path)
    assert len(clean_reports) == 1
    path = str(tmp_path / "j.db")
    crash_and_restart(profile, path, 60, faults=faults(), **kw)
    reports, rounds = told(path)
    assert len(reports) == 1 and same_rounds(rounds, clean)


def shuffler_incident(path: str) -> list[tuple]:
    """What the journal tells of the shuffler's work and its holds: its alarms, the holds and
    what cleared them, what the table asked of it, and the counts of the rests."""
    field = {"alarm": "code", "hold": "reason", "resume": "state", "override": "action",
             "device_request": "action", "reconciliation": "remainder"}
    with Journal.open_readonly(path) as j:
        assert j.verify().ok
        return [(r.kind, r.data[field[r.kind]]) for r in j.records(kinds=list(field))
                if r.kind != "alarm" or r.data.get("source") == "shuffler"]


@pytest.mark.parametrize("given, report", [
    ("jam@0", "alarm"),                 # the new shoe's shuffle jams
    ("count_mismatch@0", "shuffled"),   # the shuffler counts a card short
    ("jam@1", "alarm"),                 # the count of the first shoe's rest jams
])
def test_a_crash_around_a_shuffler_fault_tells_the_incident_of_a_clean_run(
        tmp_path, crashing, given, report):
    """A shuffler's fault answers the table's request and holds the table. Killed just before
    the answer was journaled, the restart asked the shuffler again and the shuffler cleared the
    fault it found: the jam or the miscount vanished, no hold, no remedy on record. Killed while
    the hold stood, the restart asked again under the hold: the jam was cleared and the shoe
    shuffled (or the rest counted) before any remedy. Now the fault found is reported and held
    again, a hold the shuffler raised is left to its remedy, and the journal tells the incident
    of a run that never crashed."""
    from simulators.shoe import parse_fault
    profile = load_profile("macau")
    kw = dict(seed=3, protocol="framed", keep_events=False)
    inputs, clean = clean_run(profile, str(tmp_path / "clean.db"),
                              faults=[parse_fault(given)], **kw)
    told = shuffler_incident(str(tmp_path / "clean.db"))
    assert ("hold", "device_alarm" if report == "alarm" else "count_mismatch") in told
    at = inputs.index(report)
    for n in (at, at + 1):              # after the input before the answer, after the answer
        path = str(tmp_path / f"crash{n}.db")
        crash_and_restart(profile, path, n, faults=[parse_fault(given)], **kw)
        assert shuffler_incident(path) == told, f"{given}, crash@{n}"
        with Journal.open_readonly(path) as j:
            rounds = [r.data for r in j.records(kinds=["round_result"])]
        assert same_rounds(rounds, clean), f"{given}, crash@{n}"
