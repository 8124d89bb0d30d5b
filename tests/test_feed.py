"""The floor feed on a real Mosquitto: every public event of the journal, in order, with its seq;
the retained state and status; a wrong password or an untrusted certificate is one line and the
table deals on, its events kept in the journal for the next start."""
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from controller.cli import main
from controller.settings.config import FeedCfg
from controller.errors import InputError
from controller.feed.broker import broker_from
from controller.feed.outbox import CURSOR
from controller.feed.schema import FEED_SCHEMA
from controller.feed.view import TableView
from controller.journal import Journal
from controller.service.recovery import NOTE_KINDS
from tests.eventcheck import check_events, check_payload
from tests.broker import (Mosquitto, Subscriber, delivered_all, make_certificates,
                          need_mosquitto)

ROOT = Path(__file__).resolve().parents[1]
PRIVATE_KINDS = NOTE_KINDS | {"input"}      # as the feed is given them: not public
TABLECTL = [sys.executable, "-m", "controller.cli"]


def tablectl(*args, env=None, timeout=60):
    e = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    e.update(PYTHONPATH=str(ROOT), TABLECTL_STORAGE_FSYNC="false", **(env or {}))
    return subprocess.run(TABLECTL + list(args), capture_output=True, text=True, env=e,
                          cwd=ROOT, timeout=timeout)


def simulate(journal, url, env=None, seed="1"):
    return tablectl("simulate", "--profile", "macau", "--seed", seed, "--journal", str(journal),
                    "--feed", url, "--json", env=env)


def public(journal) -> list:
    with Journal.open_readonly(journal) as j:
        return [r for r in j.records() if r.kind not in PRIVATE_KINDS]


def feed_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "feed" in line]


@pytest.fixture
def broker(tmp_path):
    b = Mosquitto(tmp_path / "broker").start()
    yield b
    b.stop()


# ---------------------------------------------------------------------- settings, one line each
@pytest.mark.parametrize("url, keys, words", [
    ("http://h:1", {}, "write mqtt://HOST[:PORT]"),
    ("mqtt://h:99999", {}, "port"),
    ("mqtt://h/x", {}, "only the scheme, host and port"),
    ("mqtt://h", {"ca_file": "/etc/hostname"}, "TLS files go with an mqtts:// url"),
    ("mqtt://h", {"password_file": "/etc/hostname"}, "give the username"),
    ("mqtts://h", {"ca_file": "/no/such.pem"}, "no such file"),
    ("mqtts://h", {"cert_file": "/etc/hostname"}, "give both"),
    ("mqtt://h", {"topic_prefix": "a/#"}, "no + or #"),
])
def test_feed_settings_are_checked_before_anything_is_dealt(url, keys, words):
    with pytest.raises(InputError, match=words.replace("[", r"\[").replace("+", r"\+")):
        broker_from(FeedCfg(**keys), url=url)
    b = broker_from(FeedCfg(), url="mqtts://floor.example")
    assert (b.port, b.tls, b.topic("T1", "events")) == (8883, True, "tables/T1/events")


