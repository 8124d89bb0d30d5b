"""Helpers to read the golden cases in tests/data/golden (or $TABLECTL_GOLDEN)."""
import json
import os
from pathlib import Path

import pytest

GOLDEN = Path(os.environ.get("TABLECTL_GOLDEN",
                             Path(__file__).resolve().parent / "data" / "golden"))


def golden_names(prefix: str = "") -> list[str]:
    if not GOLDEN.is_dir():
        return []
    return sorted(p.name[:-len(".shoe")] for p in GOLDEN.glob(f"{prefix}*.shoe"))


def profile_of(name: str) -> str:
    return name.rsplit("-", 1)[0] if name[-1].isdigit() else name


def expected(name: str) -> list[dict]:
    return [json.loads(line) for line in (GOLDEN / f"{name}.expected.jsonl").read_text().splitlines()
            if line.strip()]


def compare(expected_events: list[dict], got_events: list[dict]) -> None:
    """Every expected field must agree exactly; the output may carry more fields and events."""
    kinds = {e["event"] for e in expected_events}
    got = [g for g in got_events if g["event"] in kinds]
    assert len(got) == len(expected_events), (len(got), len(expected_events))
    for i, (e, g) in enumerate(zip(expected_events, got)):
        for k, v in e.items():
            assert g.get(k) == v, f"event {i} ({e['event']} round {e.get('round')}): {k} " \
                                  f"expected {v!r} got {g.get(k)!r}"


needs_golden = pytest.mark.skipif(not GOLDEN.is_dir(), reason=f"no golden cases at {GOLDEN}")
