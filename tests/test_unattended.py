"""`tablectl run` on the embedded simulator with no console never wedges: shoe after shoe at
the dealer's fastest pace and at a fast human one, and a hold is cleared by the virtual
supervisor, which the prompt says."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(tmp_path, *args: str, faults: str = "") -> list[dict]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    env.update(PYTHONPATH=str(ROOT), TABLECTL_SIMULATOR_FAULTS=faults)
    if "TABLECTL_STORAGE_FSYNC" in os.environ:
        env["TABLECTL_STORAGE_FSYNC"] = os.environ["TABLECTL_STORAGE_FSYNC"]
    done = subprocess.run([sys.executable, "-m", "controller.cli", "run", "--config",
                           str(ROOT / "config" / "table.toml"), "--journal",
                           str(tmp_path / "j.db"), "--no-control", "--json", *args],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr[-2000:]
    return [json.loads(line) for line in done.stdout.splitlines()]


# two shoes each: the second starts from where the first left the table (shoe end, count,
# shuffle), as every later one would
@pytest.mark.parametrize("pace,shoes,seed,faults", [("0", 2, 9, "misread@30"),
                                                     ("0.002", 2, 14, "")])
def test_shoe_after_shoe_at_a_fast_pace_with_no_console(tmp_path, pace, shoes, seed, faults):
    events = run(tmp_path, "--pace", pace, "--shoes", str(shoes), "--seed", str(seed),
                 faults=faults)
    ended = [e for e in events if e["event"] == "shoe_ended"]
    assert [e["reason"] for e in ended] == ["cut_card"] * shoes
    assert all(e["ok"] for e in events if e["event"] == "reconciliation")
    assert len([e for e in events if e["event"] == "reconciliation"]) == shoes
    holds = [e for e in events if e["event"] == "hold"]
    overrides = [e for e in events if e["event"] == "override"]
    if not faults:
        assert not holds and not overrides
        return
    # the misread (in every shoe) is one hold each time, cleared by the virtual supervisor,
    # as the prompt says
    assert [h["reason"] for h in holds] == ["unreadable_card"] * shoes
    said = [e for e in events if e["event"] == "prompt" and e.get("state") == "hold"]
    assert said and said[0]["words"]["code"] == "prompt.virtual_supervisor"
    assert "virtual supervisor" in said[0]["text"]
    assert [(o["action"], o["user"]) for o in overrides] == \
        [("enter_card", "virtual-supervisor")] * shoes