def test_a_bad_feed_url_is_one_line_and_nothing_is_journaled(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)                      # the config's [feed] section: config/table.toml
    journal = tmp_path / "j.db"
    for command in (["run", "--config", "config/table.toml", "--journal", str(journal)],
                    ["simulate", "--profile", "macau", "--seed", "1", "--journal",
                     str(journal)]):
        assert main(command + ["--feed", "mqtt:/nohost"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "write mqtt://HOST[:PORT]" in err, err
    assert not journal.exists()
    assert main(["simulate", "--profile", "macau", "--seed", "1", "--feed", "mqtt://h"]) == 2
    assert "give --journal" in capsys.readouterr().err


# ---------------------------------------------------------------------- the topics
def test_every_public_event_goes_out_in_journal_order_with_state_and_status(tmp_path, broker):
    sub = Subscriber(broker, ["tables/#"], session="t-order")
    journal = tmp_path / "j.db"
    done = simulate(journal, broker.url)
    assert done.returncode == 0, done.stderr[-2000:]
    records = public(journal)
    msgs = sub.wait_for(lambda m: any(t.endswith("/status") and p["status"] == "offline"
                                      for t, p, _ in m))
    sub.close()
    events = [p for t, p, _ in msgs if t == "tables/T1/events"]
    # complete, in order, each exactly as journaled, with its seq, the table and the UTC time
    assert [e["seq"] for e in events] == [r.seq for r in records]
    for e, r in zip(events, records):
        assert {k: v for k, v in e.items()
                if k not in ("seq", "table", "utc", "schema_version")} == r.data
        assert (e["table"], e["utc"]) == ("T1", r.utc)
    # every payload of the three topics as the published contract says, its version with it
    check_events(events)
    # the same events as --json printed (prompts are not journaled: they are in the state)
    printed = [json.loads(x) for x in done.stdout.splitlines()]
    assert [e["seq"] for e in printed] == [e["seq"] for e in events]
    # and every record as journaled, inputs included, for the floor store
    with Journal.open_readonly(journal) as j:
        everything = [(r.seq, r.utc, r.mono, r.kind, r.data, r.hash)
                      for r in j.records(stored=True)]
    assert [(p["seq"], p["utc"], p["mono"], p["kind"], p["data"], p["hash"]) for t, p, _ in msgs
            if t == "tables/T1/records"] == everything
    for t, payload, _ in msgs:
        if t == "tables/T1/records":
            check_payload(payload, "feed.record")
    status = [p for t, p, _ in msgs if t == "tables/T1/status"]
    assert [s["status"] for s in status] == ["online", "offline"] and status[-1]["clean"]
    from controller.release.software import identity
    assert status[0]["software_sha256"] == identity()["software_sha256"]
    for payload in status:
        check_payload(payload, "feed.status")
    for payload in [p for t, p, _ in msgs if t == "tables/T1/state"]:
        check_payload(payload, "feed.state")
    state = [p for t, p, _ in msgs if t == "tables/T1/state"][-1]
    rounds = [e for e in events if e["event"] == "round_result"]
    assert state["last_result"]["round"] == rounds[-1]["round"]
    assert state["last_result"]["seq"] == rounds[-1]["seq"]
    assert sum(state["road"].values()) == len([r for r in rounds if not r.get("void")])
    assert (state["table"], state["game"], state["feed_behind"]) == ("T1", "punto_banco", 0)
    with Journal.open_readonly(journal) as j:
        assert delivered_all(j)          # all acknowledged, recorded durably
    # what a newcomer gets at once: the retained state and status
    late = Subscriber(broker, ["tables/+/state", "tables/+/status"])
    got = late.wait_for(lambda m: len(m) >= 2, timeout=5)
    late.close()
    assert all(retained for _, _, retained in got)
    assert {t for t, _, _ in got} == {"tables/T1/state", "tables/T1/status"}


# ---------------------------------------------------------------------- refusals
def test_a_wrong_password_is_one_line_the_table_deals_on_and_nothing_is_lost(tmp_path):
    need_mosquitto()
    b = Mosquitto(tmp_path / "broker", users={"t1": "right-secret"}).start()
    try:
        pw = tmp_path / "pw"
        pw.write_text("wrong-secret\n")
        env = {"TABLECTL_FEED_USERNAME": "t1", "TABLECTL_FEED_PASSWORD_FILE": str(pw)}
        journal = tmp_path / "j.db"
        # a refusal that lasts is not waited out at the stop: a drain of 10 minutes would
        # outlast the command's 60 s
        done = simulate(journal, b.url, {**env, "TABLECTL_FEED_DRAIN_TIMEOUT_S": "600"})
        assert done.returncode == 0, done.stderr[-2000:]
        lines = feed_lines(done.stderr)
        assert len(lines) == 2, lines      # the refusal, then what is owed at the stop
        assert "refused user 't1'" in lines[0] and "password_file" in lines[0]
        assert "not delivered" in lines[1]
        records = public(journal)
        assert "shoe_ended" in [r.kind for r in records]      # the shoe was dealt to its end
        with Journal.open_readonly(journal) as j:
            assert j.cursor(CURSOR) == 0
        # the right password: the next start sends everything the journal kept
        pw.write_text("right-secret\n")
        again = simulate(journal, b.url, {**env, "TABLECTL_FEED_DRAIN_TIMEOUT_S": "30"})
        assert again.returncode == 0 and not feed_lines(again.stderr), again.stderr
        with Journal.open_readonly(journal) as j:
            assert delivered_all(j)
    finally:
        b.stop()


def test_a_broker_that_refuses_the_tables_topics_is_one_line_not_a_flapping_link(tmp_path):
    need_mosquitto()
    b = Mosquitto(tmp_path / "broker", users={"T1": "secret"},
                  acl="user T1\ntopic write tables/T1/#\n").start()
    try:
        pw = tmp_path / "pw"
        pw.write_text("secret\n")
        done = simulate(tmp_path / "j.db", b.url, {
            "TABLECTL_FEED_USERNAME": "T1", "TABLECTL_FEED_PASSWORD_FILE": str(pw),
            "TABLECTL_TABLE_NAME": "T2", "TABLECTL_FEED_DRAIN_TIMEOUT_S": "600"})
        assert done.returncode == 0, done.stderr[-2000:]
        lines = feed_lines(done.stderr)
        # Mosquitto answers "not authorised" or just closes: either way one line that names
        # the topics, and no "back"/"lost" line for each retry
        assert len(lines) == 2 and "tables/T2/#" in lines[0], lines
        assert "not delivered" in lines[1]
    finally:
        b.stop()


@pytest.mark.slow
def test_an_untrusted_broker_certificate_is_one_line_and_the_right_ca_works(tmp_path):
    need_mosquitto()
    try:
        tls = make_certificates(tmp_path / "pki")
        other = make_certificates(tmp_path / "other", name="other")
    except (FileNotFoundError, subprocess.CalledProcessError) as err:
        pytest.skip(f"openssl cannot make test certificates: {err}")
    b = Mosquitto(tmp_path / "broker", tls=tls).start()
    try:
        assert b.url.startswith("mqtts://")
        journal = tmp_path / "j.db"
        done = simulate(journal, b.url, {"TABLECTL_FEED_CA_FILE": str(other["ca"])})
        assert done.returncode == 0, done.stderr[-2000:]
        lines = feed_lines(done.stderr)
        assert len(lines) == 2 and "certificate" in lines[0] and "not trusted" in lines[0], lines
        # the whole journal owed goes out at once (a busy machine may need more than 5 s)
        again = simulate(journal, b.url, {"TABLECTL_FEED_CA_FILE": str(tls["ca"]),
                                          "TABLECTL_FEED_DRAIN_TIMEOUT_S": "30"})
        assert again.returncode == 0 and not feed_lines(again.stderr), again.stderr
        with Journal.open_readonly(journal) as j:
            assert delivered_all(j)
    finally:
        b.stop()


# ---------------------------------------------------------------------- the state view
def test_the_table_view_is_built_from_what_the_table_publishes(tmp_path):
    views = []
    view = TableView("T9", SimpleNamespace(game="punto_banco", name="macau"), views.append)
    view.on_event({"event": "status", "state": "betting", "shoe": 2, "round": 4})
    view.publish({"event": "round_result", "shoe": 2, "round": 4, "winner": "banker",
                  "player_total": 3, "banker_total": 8, "seq": 90, "bets": {}})
    view.publish({"event": "alarm", "source": "shoe", "code": "link_lost", "text": "x"})
    view.on_event({"event": "status", "state": "hold", "shoe": 2, "round": 5,
                   "hold": {"kind": "link_lost", "detail": "gone", "kinds": ["link_lost"]}})
    last = views[-1]
    assert last["state"] == "hold" and last["hold"]["kind"] == "link_lost"
    assert last["hold"]["since"] and last["links"] == {"shoe": "down"}
    assert last["last_result"] == {"shoe": 2, "round": 4, "winner": "banker",
                                   "player_total": 3, "banker_total": 8, "seq": 90}
    assert last["road"] == {"banker": 1}
    n = len(views)
    view.on_event({"event": "status", "state": "hold", "shoe": 2, "round": 5,
                   "hold": {"kind": "link_lost", "detail": "gone", "kinds": ["link_lost"]}})
    assert len(views) == n                     # nothing changed: nothing handed on
    # after a restart: the shoe's road and the hold's start come from the journal
    with Journal(tmp_path / "j.db") as j:
        j.append("shoe_started", {"event": "shoe_started", "shoe": 1})
        for k, w in enumerate(("player", "tie", "player"), 1):
            j.append("round_result", {"event": "round_result", "shoe": 1, "round": k,
                                      "winner": w})
        j.append("hold", {"event": "hold", "reason": "unreadable_card"})
        again = TableView("T9", SimpleNamespace(game="punto_banco", name="macau"), views.append)
        again.prime(j)
        hold_utc = list(j.records())[-1].utc
    assert again.road == {"player": 2, "tie": 1} and again.last_result["round"] == 3
    assert again.hold_since == hold_utc


def test_with_the_broker_away_the_feed_says_how_far_behind_it_is(tmp_path):
    import time

    from controller.feed.outbox import FloorFeed
    from tests.broker import free_port
    cursors, outlets = {}, {}
    with Journal(tmp_path / "j.db") as j:
        feed = FloorFeed(broker_from(FeedCfg(), url=f"mqtt://127.0.0.1:{free_port()}"), j,
                         table="T1", cursors=cursors, outlets=outlets,
                         private_kinds=PRIVATE_KINDS, drain_timeout_s=0.2).start()
        assert cursors == {CURSOR: 0} and j.cursor(CURSOR) == 0   # on disk before any deal
        for k in range(3):                 # the loop journals an input and its events
            j.append("input", {"type": "card"})
            seq = j.append("card", {"event": "card", "n": k})
            feed.publish({"event": "card", "n": k, "seq": seq})
        deadline = time.monotonic() + 5
        while outlets["feed"]["behind"] != 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        report = outlets["feed"]
        assert (report["behind"], report["connected"], report["acknowledged_seq"]) == (3, False, 0)
        assert report["problem"].startswith("nothing listens at mqtt://127.0.0.1:")
        feed.close()                       # waits drain_timeout_s, then leaves the cursor as is
        assert cursors[CURSOR] == 0


# ---------------------------------------------------------------------- result at reveal
def reveal_profile(tmp_path) -> Path:
    from controller.settings.profile import load_profile
    profile = tmp_path / "macau-reveal.toml"
    with open(load_profile("macau").path) as macau:
        profile.write_text(macau.read() + '\n[display]\nreveal = "on_reveal"\n')
    return profile


def hand_codes(result: dict) -> set:
    return {c for hand in ("player", "banker") for c in result.get(hand) or ()}


def test_under_on_reveal_the_feed_shows_nothing_of_a_round_before_its_reveal(tmp_path, broker):
    sub = Subscriber(broker, ["tables/#"], session="t-reveal")
    journal = tmp_path / "j.db"
    done = tablectl("simulate", "--profile", str(reveal_profile(tmp_path)), "--seed", "3",
                    "--shoes", "1", "--journal", str(journal), "--feed", broker.url, "--json")
    assert done.returncode == 0, done.stderr[-2000:]
    msgs = sub.wait_for(lambda m: any(t.endswith("/status") and p["status"] == "offline"
                                      for t, p, _ in m))
    sub.close()
    events = [p for t, p, _ in msgs if t == "tables/T1/events"]
    assert [e["seq"] for e in events] == [r.seq for r in public(journal)]   # every seq, in order
    journaled = {(r.data["shoe"], r.data["round"]): r.data for r in public(journal)
                 if r.kind == "round_result" and r.data.get("reveal") == "pending"}
    assert len(journaled) > 40
    before: list = []                  # what went out since the round started
    revealed = 0
    for e in events:
        if e["event"] == "round_started":
            before = []
        if e["event"] != "reveal":
            before.append(e)
            continue
        result = journaled[(e["shoe"], e["round"])]
        # the reveal carries the whole result; nothing before it named a card of its hands
        assert e["result"] == {k: v for k, v in result.items() if k != "reveal"}
        sent = json.dumps(before)
        assert not [c for c in hand_codes(result) if f'"{c}"' in sent], (e["round"], before)
        cards = [x for x in before if x["event"] == "card"]
        assert cards and all(x["code"] is None for x in cards)
        pending = [x for x in before if x["event"] == "round_result"]
        assert pending == [{"event": "round_result", "shoe": e["shoe"], "round": e["round"],
                            "game": "punto_banco", "reveal": "pending", "seq": pending[0]["seq"],
                            "schema_version": 1, "table": "T1",
                            "utc": pending[0]["utc"]}]
        revealed += 1
    assert revealed == len(journaled)
    state = [p for t, p, _ in msgs if t == "tables/T1/state"][-1]
    assert state["last_result"]["winner"]
    assert sum(state["road"].values()) == len([r for r in journaled.values()
                                               if not r.get("void")])


def test_the_feed_resumes_the_reveal_rule_from_any_position_in_the_journal(tmp_path, capsys):
    """After a reconnect or a restart the feed starts from its cursor: from every position the
    events it sends are those it sends reading from the start."""
    from controller.feed.public import PublicRecords
    journal = tmp_path / "j.db"
    assert main(["simulate", "--profile", str(reveal_profile(tmp_path)), "--seed", "5",
                 "--shoes", "1", "--journal", str(journal)]) == 0
    capsys.readouterr()
    with Journal.open_readonly(journal) as j:
        records = [r for r in j.records() if r.kind not in PRIVATE_KINDS]
        whole = PublicRecords(j, 0)
        sent = [whole.public(r.seq, r.data) for r in records]
        assert any(e["event"] == "card" and e["code"] is None for e in sent)
        assert any(e["event"] == "card" and e["code"] for e in sent)      # the shoe-start burn
        # positions around every kind of record the rule turns on, in the first rounds
        kinds = ("round_started", "card", "round_result", "reveal")
        cuts = [i for k in kinds for i in [n for n, r in enumerate(records)
                                            if r.kind == k][2:30:9]]
        cuts += [0, 1, len(records) - 2]
        for i in sorted(set(cuts)):
            again = PublicRecords(j, records[i].seq)
            end = min(len(records), i + 60)       # far enough to cross a reveal
            assert [again.public(r.seq, r.data) for r in records[i + 1:end]] == \
                sent[i + 1:end], i


def test_the_table_view_counts_a_result_from_its_reveal():
    views: list = []
    view = TableView("T9", SimpleNamespace(game="punto_banco", name="m", reveal="on_reveal"),
                     views.append)
    view.publish({"event": "shoe_started", "shoe": 1, "reveal": "on_reveal"})
    view.publish({"event": "round_started", "shoe": 1, "round": 1})
    view.publish({"event": "round_result", "shoe": 1, "round": 1, "winner": "player",
                  "reveal": "pending", "seq": 9})
    view.on_event({"event": "status", "state": "hold", "shoe": 1, "round": 1,
                   "hold": {"kind": "misplaced", "detail": "cards 9H KD on the wrong boxes"}})
    assert views[-1]["last_result"] is None and views[-1]["road"] == {}
    assert views[-1]["hold"]["detail"] == "cards ?? ?? on the wrong boxes"
    view.publish({"event": "reveal", "shoe": 1, "round": 1, "seq": 10})
    assert views[-1]["last_result"]["winner"] == "player" and views[-1]["road"] == {"player": 1}


def test_the_journals_anchors_reach_the_floor(tmp_path, broker, capsys):
    """The signed heads go out on the events topic: a copy off the table PC, which
    `verify-journal --last-anchor` can hold the journal to (the key made and the journal
    checked in this process: the table that signs and sends is the process under test)."""
    key = tmp_path / "anchor.key"
    assert main(["anchor-key", str(key)]) == 0
    sub = Subscriber(broker, ["tables/T1/events"], session="t-anchor")
    journal = tmp_path / "j.db"
    done = tablectl("simulate", "--profile", "macau", "--seed", "2", "--shoes", "1",
                    "--journal", str(journal), "--anchor-key", str(key), "--feed", broker.url)
    assert done.returncode == 0, done.stderr[-2000:]
    with Journal.open_readonly(journal) as j:
        anchors = [dict(r.data, seq=r.seq) for r in j.records(kinds=["anchor"])]
    assert {"records", "shoe_end", "stop"} <= {a["reason"] for a in anchors}
    msgs = sub.wait_for(lambda m: len([p for _, p, _ in m if p["event"] == "anchor"])
                        >= len(anchors))
    sub.close()
    sent = [{k: v for k, v in p.items() if k not in ("table", "utc", "schema_version")}
            for _, p, _ in msgs if p["event"] == "anchor"]
    assert sent == anchors
    last = tmp_path / "floor-anchors.jsonl"
    last.write_text("".join(json.dumps(a) + "\n" for a in sent))
    capsys.readouterr()
    checked = main(["verify-journal", "--journal", str(journal), "--key", str(key),
                    "--last-anchor", str(last)])
    assert checked == 0, capsys.readouterr()


def test_every_record_kind_the_code_journals_is_one_the_feed_schema_knows():
    """The floor store keeps aside what the schema does not list: a new event must be listed."""
    import re
    from controller.feed.schema import FEED_SCHEMA, OTHER_KINDS, RECORD_KINDS, record_problem
    emitted: set[str] = set()
    for path in (ROOT / "controller").rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        emitted |= set(re.findall(r'\bemit\(\s*"([a-z_]+)"', text))
    assert {"card", "round_result", "override", "hold", "shoe_started"} <= emitted
    assert emitted <= RECORD_KINDS[FEED_SCHEMA], emitted - RECORD_KINDS[FEED_SCHEMA]
    assert {"input", "auth", "note"} <= OTHER_KINDS
    good = {"schema_version": FEED_SCHEMA, "table": "T1", "seq": 3, "utc": "2026-01-01T00:00:00.000001Z",
            "mono": 1.5, "kind": "card", "data": {"event": "card"}, "hash": "a" * 64}
    assert record_problem(good, "T1") is None
    for change, words in (({"schema_version": 99}, "schema version 99"), ({"kind": "bogus"}, "kind 'bogus'"),
                          ({"seq": 0}, "seq 0"), ({"data": []}, "data is not"),
                          ({"data": {"event": "hold"}}, "whose data says"),
                          ({"hash": "x"}, "64 hex"), ({"utc": "yesterday"}, "ISO 8601")):
        assert words in record_problem({**good, **change}, "T1")
    assert "names table 'T1'" in record_problem(good, "T2")


def test_a_tables_pit_is_checked_with_its_config(tmp_path, monkeypatch):
    from controller.settings.config import ConfigError, load_config
    bad = tmp_path / "t.toml"
    bad.write_text('[table]\npit = "3/east"\n')
    with pytest.raises(ConfigError, match="table.pit: '3/east' is not a pit name"):
        load_config(bad)
    monkeypatch.setenv("TABLECTL_TABLE_PIT", "7")
    assert load_config(ROOT / "config" / "table.toml").table.pit == "7"


def test_a_stop_does_not_wait_out_the_back_off_of_a_broker_that_refuses_the_table(
        tmp_path, monkeypatch):
    import time

    from controller.feed.broker import Failure
    from controller.feed.outbox import FloorFeed
    from tests.broker import free_port
    with Journal(tmp_path / "j.db") as j:
        feed = FloorFeed(broker_from(FeedCfg(), url=f"mqtt://127.0.0.1:{free_port()}"), j,
                         table="T1", cursors={}, outlets={}, private_kinds=PRIVATE_KINDS,
                         drain_timeout_s=600, retry_max_s=600)
        tries: list[float] = []

        def refused() -> bool:          # what a wrong password or a refused topic does
            tries.append(time.monotonic())
            feed._fail(Failure("the broker refused user 't1'", lasting=True))
            return False
        monkeypatch.setattr(feed, "_session", refused)
        feed.start()
        deadline = time.monotonic() + 10
        while len(tries) < 3 and time.monotonic() < deadline:     # back-off 0.5 s, then 1 s
            time.sleep(0.02)
        assert len(tries) == 3
        feed.close()            # mid-way through a 2 s back-off: no more tries, no waiting
        assert len(tries) == 3 and feed._thread is None
