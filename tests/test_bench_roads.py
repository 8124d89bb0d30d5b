"""bench/roads.py runs, and the incremental roads stay well ahead of recomputing them."""
import importlib.util
from pathlib import Path

spec = importlib.util.spec_from_file_location(
    "bench_roads", Path(__file__).resolve().parents[1] / "bench" / "roads.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_roads_bench_small():
    out = bench.bench_roads(bench.dealt_shoes(4, seed=1))
    assert out["shoes"] == 4 and out["rounds"] > 200
    assert 0 < out["add_us_per_round"] < out["scratch_us_per_round"]
    assert bench.bench_publish(500)["publish_us_per_event"] > 0
