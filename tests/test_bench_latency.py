"""The latency benchmark runs the production path (ShoeSource thread → TableService → journal
→ publishers, as `tablectl run` wires it) and decides every card it feeds; its figures are
printed, not asserted."""
import json
import os
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import latency  # noqa: E402

CARDS = 24


@pytest.fixture
def quick_disk(tmp_path, monkeypatch):
    """A folder on tmpfs where there is one: its writes are quicker than the 2 ms between the
    test's cards, so each card is written by the loop itself, alone or after a bare commit, as
    at a table's pace (on a slower disk the journal's writer thread takes cards together; a
    loaded machine's slow write is not handed over either, whatever came meanwhile)."""
    from controller.service import batches
    monkeypatch.setattr(batches, "HAND_OVER_S", 60.0)
    if not os.access("/dev/shm", os.W_OK):
        yield tmp_path
        return
    with tempfile.TemporaryDirectory(dir="/dev/shm", prefix="bench-latency-") as where:
        yield Path(where)


@pytest.mark.parametrize("transport", ["pty", "shoesim"])
def test_table_pass_decides_every_card(quick_disk, transport):
    tmp_path = quick_disk
    rig = latency.Rig(transport, "beetek", latency.shoe_order(8, CARDS))
    try:
        res = latency.run(rig, "table", 0.002, str(tmp_path), bare=True)
    finally:
        rig.close()
    assert res.decided == CARDS
    # a card is written alone (the table's figures), or after one written alone with the bare
    # commit of its rows made first, where the journal writes (the bare figure): every other
    # card, unless the loop is still busy with a card when the shoe's thread readies the next
    assert res.measured + len(res.bare) == CARDS and res.measured >= CARDS // 2 and res.bare
    for part in (res.latencies, res.added, res.queue, res.apply, res.journal, res.publish):
        assert len(part) == res.measured
    # halfway between two reads, on the shoe's thread, once the loop has written a card alone:
    # how many of the shoe's gaps come after that is the machine's speed, not the bench's
    assert len(res.bare_idle) <= CARDS
    assert all(x >= 0 for x in res.added + res.journal + res.bare + res.bare_idle)
    assert res.rate > 0
    assert not list(tmp_path.iterdir())         # the journal's directory was cleaned up


def test_table_pass_uses_the_service_and_a_durable_journal(tmp_path, monkeypatch):
    """The cards go through TableService.process and a durable append_many each, not around it."""
    from controller.journal import Journal
    from controller.service.loop import TableService
    processed, durable_writes = [], []
    process, stage = TableService._process, Journal.stage

    def spy_process(self, inp):
        processed.append(inp.type)
        return process(self, inp)

    def spy_stage(self, items, *, durable=False, cursors=None):
        items = list(items)
        if items and items[0][1].get("type") == "card":
            durable_writes.append(durable)
        return stage(self, items, durable=durable, cursors=cursors)

    monkeypatch.setattr(TableService, "_process", spy_process)
    monkeypatch.setattr(Journal, "stage", spy_stage)
    rig = latency.Rig("pty", "beetek", latency.shoe_order(8, 10))
    try:
        res = latency.run(rig, "table", 0.0, str(tmp_path))
    finally:
        rig.close()
    assert res.decided == 10
    assert processed.count("card") == 10 and processed[0] == "command"     # new_shoe first
    assert durable_writes == [True] * 10


def test_main_json_line(capsys):
    assert latency.main(["--cards", "16", "--protocol", "beetek", "--transport", "pty",
                         "--table-pace-ms", "2", "--pace-ms", "0", "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out.strip().splitlines()[-1])
    for key in ("added_p50_ms", "added_p99_ms", "journal_p50_ms", "journal_p99_ms",
                "bare_sqlite_p50_ms", "bare_sqlite_p99_ms", "journal_vs_bare_p99",
                "cards_per_s"):
        assert isinstance(doc[key], (int, float)), key
    assert doc["path"] == "pty/beetek"
    assert doc["targets"] == {"added_p99_ms": 1.0, "journal_vs_bare_p50": 1.5,
                              "journal_vs_bare_p99": 1.5}
    assert doc["cards_measured"] + doc["bare_commits"] == 16
    assert isinstance(doc["added_target_met"], bool)
    assert [r["cards"] for r in doc["runs"]] == [16]
    assert "added p99" in captured.err and "bare" in captured.err     # the tables, on stderr


def test_main_tables_on_stdout(capsys):
    assert latency.main(["--cards", "12", "--protocol", "beetek", "--transport", "shoesim",
                         "--table-pace-ms", "1", "--pace-ms", "0"]) == 0
    out = capsys.readouterr().out
    assert "added p99" in out and "journal" in out and "bare" in out
    assert "targets: added p99 <= 1 ms" in out
