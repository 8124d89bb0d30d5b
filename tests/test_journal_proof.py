"""Everything the table trusts at a restart is proven, and one table writes a journal.

- A snapshot rewritten and rehashed (no key needed to rehash it) is found by verify-journal and
  refused by run, with and without the anchor key; run never deals on it.
- A card edited anywhere in a journal, without rehashing, makes run exit 2 in one line naming
  the record, with and without the key (a signed checkpoint vouches for nothing after it was
  signed): checked before the table starts, or (a journal longer than [storage]
  verify_before_start) before its first card, and then nothing is dealt.
- A second run on a journal in use exits 2 before printing anything else, naming the first
  one's pid; the first deals on, and readers (recall, backup, verify-journal) work meanwhile.
The second writer, the table that deals on beyond the budget and one refused start are `tablectl`
processes of their own; the other refusals run the same command in this process (`here`), its
log's warnings counted among the lines it printed.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from controller.journal.chain import canonical, snapshot_hash
from controller.journal.codec import V4
from controller.journal import Journal
from controller.journal.proof import check_at_start
from tests.journalfile import data_of, rehash, stored_of

ROOT = Path(__file__).resolve().parents[1]
TABLECTL = str(ROOT / ".venv" / "bin" / "tablectl")


def env() -> dict:
    e = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    e["TABLECTL_STORAGE_FSYNC"] = "false"
    return e


def tablectl(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([TABLECTL, *args], capture_output=True, text=True, cwd=cwd,
                          env=env(), timeout=timeout)


@pytest.fixture
def here(tablectl_here):
    """`tablectl` in this process (tests/conftest.py)."""
    return tablectl_here


@pytest.fixture(scope="module")
def journals(tmp_path_factory):
    """A shoe dealt through the table's loop on simulated devices, with and without an anchor
    key (stopped cleanly: the latest snapshot and the stop's anchor are the journal's end)."""
    from controller.cli import main
    from controller.journal.anchor import make_key
    from tests.conftest import built_once
    with built_once(tmp_path_factory, "proof") as (where, todo):   # once for all workers
        key = where / "anchor.key"
        if todo:
            make_key(str(key))
        made = {}
        for name, extra in (("keyed", ["--anchor-key", str(key)]), ("plain", [])):
            path = where / f"{name}.db"
            if todo:
                with contextlib.redirect_stdout(io.StringIO()):
                    assert main(["simulate", "--profile", "macau", "--seed", "5", "--journal",
                                 str(path), *extra]) == 0
            made[name] = path
    return where, key, made


def _copy(journals, tmp_path, kind: str):
    where, key, made = journals
    path = tmp_path / "journal.db"
    shutil.copy(made[kind], path)
    extra = ["--anchor-key", str(key)] if kind == "keyed" else []
    verify = ["--key", str(key)] if kind == "keyed" else []
    return path, extra, verify


@pytest.fixture(params=["keyed", "plain"])
def journal(request, journals, tmp_path):
    return _copy(journals, tmp_path, request.param)


def records(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return db.execute("SELECT max(seq) FROM records").fetchone()[0]


def run_once(path: Path, extra: list[str], *more: str,
             via=tablectl) -> subprocess.CompletedProcess:
    return via("run", "--journal", str(path), "--no-control", "--pace", "0", "--shoes",
                    "1", "--json", *extra, *more, cwd=path.parent, timeout=120)


def refused_before_anything(done: subprocess.CompletedProcess, *names: str) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr[-2000:])
    assert done.stdout == "" and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr and "resumed" not in done.stderr
    for name in names:
        assert name in done.stderr, done.stderr
    return done.stderr


def test_a_snapshot_rewritten_and_rehashed_is_refused(journal, here):
    path, extra, verify = journal
    db = sqlite3.connect(path)
    sid, upto, utc, state = db.execute("SELECT id, upto_seq, utc, state FROM snapshots "
                                       "ORDER BY id DESC LIMIT 1").fetchone()
    forged = json.loads(state)
    assert forged["table"]["shoe_no"] == 1
    forged["table"]["shoe_no"] = 7              # as if shoe 7 were done: the next is shoe 8
    head = V4.hex(db.execute("SELECT hash FROM records WHERE seq = ?", (upto,)).fetchone()[0])
    db.execute("UPDATE snapshots SET state = ?, hash = ? WHERE id = ?",
               (json.dumps(forged), snapshot_hash(head, upto, utc, canonical(forged)), sid))
    db.commit()
    db.close()
    before = records(path)
    check = here("verify-journal", "--journal", str(path), *verify, cwd=path.parent)
    assert check.returncode == 1 and f"snapshot {sid} rejected" in check.stdout, check.stdout
    refused_before_anything(run_once(path, extra, via=here), "does not verify", f"snapshot {sid}",
                            "changed after it was taken")
    assert records(path) == before              # nothing written, nothing signed


def _edit_card(path: Path, where: float) -> int:
    """A card read changed to another card in place, its hash left as it was."""
    db = sqlite3.connect(path)
    # a card event: a record of its own, or (schema 5) folded into its read's input record
    cards = [(seq, kind, data_of(kind, data)) for seq, kind, data in db.execute(
        "SELECT seq, kind, data FROM records WHERE kind IN ('card', 'input') ORDER BY seq")]
    cards = [c for c in cards if c[1] == "card" or "card" in c[2]]
    seq, kind, data = cards[int(where * (len(cards) - 1))]
    event = data if kind == "card" else data["card"]
    event["code"] = "AS" if event["code"] != "AS" else "KD"
    db.execute("UPDATE records SET data = ? WHERE seq = ?", (stored_of(db, kind, data), seq))
    db.commit()
    db.close()
    return seq


@pytest.mark.parametrize("kind, where", [("plain", 0.0), ("plain", 0.5), ("keyed", 0.5),
                                         ("keyed", 1.0)])
def test_a_card_edited_anywhere_is_refused_before_the_table_starts(journals, tmp_path, kind,
                                                                   where, here):
    path, extra, verify = _copy(journals, tmp_path, kind)
    seq = _edit_card(path, where)
    before = records(path)
    check = here("verify-journal", "--journal", str(path), *verify, cwd=path.parent)
    assert check.returncode == 1 and f"chain broken at seq {seq}" in check.stdout
    # with the key the last anchor is a checkpoint, whose head an edit in place leaves as it
    # was: it vouches for nothing, and the start finds the edit as verify-journal does.
    # The first edit's refusal by a process of its own, the others' in this process
    via = tablectl if where == 0.0 else here
    refused_before_anything(run_once(path, extra, via=via), "does not verify",
                            f"chain broken at seq {seq}")
    assert records(path) == before


def test_a_tail_cut_inside_an_input_s_records_is_refused_as_a_cut(journal, here):
    """The journal's last records deleted with the sqlite3 shell, the cut between a card read
    and the round's result it caused (the snapshots after it with them): no crash ends a
    journal there (an input and its events are one transaction). The start refuses it in one
    line saying the tail was cut, not that the journal and the release disagree."""
    path, extra, _ = journal
    db = sqlite3.connect(path)
    kinds = db.execute("SELECT seq, kind FROM records ORDER BY seq").fetchall()
    cut = next(seq for (seq, kind), (_, after) in zip(reversed(kinds[:-1]), reversed(kinds[1:]))
               if kind == "input" and after == "round_result")
    db.execute("DELETE FROM records WHERE seq > ?", (cut,))
    db.execute("DELETE FROM snapshots WHERE record_seq > ?", (cut,))
    db.commit()
    db.close()
    refused_before_anything(run_once(path, extra, via=here), f"ends inside input seq {cut}",
                            "its tail was cut", "tablectl new-journal")
    # verify-journal finds it too: the chain's links all hold, the replay of its tail does not
    _, _, verify = journal
    check = here("verify-journal", "--journal", str(path), *verify, cwd=path.parent)
    assert check.returncode == 1, check.stdout
    assert f"ends inside input seq {cut}" in check.stdout and "its tail was cut" in check.stdout
    assert check.stdout.count("\n") == 1


def _last_anchor(path: Path) -> tuple[int, dict]:
    with Journal.open_readonly(path) as j:
        last = j.last_record("anchor")
    return last.seq, last.data


def test_a_signed_checkpoint_leaves_the_records_before_it_to_the_start_check(journals,
                                                                            tmp_path):
    """The last anchor is a checkpoint (its signer had proven the chain up to it): the start
    still checks the records before it, the part it leaves within the budget at once, beyond
    it before the first card."""
    from controller.journal.anchor import load_key
    path, _, _ = _copy(journals, tmp_path, "keyed")
    where, key, _ = journals
    seq, anchor = _last_anchor(path)
    assert anchor["verified"] == anchor["upto_seq"] == seq - 1     # the stop's: a checkpoint
    with Journal(path) as j:
        check = check_at_start(j, load_key(str(key)), budget=None)
        # at once: from what the restart builds on (the stop's snapshot) to the end, then
        # the rest, all of it
        assert check.checkpoint == seq and check.checked_after == check.snapshot.upto_seq
        assert check.pending == 0
        left = check_at_start(j, load_key(str(key)), budget=10)
    # beyond the budget the rest waits for the first card: from the first record, not from
    # the checkpoint
    assert left.rest_after == 0 and left.pending == check.snapshot.upto_seq


@pytest.mark.parametrize("forgery", ["claim moved", "claim removed"])
def test_a_forged_checkpoint_is_refused(journals, tmp_path, forgery, here):
    """The last anchor's claim changed without the key (and the chain made whole again)."""
    path, extra, verify = _copy(journals, tmp_path, "keyed")
    seq, anchor = _last_anchor(path)
    if forgery == "claim moved":
        anchor["verified"] = anchor["upto_seq"] - 1
    else:
        del anchor["verified"]
    db = sqlite3.connect(path)
    db.execute("UPDATE records SET data = ? WHERE seq = ?",
               (stored_of(db, "anchor", anchor), seq))
    tail = db.execute("SELECT seq, utc, mono, kind, data FROM records WHERE seq >= ? "
                      "ORDER BY seq", (seq,)).fetchall()
    prev, = db.execute("SELECT hash FROM records WHERE seq = ?", (seq - 1,)).fetchone()
    rehash(db, [list(r) for r in tail], prev)          # the chain itself made whole again
    db.commit()
    db.close()
    check = here("verify-journal", "--journal", str(path), *verify, cwd=path.parent)
    assert check.returncode == 1 and f"anchor at seq {seq}" in check.stdout, check.stdout
    refused_before_anything(run_once(path, extra, via=here), "does not verify",
                            f"anchor at seq {seq}")


