"""bench/fuzz.py at a small budget: the decoders never raise anything but a protocol error,
never read an impossible card, never hold more than a frame; the framed protocol never turns a
damaged frame into a card; every generated bad input is refused in one line with exit 2."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import fuzz  # noqa: E402


class CaseClock:
    """The bench's budget counted in cases, not in this machine's seconds: every reading of
    the clock moves it on by one step, so a short run makes the same cases however busy the
    machine is."""
    def __init__(self, step: float):
        self.now, self.step = 0.0, step

    def perf_counter(self) -> float:
        self.now += self.step
        return self.now


def test_a_short_run_finds_nothing_wrong(monkeypatch):
    # 0.7 s of decoders (one round of 50 cases per protocol and kind), 0.3 s of bad inputs
    # (at 0.05 s a case: five)
    monkeypatch.setattr(fuzz, "time", CaseClock(0.05))
    result = fuzz.run(seconds=1.0, seed=7)
    assert result["ok"], fuzz.report(result)
    decoders = result["decoders"]
    assert set(decoders) == {f"{p}/{k}" for p in ("beetek", "barcode", "framed")
                             for k in ("random", "mutated", "bitflip")}
    for name, tally in decoders.items():
        assert tally["cases"] >= 50 and tally["exceptions"] == tally["impossible"] == 0, name
        assert tally["buffer_over"] == 0, name
    assert decoders["framed/bitflip"]["phantom"] == decoders["framed/mutated"]["phantom"] == 0
    inputs = result["inputs"]
    assert inputs["cases"] >= 5 and set(inputs["exit_codes"]) == {"2"}


def test_a_decoder_that_raises_is_counted(monkeypatch):
    def broken(self):
        raise IndexError("a decoder bug")

    monkeypatch.setattr(fuzz.BeetekDecoder, "next", broken)
    tally = fuzz.Tally()
    fuzz.decode("beetek", [b"[AS]"], tally)
    assert tally.exceptions == 1 and "a decoder bug" in tally.first_exception
    assert fuzz.failures({"decoders": {"beetek/random": tally.as_dict()}})


def test_main_json_line_and_bad_arguments(capsys):
    assert fuzz.main(["--seconds", "0.2", "--only", "decoders", "--json"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out.strip().splitlines()[-1])
    assert doc["ok"] and "inputs" not in doc and "other card" in out.err
    assert fuzz.main(["--seconds", "nan"]) == 2
