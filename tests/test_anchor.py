"""A journal that proves itself: anchors signed with a key only the service reads, checked by
`verify-journal --key` and by `run` at start; the files' modes; read-only copies; a manager's
new journal."""
from __future__ import annotations

import io
import json
import os
import re
import shutil
import socket
import sqlite3
import stat
import tempfile
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from controller.access.accounts import AccountStore, ScryptParams
from controller.cli import main
from controller.journal import Journal
from controller.journal.anchor import EVERY, Anchoring, load_key, make_key
from controller.journal.proof import check_at_start
from controller.journal.chain import GENESIS
from controller.journal.codec import V4
from tests.journalfile import data_of, rehash

ROOT = Path(__file__).resolve().parents[1]
CONFIG = str(ROOT / "config" / "table.toml")
# one worker runs the module, so that its shoe is dealt once (`--dist loadgroup`)
pytestmark = pytest.mark.xdist_group("anchored_journal")


@pytest.fixture(scope="module")
def anchored(tmp_path_factory):
    """One shoe through `tablectl simulate` with an anchor key: the journal, the key, and the
    anchor events it printed (what a floor feed would have carried off the table PC)."""
    where = tmp_path_factory.mktemp("anchored")
    key = str(where / "anchor.key")
    assert main(["anchor-key", key]) == 0
    journal = where / "journal.db"
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["simulate", "--profile", "macau", "--seed", "3", "--journal",
                     str(journal), "--anchor-key", key, "--json"]) == 0
    printed = [json.loads(line) for line in out.getvalue().splitlines()]
    return journal, key, [e for e in printed if e["event"] == "anchor"]


@pytest.fixture
def copy(anchored, tmp_path):
    journal, key, events = anchored
    shutil.copy(journal, tmp_path / "journal.db")
    return tmp_path / "journal.db", key, events


def verify(journal, *more) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        rc = main(["verify-journal", "--journal", str(journal), *more])
    return rc, out.getvalue().strip()


def one_line_exit_2(capsys, argv) -> str:
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def rewrite(path: Path, edit) -> None:
    """What someone with the file and no key can do: change the records with `edit(rows)`
    (a list of [seq, utc, mono, kind, data]), renumber them 1…n and recompute every hash."""
    db = sqlite3.connect(path)
    rows = [list(r) for r in db.execute("SELECT seq, utc, mono, kind, data FROM records "
                                        "ORDER BY seq")]
    rows = edit(rows)
    db.execute("DELETE FROM records")
    rehash(db, [(seq, *row[1:]) for seq, row in enumerate(rows, 1)])
    db.execute("DELETE FROM snapshots")         # they would give it away too
    db.commit()
    db.close()


def test_the_service_anchors_every_shoe_end_every_n_records_and_at_stop(anchored):
    journal, key, events = anchored
    with Journal.open_readonly(journal) as j:
        records = list(j.records())
    anchors = [r for r in records if r.kind == "anchor"]
    assert [a.data["reason"] for a in anchors][-2:] == ["shoe_end", "stop"]
    assert "records" in [a.data["reason"] for a in anchors]
    assert records[-1].kind == "anchor"                      # the stop signed the very end
    gaps = [b.seq - a.seq for a, b in zip([records[0], *anchors], anchors)]
    assert max(gaps) <= EVERY + 50                           # an input's records at most
    ended = [r.seq for r in records if r.kind == "shoe_ended"]
    assert all(any(0 < a.seq - s < 20 for a in anchors) for s in ended)
    # published as they were journaled: what a floor feed carries off the table PC
    assert [(e["seq"], e["mac"]) for e in events] == [(a.seq, a.data["mac"]) for a in anchors]
    assert verify(journal, "--key", key) == (0, verify(journal, "--key", key)[1])
    assert "anchor(s) verified with the key" in verify(journal, "--key", key)[1]
    # without the key the anchors prove nothing, and the check says so
    rc, said = verify(journal)
    assert rc == 0 and said.endswith(f"; {len(anchors)} anchors not checked (give the anchor "
                                     f"key: --key FILE)"), said


def change_a_result(rows):
    row = next(r for r in rows if r[3] == "round_result")
    data = data_of("round_result", row[4])
    data["winner"] = "player" if data["winner"] != "player" else "banker"
    row[4] = V4.prepare("round_result", data)[0]
    return rows


