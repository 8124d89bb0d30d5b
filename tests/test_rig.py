"""The hardware-in-the-loop rig deals like a table, as separate processes: `tablectl devices`
(shoe and shuffler on ptys, and their dealer) and `tablectl run --http`, the dealer following
only the table's public dealer's display. Whole shoes with no hold, the first one the shoe
file's order through the rules; and a table killed with kill -9 in the shoe-start burn whose
restart review the supervisor confirms (`confirm_layout`), dealing on."""
from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from controller.shoe.cards import ordered_shoe
from controller.journal import Journal
from tests.broker import free_port
from tests.golden import GOLDEN, compare, expected, needs_golden
from tests.test_link_review import Rig, tablectl

ROOT = Path(__file__).resolve().parents[1]
TABLECTL = [sys.executable, "-m", "controller.cli"]


class Devices:
    """`tablectl devices` in its own process; `urls` as it printed them."""

    def __init__(self, args: list[str], env: dict, cwd: Path):
        self.err = open(cwd / "devices.err", "w+")
        self.proc = subprocess.Popen(TABLECTL + ["devices", *args], stdout=subprocess.PIPE,
                                     stderr=self.err, stdin=subprocess.DEVNULL, text=True,
                                     env=env, cwd=cwd)
        self.urls: dict[str, str] = {}
        while len(self.urls) < 2:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(f"devices ended early: {self.said()}")
            name, _, rest = line.partition(": ")
            self.urls[name] = rest.split()[0]

    def said(self) -> str:
        self.err.flush()
        self.err.seek(0)
        return self.err.read()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=10)
        self.proc.stdout.close()
        self.err.close()


def deal_on_rig(tmp_path: Path, shoes: int, *faults: str,
                timeout: float = 240) -> tuple[Path, str]:
    """The golden classic shoe on the rig (framed, the dealer following the display), dealt by
    `tablectl run` for `shoes` shoes: its journal, and what the devices said."""
    port = free_port()
    env = Rig(tmp_path).env
    dev = Devices(["--shoe-file", str(GOLDEN / "classic-1.shoe"), "--profile", "classic",
                   "--shoe-protocol", "framed", "--dealer-display", f"http://127.0.0.1:{port}",
                   "--pace-ms", "1", "--shuffle-seconds", "0.2",
                   *(arg for f in faults for arg in ("--fault", f))], env, tmp_path)
    try:
        journal = tmp_path / "rig.db"
        run = subprocess.run(
            TABLECTL + ["run", "--profile", "classic", "--http", f"127.0.0.1:{port}",
                        "--shoe-url", dev.urls["shoe"], "--shoe-protocol", "framed",
                        "--shuffler-url", dev.urls["shuffler"], "--journal", str(journal),
                        "--no-control", "--json", "--shoes", str(shoes)],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=timeout,
            stdin=subprocess.DEVNULL)
        assert run.returncode == 0, run.stderr[-2000:] + dev.said()
        return journal, dev.said()
    finally:
        dev.stop()


@needs_golden
@pytest.mark.slow
def test_the_rig_deals_whole_shoes_with_no_hold_following_the_display(tmp_path):
    journal, said = deal_on_rig(tmp_path, 2)
    assert "following the dealer's display" in said
    with Journal.open_readonly(journal) as j:
        assert j.verify().ok
        records = [r.data for r in j.records() if r.kind != "input"]
    assert not [e for e in records if e["event"] in ("hold", "irregularity")]
    first = [e for e in records if e.get("shoe") == 1]
    compare(expected("classic-1"), first)             # the file's order, through the rules
    ended = [e for e in records if e["event"] == "shoe_ended"]
    reconciled = [e for e in records if e["event"] == "reconciliation"]
    assert [e["reason"] for e in ended] == ["cut_card", "cut_card"]
    assert [e["ok"] for e in reconciled] == [True, True]
    assert [e["method"] for e in reconciled] == ["shuffler", "shuffler"]
    # the second shoe is what the shuffler shuffled from the cards the dealer gave back
    second = [e["code"] for e in records if e["event"] == "card" and e["shoe"] == 2]
    assert len(second) > 250 and second != [e["code"] for e in records
                                            if e["event"] == "card" and e["shoe"] == 1]


@needs_golden
def test_a_read_lost_with_no_sign_of_a_drop_comes_back_and_the_shoe_deals_on(tmp_path):
    # the framed shoe drops its link as card 30 leaves it, and a pty shows no hang-up: the
    # table hears nothing, the dealer waits for the display. The driver's HELLO on the quiet
    # line brings the read back (never acknowledged, the shoe still has it), in its place
    journal, _ = deal_on_rig(tmp_path, 1, "drop@30", timeout=120)
    with Journal.open_readonly(journal) as j:
        assert j.verify().ok
        records = [r.data for r in j.records() if r.kind != "input"]
    assert not [e for e in records if e["event"] in ("hold", "irregularity", "alarm")]
    compare(expected("classic-1"), [e for e in records if e.get("shoe") == 1])


def burn_heavy_shoe(path: Path) -> Path:
    """An 8-deck shoe whose first card is a king: the shoe-start burn takes eleven cards."""
    codes = [c.code for c in ordered_shoe(8)]
    random.Random(21).shuffle(codes)
    codes.insert(0, codes.pop(codes.index("KS")))
    path.write_text("\n".join(codes) + "\n")
    return path