def test_a_stale_checkpoint_is_refused(journals, tmp_path, here):
    """A checkpoint whose head the journal no longer has (the records before it rewritten and
    rehashed): the start refuses it."""
    path, extra, _ = _copy(journals, tmp_path, "keyed")
    seq, anchor = _last_anchor(path)
    db = sqlite3.connect(path)
    rows = db.execute("SELECT seq, utc, mono, kind, data FROM records ORDER BY seq").fetchall()
    rows = [list(r) for r in rows]
    card = next(r for r in reversed(rows) if r[0] < seq and (
        r[3] == "card" or r[3] == "input" and "card" in data_of("input", r[4])))
    data = data_of(card[3], card[4])
    event = data if card[3] == "card" else data["card"]
    event["code"] = "AS" if event["code"] != "AS" else "KD"
    card[4] = stored_of(db, card[3], data)
    rehash(db, rows)
    db.commit()
    db.close()
    refused_before_anything(run_once(path, extra, via=here), "does not verify",
                            "the chain was rewritten")


def test_beyond_the_budget_the_rest_is_checked_before_the_first_card(journals, tmp_path, here):
    """A long journal starts at once; its older records are checked while the table waits,
    and one that does not verify stops it with nothing dealt (no checkpoint vouches for them:
    no key)."""
    path, extra, _ = _copy(journals, tmp_path, "plain")
    seq = _edit_card(path, 0.1)
    config = tmp_path / "table.toml"
    config.write_text("[storage]\nverify_before_start = 10\n")
    before = records(path)
    done = here("run", "--config", str(config), "--journal", str(path), "--no-control",
                "--pace", "0", "--shoes", "1", "--json", *extra, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.splitlines()
    assert "resumed" in lines[0].lower() and "older records are checked before the first card" in lines[0]
    assert len(lines) == 2 and f"chain broken at seq {seq}" in lines[1], done.stderr
    printed = [json.loads(x) for x in done.stdout.splitlines()]
    assert printed and all(e["event"] == "prompt" for e in printed)        # nothing dealt
    assert printed[0]["condition"] == "journal_check"
    assert records(path) == before


def test_beyond_the_budget_a_journal_that_verifies_deals_on(journals, tmp_path):
    path, extra, verify = _copy(journals, tmp_path, "plain")
    config = tmp_path / "table.toml"
    config.write_text("[storage]\nverify_before_start = 10\n")
    before = records(path)
    table = subprocess.Popen(
        [TABLECTL, "run", "--config", str(config), "--journal", str(path), "--no-control",
         "--pace", "0", "--json", *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=tmp_path, env=env())
    try:
        printed = []
        while not any(e["event"] == "card" for e in printed):
            printed += _lines(table, 1)
    finally:
        table.send_signal(signal.SIGTERM)
        out, err = table.communicate(timeout=60)
    assert table.returncode == 0, err[-2000:]
    assert printed[0]["event"] == "prompt" and printed[0]["condition"] == "journal_check"
    check = tablectl("verify-journal", "--journal", str(path), *verify, cwd=tmp_path)
    assert check.returncode == 0 and records(path) > before, check.stdout


def _lines(proc: subprocess.Popen, n: int, timeout: float = 60) -> list[dict]:
    got, end = [], time.monotonic() + timeout
    while len(got) < n and time.monotonic() < end:
        line = proc.stdout.readline()
        if not line:
            break
        got.append(json.loads(line))
    assert len(got) == n, (got[-3:], proc.poll())
    return got


def test_a_second_writer_exits_2_before_printing_anything(tmp_path):
    path = tmp_path / "journal.db"
    first = subprocess.Popen(
        [TABLECTL, "run", "--journal", str(path), "--no-control", "--pace", "0.02", "--seed",
         "9", "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=tmp_path, env=env())
    try:
        _lines(first, 30)
        second = tablectl("run", "--journal", str(path), "--no-control", "--pace", "0",
                          "--json", cwd=tmp_path)
        refused_before_anything(second, "in use by", f"pid {first.pid}")
        third = tablectl("simulate", "--profile", "macau", "--seed", "1", "--journal",
                         str(path), "--json", cwd=tmp_path)
        refused_before_anything(third, f"pid {first.pid}")
        # readers are not writers: they work while the table deals
        assert tablectl("recall", "--journal", str(path), "--last", "1",
                        cwd=tmp_path).returncode == 0
        assert tablectl("verify-journal", "--journal", str(path), cwd=tmp_path).returncode == 0
        backup = tablectl("backup", "--journal", str(path), str(tmp_path / "copy.db"),
                          cwd=tmp_path)
        assert backup.returncode == 0, backup.stderr
        more = _lines(first, 30)                # the first table is untouched: it deals on
        assert any(e["event"] == "card" for e in more)
    finally:
        first.send_signal(signal.SIGTERM)
        out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err[-2000:]
    check = tablectl("verify-journal", "--journal", str(path), cwd=tmp_path)
    assert check.returncode == 0 and "chain intact" in check.stdout, check.stdout
    # the lock went with its holder: another writer may open the journal at once
    from controller.journal import Journal
    Journal(path).close()


def test_recall_audit_report_and_roads_say_when_the_journal_does_not_verify(journals, tmp_path,
                                                                           capsys, monkeypatch):
    from controller.cli import main
    # the report's pages are not what this is about: its check comes before them
    monkeypatch.setattr("controller.report.render.write_html", lambda report, out, lang: 0)
    path, _, _ = _copy(journals, tmp_path, "plain")
    for argv in (["recall", "--last", "2"], ["audit"], ["roads", "--json"]):
        assert main([*argv, "--journal", str(path)]) == 0
        assert "does not verify" not in capsys.readouterr().err
    seq = _edit_card(path, 0.3)
    for argv in (["recall", "--last", "2"], ["audit"], ["roads", "--json"],
                 ["report", "--output", str(tmp_path / "r.html")]):
        assert main([*argv, "--journal", str(path)]) == 1, argv
        out = capsys.readouterr()
        warning = [x for x in out.err.splitlines() if "does not verify" in x]
        assert len(warning) == 1 and f"chain broken at seq {seq}" in warning[0], out.err
        assert "Traceback" not in out.err and out.out     # and it still shows what is there


if sys.platform != "linux":         # flock and the process checks are Linux's
    pytestmark = pytest.mark.skip("Linux only")


def test_the_simulated_devices_state_is_its_owners_alone(journals):
    """Beside a simulated table's journal its devices keep their state, the whole shoe's order
    among it: nobody else may read it."""
    import stat as st_
    _, _, made = journals
    state = Path(f"{made['plain']}.devices.json")
    assert state.exists() and st_.S_IMODE(os.stat(state).st_mode) == 0o600
