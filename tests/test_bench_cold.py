"""The cold-write benchmark writes card reads through the production journal in each rhythm
and says its figures (printed, never asserted as timings)."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import cold  # noqa: E402


def test_main_json_line(capsys, tmp_path):
    assert cold.main(["--writes", "2", "--journal-dir", str(tmp_path), "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out.strip().splitlines()[-1])
    assert doc["writes"] == 2 and list(doc["rhythms"]) == list(cold.RHYTHMS)
    for figures in doc["rhythms"].values():
        assert figures["journal_p50_us"] > 0 and figures["bare_p50_us"] > 0
    assert 0 < doc["on_cpu_share_p50"] <= 1.5
    assert "after a card" in captured.err and not list(tmp_path.iterdir())


def test_the_card_records_are_the_tables_shape():
    items = cold.card(0)
    assert [k for k, _ in items] == ["input", "card"]
    assert items[0][1]["type"] == "card" and next(iter(items[1][1])) == "event"


def test_bad_options_are_refused_in_one_line(capsys, tmp_path):
    assert cold.main(["--writes", "1"]) == 2
    assert cold.main(["--journal-dir", str(tmp_path / "none")]) == 2
    assert "no such directory" in capsys.readouterr().err
