"""Store-and-forward: the broker stopped and started again mid-shoe under `tablectl run`, and
the controller killed (kill -9) while the broker is down. A subscriber with a persistent session
ends with every public seq of the journal, in order once duplicates are dropped, and recall
tells the same rounds.

What the broker acknowledged is the broker's to keep: it is stopped with SIGTERM while the
table deals (Mosquitto saves its sessions and queued messages on the way down), and killed
with SIGKILL only once nothing is in flight to the subscriber."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.feed.outbox import CURSOR
from controller.journal import Journal
from controller.service.recovery import NOTE_KINDS
from tests.broker import Mosquitto, Subscriber, delivered_all

ROOT = Path(__file__).resolve().parents[1]
PRIVATE_KINDS = NOTE_KINDS | {"input"}      # as the feed is given them: not public
TABLECTL = [sys.executable, "-m", "controller.cli"]


def env(**extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    # reconnect quickly, so the test does not wait out a long back-off
    e.update(PYTHONPATH=str(ROOT), TABLECTL_STORAGE_FSYNC="false", TABLECTL_FEED_RETRY_MAX_S="0.3",
             **extra)
    return e


def public_seqs(journal) -> list[int]:
    with Journal.open_readonly(journal) as j:
        return [r.seq for r in j.records() if r.kind not in PRIVATE_KINDS]


def first_arrivals(events: list[dict]) -> list[int]:
    """Each seq where it first arrived (what a consumer deduplicating by seq keeps)."""
    seen: set[int] = set()
    out = []
    for e in events:
        if e["seq"] not in seen:
            seen.add(e["seq"])
            out.append(e["seq"])
    return out


def test_the_broker_stopped_and_restarted_mid_shoe_loses_nothing(tmp_path):
    broker = Mosquitto(tmp_path / "broker").start()
    sub = Subscriber(broker, ["tables/+/events"], session="floor-outage")
    journal = tmp_path / "j.db"
    proc = subprocess.Popen(TABLECTL + [
        "run", "--pace", "0.004", "--seed", "3", "--shoes", "1", "--no-control", "--journal",
        str(journal), "--config", str(ROOT / "config" / "table.toml"), "--feed", broker.url],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env(), cwd=ROOT)
    try:
        sub.wait_for(lambda m: any(p["event"] == "round_result" and p["round"] >= 8
                                   for _, p, _ in m))
        broker.stop()
        down_at = len(public_seqs(journal))
        time.sleep(0.8)
        assert len(public_seqs(journal)) > down_at        # the table dealt on meanwhile
        broker.start()
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err[-2000:]
        expected = public_seqs(journal)
        events = [p for _, p, _ in sub.wait_for(
            lambda m: {p["seq"] for _, p, _ in m} >= set(expected),
            why=lambda m: f"missing {sorted(set(expected) - {p['seq'] for _, p, _ in m})[:9]}")]
    finally:
        if proc.poll() is None:
            proc.kill()
        sub.close()
        broker.stop()
    assert first_arrivals(events) == expected          # every seq, in journal order
    assert "the connection to" in err and "the broker is back" in err
    with Journal.open_readonly(journal) as j:
        assert delivered_all(j)
    # recall tells the rounds the subscriber saw
    done = subprocess.run(TABLECTL + ["recall", "--journal", str(journal), "--last", "1000",
                                      "--json"], capture_output=True, text=True, env=env(),
                          cwd=ROOT)
    stories = [json.loads(x) for x in done.stdout.splitlines()]
    by_seq = {e["seq"]: e for e in events}
    results = {(e["shoe"], e["round"]): e for e in events if e["event"] == "round_result"}
    assert len(stories) > 60 and len(results) == len(stories)
    for story in stories:
        assert results[(story["shoe"], story["round"])].get("winner") == story.get("winner")
        assert [by_seq[c["seq"]]["code"] for c in story["cards"]] == \
            [c["code"] for c in story["cards"]]


@pytest.mark.slow
def test_the_controller_killed_while_the_broker_is_down_loses_nothing(tmp_path):
    broker = Mosquitto(tmp_path / "broker").start()
    sub = Subscriber(broker, ["tables/+/events"], session="floor-crash")
    journal = tmp_path / "j.db"

    def simulate(*more, drain_s="0.5"):
        # killed, or with the broker down, a run need not wait to drain; the last one drains
        # all it owes (it stops waiting as soon as the broker has taken it)
        return subprocess.run(TABLECTL + ["simulate", "--profile", "macau", "--seed", "4",
                                          "--journal", str(journal), "--feed", broker.url,
                                          *more], capture_output=True, text=True,
                              env=env(TABLECTL_FEED_DRAIN_TIMEOUT_S=drain_s), cwd=ROOT,
                              timeout=60)
    try:
        # killed with the broker up: the cursor it wrote lags what the broker took
        first = simulate("--fault", "crash@150")
        assert first.returncode == -9, first.stderr[-2000:]
        sub.quiet(0.3)                          # all the broker took has reached the subscriber
        broker.wait_saved(sub.since)            # and its session outlives the kill
        broker.stop(kill=True)
        # the broker is down: the table deals on, is killed again, and starts again
        second = simulate("--fault", "crash@150")
        assert second.returncode == -9, second.stderr[-2000:]
        with Journal.open_readonly(journal) as j:
            owed_from, last = j.cursor(CURSOR), j.last_seq
        assert owed_from < last
        broker.start()
        third = simulate(drain_s="30")
        assert third.returncode == 0, third.stderr[-2000:]
        expected = public_seqs(journal)
        events = [p for _, p, _ in sub.wait_for(
            lambda m: {p["seq"] for _, p, _ in m} >= set(expected))]
    finally:
        sub.close()
        broker.stop()
    assert first_arrivals(events) == expected
    assert [p for p in events if p["event"] == "shoe_ended"][-1]["reason"] == "cut_card"
    with Journal.open_readonly(journal) as j:
        assert delivered_all(j)


def test_a_clean_stop_puts_where_the_feed_got_into_the_chain_and_the_next_start_resends_none(
        tmp_path):
    broker = Mosquitto(tmp_path / "broker").start()
    sub = Subscriber(broker, ["tables/+/records"])
    journal = tmp_path / "j.db"

    def simulate(seed: str):
        return subprocess.run(TABLECTL + ["simulate", "--profile", "macau", "--seed", seed,
                                          "--shoes", "1", "--journal", str(journal),
                                          "--feed", broker.url],
                              capture_output=True, text=True,
                              env=env(TABLECTL_FEED_DRAIN_TIMEOUT_S="30"), cwd=ROOT, timeout=60)
    try:
        first = simulate("6")
        assert first.returncode == 0, first.stderr[-2000:]
        with Journal.open_readonly(journal) as j:
            delivered, chained = j.cursor(CURSOR), j.chained_cursors()
            first_last = j.last_seq
        # the feed drained all after the stop's snapshot, and a restart trusts the chain alone:
        # where it got to is in the chain's last record, which the feed delivered too
        assert delivered == first_last and chained[CURSOR] == first_last - 1
        sub.wait_for(lambda m: {p["seq"] for _, p, _ in m} >= set(range(2, first_last + 1)))
        sub.quiet(0.3)
        before = len(sub.messages)
        second = simulate("7")
        assert second.returncode == 0, second.stderr[-2000:]
        with Journal.open_readonly(journal) as j:
            second_last = j.last_seq
        again = sub.wait_for(lambda m: {p["seq"] for _, p, _ in m} >=
                             set(range(2, second_last + 1)))[before:]
    finally:
        sub.close()
        broker.stop()
    # the second start sent what it journaled and, once, the record of where the first had got
    # to: nothing else the first had delivered
    seqs = [p["seq"] for _, p, _ in again]
    assert min(seqs) == first_last and seqs.count(first_last) == 1
