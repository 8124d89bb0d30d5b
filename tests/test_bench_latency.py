"""The latency benchmark runs and decides every card it feeds (figures are printed, not asserted)."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import latency  # noqa: E402


def test_table_pass_decides_every_card(tmp_path):
    rig = latency.Rig("shoesim", "beetek", latency.shoe_order(8, 30))
    try:
        res = latency.run(rig, "table", 0.0, str(tmp_path))
    finally:
        rig.close()
    assert len(res.latencies) == len(res.ctl) == len(res.journal) == 30


def test_main_smoke(capsys):
    assert latency.main(["--cards", "20", "--protocol", "beetek", "--transport", "shoesim",
                         "--table-pace-ms", "0"]) == 0
    assert "added p99" in capsys.readouterr().out