@pytest.mark.slow
def test_confirm_layout_in_the_start_burn_after_kill_9_is_accepted(tmp_path, durable):
    import shutil
    import tempfile
    where = Path(tempfile.mkdtemp(prefix="rig", dir="/tmp"))      # short: a socket path
    rig = Rig(where)
    port = free_port()
    dev = None
    try:
        rig.accounts()
        dev = Devices(["--shoe-file", str(burn_heavy_shoe(where / "k.shoe")),
                       "--dealer-display", f"http://127.0.0.1:{port}", "--pace-ms", "200"],
                      rig.env, where)
        cmd = TABLECTL + ["run", "--config", str(ROOT / "config" / "table.toml"),
                          "--profile", "macau", "--http", f"127.0.0.1:{port}",
                          "--shoe-url", dev.urls["shoe"], "--shuffler-url", "none",
                          "--journal", str(rig.journal), "--socket", str(rig.socket),
                          "--shoes", "1", "--json"]

        def start() -> subprocess.Popen:
            out = open(where / "run.jsonl", "ab")
            err = open(where / "run.err", "ab")
            ctl = subprocess.Popen(cmd, cwd=where, env=rig.env, stdout=out, stderr=err,
                                   stdin=subprocess.DEVNULL)
            out.close()
            err.close()
            rig.procs.append(ctl)
            return ctl

        ctl = start()
        seen = rig.wait(lambda s: s["state"] == "burning" and s["shoe"]["cards_out"] >= 2,
                        "the shoe-start burn under way")
        ctl.send_signal(signal.SIGKILL)
        ctl.wait()
        rig.procs.remove(ctl)
        ctl = start()
        held = rig.wait(lambda s: s["hold"] is not None, "the restart review")
        problem = held["hold"]["problems"][-1]
        assert problem["kind"] == "restart_review" and "start_burn" in problem["layout"]
        assert len(problem["layout"]["start_burn"]) >= seen["shoe"]["cards_out"]
        assert "confirm_layout" in held["hold"]["actions"]
        done = rig.override("confirm_layout", reason="the burned cards match the record")
        assert done.returncode == 0, done.stderr
        rig.wait(lambda s: s["hold"] is None and s["round"] is not None, "dealing on", 60)
        ctl.terminate()
        ctl.wait(timeout=20)
    finally:
        rig.close()
        if dev is not None:
            dev.stop()
    with Journal.open_readonly(rig.journal) as j:
        assert j.verify().ok
        burns = [r.data for r in j.records(kinds=["burn"])]
        overrides = [r.data["action"] for r in j.records(kinds=["override"])]
        holds = [r.data["reason"] for r in j.records(kinds=["hold"])]
    assert overrides == ["confirm_layout"] and holds == ["restart_review"]
    assert burns and burns[0]["cards"][0] == "KS" and len(burns[0]["cards"]) == 11
    audit = tablectl(["audit", "--journal", str(rig.journal), "--json"], rig.env, where)
    assert '"confirm_layout"' in audit.stdout
    shutil.rmtree(where, ignore_errors=True)


#: what decides a round of each banking game: its hands, its winners, the decisions taken
_HANDS = {"chemin_de_fer": ("player", "banker", "winner"),
          "baccarat_banque": ("right", "left", "bank", "right_winner", "left_winner")}


def _outcomes(records: list[dict], shoe: int = 1) -> list[tuple]:
    return [(e["round"], *(str(e[k]) for k in _HANDS[e["game"]]),
             tuple(sorted((e.get("decisions") or {}).items())))
            for e in records if e["event"] == "round_result" and e.get("shoe") == shoe]


@pytest.mark.parametrize("profile", ["chemin-de-fer", "baccarat-banque"])
def test_a_banking_game_deals_on_the_rig_with_virtual_players_as_simulate_deals_it(tmp_path,
                                                                                 profile):
    """Chemin de fer and baccarat en banque ask players and the banker to decide: on the rig
    (devices in a process of their own, the dealer following the display) `run
    --virtual-players` has simulated ones decide by the rules' defaults, and the shoe deals
    through with no hold, round for round as `simulate` deals the same shoe."""
    codes = [c.code for c in ordered_shoe(6)]
    random.Random(7).shuffle(codes)
    shoe = tmp_path / "banking.shoe"
    shoe.write_text("\n".join(codes) + "\n")
    port = free_port()
    env = Rig(tmp_path).env
    # (framed: it says when a card was drawn, so a quick dealer's reads are not taken for
    # cards drawn together)
    dev = Devices(["--shoe-file", str(shoe), "--profile", profile, "--shoe-protocol", "framed",
                   "--dealer-display", f"http://127.0.0.1:{port}", "--pace-ms", "1",
                   "--shuffle-seconds", "0.2"], env, tmp_path)
    try:
        journal = tmp_path / "rig.db"
        run = subprocess.run(
            TABLECTL + ["run", "--profile", profile, "--http", f"127.0.0.1:{port}",
                        "--shoe-url", dev.urls["shoe"], "--shoe-protocol", "framed",
                        "--shuffler-url", dev.urls["shuffler"],
                        "--virtual-supervisor", "--virtual-players", "--pace", "0",
                        "--journal", str(journal),
                        "--no-control", "--json", "--shoes", "1"],
            capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180,
            stdin=subprocess.DEVNULL)
        assert run.returncode == 0, run.stderr[-2000:] + dev.said()
    finally:
        dev.stop()
    with Journal.open_readonly(journal) as j:
        assert j.verify().ok
        records = [r.data for r in j.records() if r.kind != "input"]
    assert not [e for e in records if e["event"] in ("hold", "irregularity")]
    simulated = tablectl(["simulate", "--profile", profile, "--shoe-file", str(shoe),
                          "--journal", str(tmp_path / "sim.db"), "--json"], env, tmp_path)
    assert simulated.returncode == 0, simulated.stderr[-2000:]
    expected_rounds = _outcomes([json.loads(x) for x in simulated.stdout.splitlines()])
    dealt = _outcomes(records)
    assert len(dealt) > 20 and any(d[4] for d in dealt)     # decisions were taken
    assert dealt == expected_rounds
