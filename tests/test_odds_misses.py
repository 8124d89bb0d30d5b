"""`odds --simulate` explains an interval that misses and weighs the misses against chance."""
from __future__ import annotations

import pytest

from controller.odds import simulation
from controller.odds.simulation import Comparison, SimulationSummary


def _summary(missing: int, shown: int = 19) -> SimulationSummary:
    s = SimulationSummary(shoes=10, rounds=800)
    for i in range(shown):
        exact = 0.25
        if i < missing:
            s.outcomes.append(Comparison(f"outcome{i}", exact, 0.30, 0.27, 0.33))
        else:
            s.outcomes.append(Comparison(f"outcome{i}", exact, 0.25, 0.22, 0.28))
    return s


def test_binomial_tail():
    assert simulation.binomial_at_least(0, 19, 0.05) == pytest.approx(1.0)
    assert simulation.binomial_at_least(1, 19, 0.05) == pytest.approx(1 - 0.95 ** 19)
    assert simulation.binomial_at_least(2, 2, 0.05) == pytest.approx(0.0025)


def test_one_miss_in_nineteen_is_explained_and_within_chance():
    m = simulation.misses(_summary(1))
    assert [c.name for c, _ in m.missed] == ["outcome0"] and m.within_chance
    # (0.30 − 0.25) / sqrt(0.25 · 0.75 / 800) = 3.27 standard errors
    assert m.missed[0][1] == pytest.approx(0.05 / (0.1875 / 800) ** 0.5)
    text = "\n".join(simulation.misses_text(m))
    assert "outcome0: the exact 0.250000 lies below the interval [0.270000, 0.330000]" in text
    assert "3.3 standard errors above it" in text
    assert "1 of 19 intervals miss" in text and "about 1.0 are expected" in text
    assert "within what chance allows" in text


def test_too_many_misses_are_more_than_chance_and_the_command_says_so(monkeypatch, capsys):
    m = simulation.misses(_summary(5))
    assert not m.within_chance and m.p_value < 0.01
    assert "MORE than chance allows" in "\n".join(simulation.misses_text(m))
    assert simulation.misses_text(simulation.misses(_summary(0)))[0].startswith("Every exact")
    doc = simulation.to_json(_summary(5), seed=1)["misses"]
    assert doc["missed"] == ["outcome0", "outcome1", "outcome2", "outcome3", "outcome4"]
    assert doc["within_chance"] is False and doc["intervals"] == 19
    # the command exits 1 only when the misses are more than chance allows
    from controller.cli import main
    monkeypatch.setattr(simulation, "simulate", lambda *a, **k: _summary(5))
    assert main(["odds", "--profile", "live-commission", "--simulate", "1", "--seed", "1"]) == 1
    assert "MORE than chance allows" in capsys.readouterr().out
    monkeypatch.setattr(simulation, "simulate", lambda *a, **k: _summary(1))
    assert main(["odds", "--profile", "live-commission", "--simulate", "1", "--seed", "1"]) == 0