def test_a_rewritten_chain_fails_verify_with_the_key_and_run_refuses_it(copy, capsys):
    journal, key, _ = copy
    rewrite(journal, change_a_result)
    # the chain alone cannot tell (its links hold); without the key only the replay of what a
    # restart replays finds a result the cards do not give
    rc, text = verify(journal)
    assert rc == 1 and "chain intact" not in text and "does not give the events" in text, text
    rc, text = verify(journal, "--key", key)
    assert rc == 1 and "the chain was rewritten" in text
    err = one_line_exit_2(capsys, ["run", "--config", CONFIG, "--journal", str(journal),
                                   "--anchor-key", key, "--no-control", "--shoes", "1"])
    assert "does not verify" in err and "tablectl new-journal" in err


def test_a_deleted_round_renumbered_fails_verify_with_the_key(copy):
    journal, key, _ = copy

    def drop_first_round(rows):
        at = next(i for i, r in enumerate(rows) if r[3] == "round_result")
        start = max(i for i in range(at) if rows[i][3] == "input")
        return rows[:start] + rows[at + 1:]

    rewrite(journal, drop_first_round)
    # the chain's links hold; without the key only the replay finds that the cards after the
    # gap do not give the events journaled with them
    rc, text = verify(journal)
    assert rc == 1 and "chain intact" not in text and "does not give the events" in text, text
    rc, text = verify(journal, "--key", key)
    assert rc == 1 and "removed or renumbered" in text


def test_a_cut_tail_fails_against_the_anchor_kept_off_the_table_pc(copy, tmp_path):
    journal, key, events = copy
    kept = tmp_path / "feed.jsonl"
    kept.write_text("".join(json.dumps(e) + "\n" for e in events))
    last_but_one = events[-2]["seq"]
    db = sqlite3.connect(journal)
    db.execute("DELETE FROM records WHERE seq > ?", (last_but_one,))
    db.execute("DELETE FROM snapshots WHERE upto_seq > ?", (last_but_one,))
    db.commit()
    db.close()
    assert verify(journal, "--key", key)[0] == 0      # what the file alone cannot show
    rc, text = verify(journal, "--key", key, "--last-anchor", str(kept))
    assert rc == 1 and "its tail was cut" in text
    assert verify(journal.parent.parent / "x", "--key", key)[0] == 2


def test_a_wrong_key_fails_and_a_journal_without_anchors_fails_with_a_key(copy, tmp_path):
    journal, key, _ = copy
    other = make_key(str(tmp_path / "other.key"))
    rc, text = verify(journal, "--key", other.path)
    assert rc == 1 and "signed with another key" in text
    plain = Journal(tmp_path / "plain.db")
    plain.append("note", {"x": 1})
    plain.close()
    rc, text = verify(tmp_path / "plain.db", "--key", key)
    assert rc == 1 and "no anchor" in text


def test_run_refuses_an_anchored_journal_without_its_key_and_a_readable_key(copy, capsys,
                                                                           tmp_path):
    journal, key, _ = copy
    err = one_line_exit_2(capsys, ["run", "--config", CONFIG, "--journal", str(journal),
                                   "--no-control", "--shoes", "1"])
    assert "give its key" in err
    loose = tmp_path / "loose.key"
    shutil.copy(key, loose)
    os.chmod(loose, 0o644)
    err = one_line_exit_2(capsys, ["verify-journal", "--journal", str(journal), "--key",
                                   str(loose)])
    assert "chmod 600" in err
    loose.write_text("not a key\n")
    os.chmod(loose, 0o600)
    assert "not an anchor key" in one_line_exit_2(capsys, [
        "simulate", "--profile", "classic", "--seed", "1", "--anchor-key", str(loose)])


def test_start_check_without_a_key_covers_the_chain_since_the_latest_snapshot(tmp_path):
    j = Journal(tmp_path / "j.db")
    for i in range(5):
        j.append("note", {"i": i})
    j.snapshot({"format": 2}, 3)
    check_at_start(j, None)
    j.close()
    db = sqlite3.connect(tmp_path / "j.db")
    db.execute("UPDATE records SET data = '{\"i\": 9}' WHERE seq = 5")
    db.commit()
    db.close()
    with Journal(tmp_path / "j.db") as again:
        with pytest.raises(Exception, match="does not verify: chain broken at seq 5"):
            check_at_start(again, None)


