"""bench/memory.py runs against the real simulate and reads its memory at both points."""
import importlib.util
from pathlib import Path

spec = importlib.util.spec_from_file_location(
    "bench_memory", Path(__file__).resolve().parents[1] / "bench" / "memory.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def test_memory_bench_reads_simulate_at_both_points():
    out = bench.one_run("classic", seed=2, few=1, many=2, journal=None)
    assert out["rss_few_mb"] > 10 and out["rss_many_mb"] > 10
    assert out["ratio"] == round(out["rss_many_mb"] / out["rss_few_mb"], 3) or \
        abs(out["ratio"] - out["rss_many_mb"] / out["rss_few_mb"]) < 0.01
    assert out["hwm_mb"] >= out["rss_many_mb"]


def test_the_table_process_leaves_rich_unloaded_and_importable():
    """structlog's optional rich (pretty tracebacks, ~5 MB resident) is not loaded by the
    table's entry point, and stays importable for whatever asks for it."""
    import subprocess
    import sys
    code = ("import sys, controller.cli, controller.commands.run; "
            "print('rich' in sys.modules); import rich, structlog; print(structlog.get_logger())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1])
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "False"