def test_anchoring_signs_only_a_new_head(tmp_path):
    key = make_key(str(tmp_path / "k"))
    j = Journal(tmp_path / "j.db")
    a = Anchoring(j, key)
    assert a.sign("start") is None                   # nothing to sign yet
    j.append("note", {"i": 1})
    first = a.sign("records")
    assert first["n"] == 1 and first["upto_seq"] == 1 and first["prev"] == GENESIS
    assert a.sign("stop") is None and a.unanchored == 0
    j.append("note", {"i": 2})
    again = Anchoring(j, key)                        # a restart picks up where it was
    second = again.sign("stop")
    assert (second["n"], second["prev"]) == (2, first["mac"])
    check_at_start(j, key)
    j.close()
    assert "AnchorKey" in repr(load_key(key.path)) and key.secret.hex() not in repr(key)


def test_files_are_0640_for_the_journal_and_0600_for_users_and_key(tmp_path):
    old = os.umask(0o022)
    try:
        j = Journal(tmp_path / "j.db")
        j.append("note", {"i": 1})
        modes = {side: stat.S_IMODE(os.stat(f"{tmp_path}/j.db{side}").st_mode)
                 for side in ("", "-wal", "-shm")}
        j.close()
        AccountStore(tmp_path / "users.db", kdf=ScryptParams(n=2 ** 4, r=1, p=1))
        key = make_key(str(tmp_path / "k"))
        loose = tmp_path / "loose.db"
        shutil.copy(tmp_path / "j.db", loose)
        os.chmod(loose, 0o666)
        Journal(loose).close()                       # an existing one is brought to 0640
    finally:
        os.umask(old)
    assert modes == {"": 0o640, "-wal": 0o640, "-shm": 0o640}
    assert stat.S_IMODE(os.stat(tmp_path / "users.db").st_mode) == 0o600
    assert stat.S_IMODE(os.stat(key.path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(loose).st_mode) == 0o640


def _as_nobody(fn) -> int:
    """fn() in a child process that may not write the files (root may write anything)."""
    if os.geteuid() != 0:
        return fn()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                     # the child: nobody
        os.close(r)
        code = 99
        try:
            os.setgid(65534)
            os.setuid(65534)
            code = fn()
        except BaseException as err:          # said on stderr: the parent sees only a code
            os.write(2, f"as nobody: {err!r}\n".encode())
        finally:
            os.write(w, bytes([code]))
            os._exit(0)
    os.close(w)
    got = os.read(r, 1)
    os.close(r)
    os.waitpid(pid, 0)
    return got[0] if got else 98


def test_verify_and_recall_read_a_read_only_copy(anchored, tmp_path):
    journal, key, _ = anchored
    top = Path(tempfile.mkdtemp(prefix="ro", dir="/tmp"))    # pytest's own is owner-only
    os.chmod(top, 0o755)
    ro = top / "ro"
    ro.mkdir()
    shutil.copy(journal, ro / "journal.db")
    shutil.copy(key, ro / "anchor.key")
    os.chmod(ro / "journal.db", 0o444)
    os.chmod(ro / "anchor.key", 0o400)
    os.chmod(ro, 0o555)
    if os.geteuid() == 0:
        os.chown(ro / "anchor.key", 65534, 65534)   # the verifier's own copy of the key

    def read_it(where: Path = ro) -> int:
        out = io.StringIO()
        with redirect_stdout(out):
            a = main(["verify-journal", "--journal", str(where / "journal.db"), "--key",
                      str(where / "anchor.key")])
            b = main(["recall", "--journal", str(where / "journal.db"), "--last", "2"])
        if (a, b) == (0, 0) and "=== Shoe 1, round" in out.getvalue():
            return 0
        os.write(2, f"as nobody: {a}, {b}: {out.getvalue()[-500:]}\n".encode())
        return 1

    here = tmp_path / "here"            # first as ourselves: every module is loaded before
    here.mkdir()                        # the child, which may not read the interpreter's files
    shutil.copy(journal, here / "journal.db")
    shutil.copy(key, here / "anchor.key")
    assert read_it(here) == 0
    try:
        assert _as_nobody(read_it) == 0
        assert sorted(os.listdir(ro)) == ["anchor.key", "journal.db"]   # nothing written
    finally:
        os.chmod(ro, 0o755)
        shutil.rmtree(top, ignore_errors=True)


def test_a_manager_retires_a_refused_journal_and_starts_a_new_one(copy, tmp_path, capsys,
                                                                 monkeypatch):
    journal, key, _ = copy
    rewrite(journal, change_a_result)
    users = tmp_path / "users.db"
    # cheap, and never re-hashed by the command's store (r above its default's)
    store = AccountStore(users, kdf=ScryptParams(n=2 ** 4, r=16, p=1))
    store.bootstrap("mia", "manager-pin-1")
    store.add("ann", "dealer", "dealer-pin-1", by="mia")
    monkeypatch.setenv("TABLECTL_PIN", "dealer-pin-1")
    base = ["new-journal", "--journal", str(journal), "--db", str(users), "--anchor-key", key,
            "--reason", "anchors do not match; kept for the regulator"]
    assert main(base + ["--as", "ann"]) == 1                 # a dealer may not
    monkeypatch.setenv("TABLECTL_PIN", "manager-pin-1")
    live = Path(tempfile.mkdtemp(prefix="nj", dir="/tmp")) / "ctl.sock"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as running:
        running.bind(str(live))
        running.listen(1)
        monkeypatch.setenv("TABLECTL_CONSOLE_SOCKET", str(live))
        assert main(base + ["--as", "mia"]) == 2             # not under a running table
    shutil.rmtree(live.parent)
    assert main(base + ["--as", "mia"]) == 0
    retired = [p for p in os.listdir(tmp_path)
               if re.fullmatch(r"journal\.db\.retired-\d{8}T\d{6}Z", p)]
    assert len(retired) == 1                # its -wal and -shm, if any, went with it
    with Journal.open_readonly(journal) as j:
        first, anchor = list(j.records())
    assert first.data["event"] == "new_journal" and first.data["by"] == "mia"
    assert "the chain was rewritten" in first.data["previous_check"]
    assert anchor.kind == "anchor"
    rc, _ = verify(journal, "--key", key)
    assert rc == 0
    with Journal(journal) as j:
        check_at_start(j, load_key(key))


def test_anchors_of_a_journal_whose_older_days_were_archived(copy):
    """`tablectl archive` moves older records out (the last one stays as the link): the anchors
    left are checked from the first of them, and the start check from there."""
    from controller.journal.anchor import verify_anchors
    journal, key, events = copy
    cut = events[0]["seq"] + 1                      # the first anchor goes with the archive
    db = sqlite3.connect(journal)
    db.execute("DELETE FROM records WHERE seq < ?", (cut,))
    db.execute("DELETE FROM snapshots WHERE upto_seq <= ?", (cut,))
    db.commit()
    db.close()
    with Journal(journal) as j:
        report = verify_anchors(j, load_key(key))
        assert report.ok and report.anchors == len(events) - 1, report
        check_at_start(j, load_key(key))
    db = sqlite3.connect(journal)                   # a result changed after the cut still shows
    seq, data = db.execute("SELECT seq, data FROM records WHERE kind = 'round_result' AND "
                           "seq > ? ORDER BY seq LIMIT 1", (cut,)).fetchone()
    rows = db.execute("SELECT seq, utc, mono, kind, data FROM records WHERE seq >= ? "
                      "ORDER BY seq", (seq,)).fetchall()
    head = db.execute("SELECT hash FROM records WHERE seq = ?", (seq - 1,)).fetchone()[0]
    rehash(db, [[n, utc, mono, kind, text.replace('"winner":"', '"winner":"x', 1)
                 if n == seq else text] for n, utc, mono, kind, text in rows], head)
    db.commit()
    db.close()
    with Journal(journal) as j:
        assert j.verify(after_seq=cut, snapshots=False).ok  # the chain alone cannot tell
        assert "the chain was rewritten" in str(verify_anchors(j, load_key(key)))
