"""Result at reveal: with `[display] reveal = "on_reveal"` a round's result is journaled when the
shoe reads it, and shown to the table only after the dealer's `reveal`; dealing waits for it."""
import json
from dataclasses import replace

import pytest

from controller.cli import main
from controller.errors import CommandRefused
from controller.journal import Journal
from controller.settings.profile import load_profile
from controller.table import Table, command
from tests.tablekit import BURN_TWO, deal, new_shoe, of, sup

# round 1: Player 9H 7H = 6 stands, Banker 4S KS = 4 draws 2D = 6: a tie
ROUND_1 = "9H 4S 7H KS 2D".split()


def reveal_table(**kw):
    return Table(replace(load_profile("macau"), reveal="on_reveal"), **kw)


def dealer(action: str, **args):
    return command(action, user="dee", role="dealer", **args)


def test_the_result_waits_for_the_dealers_reveal_and_so_does_the_next_round():
    t = reveal_table()
    started = new_shoe(t, cut_position=300)
    assert of(started, "shoe_started")[0]["reveal"] == "on_reveal"
    deal(t, BURN_TWO)
    events = deal(t, ROUND_1)
    result, = of(events, "round_result")
    assert result["reveal"] == "pending" and result["winner"] == "tie"
    # the hands are read but face down: the table waits for the dealer, not for the next round
    assert (t.state, t.expects(), t.prompt()) == ("idle", "reveal", "Reveal the cards")
    assert t.status()["reveal_due"] == 1 and t.view()["reveal_due"] == 1
    assert not of(events, "round_started")[1:]
    with pytest.raises(CommandRefused, match="not revealed yet"):
        t.apply(dealer("open_bets"))
    shown = t.apply(dealer("reveal"))
    assert [e["event"] for e in shown][:2] == ["reveal", "round_started"]
    assert shown[0] == {"event": "reveal", "shoe": 1, "round": 1}
    assert t.state == "dealing.P1" and t.status().get("reveal_due") is None
    with pytest.raises(CommandRefused, match="No result is waiting"):
        t.apply(dealer("reveal"))


def test_on_read_profiles_are_unchanged():
    t = Table(load_profile("macau"))
    started = new_shoe(t, cut_position=300)
    assert "reveal" not in of(started, "shoe_started")[0]
    deal(t, BURN_TWO)
    result, = of(deal(t, ROUND_1), "round_result")
    assert "reveal" not in result and t.state == "dealing.P1"


def test_a_card_before_the_reveal_is_not_due_and_the_reveal_survives_the_hold():
    t = reveal_table()
    new_shoe(t, cut_position=300)
    deal(t, BURN_TWO + tuple(ROUND_1))
    held = deal(t, ["8C"])
    assert of(held, "hold")[0]["reason"] == "card_not_due"
    assert [e["event"] for e in t.apply(dealer("reveal"))] == ["reveal"]   # still on hold
    t.apply(sup("burn_card"))
    assert t.state == "dealing.P1"            # the hold cleared: the next round opens


def test_snapshot_keeps_the_reveal_due_and_a_shoe_ended_first_drops_it():
    t = reveal_table()
    new_shoe(t, cut_position=300)
    deal(t, BURN_TWO + tuple(ROUND_1))
    again = Table.restore(t.profile, t.snapshot())
    assert again.expects() == "reveal" and again.reveal_due == 1
    ended = t.apply(sup("end_shoe"))
    assert of(ended, "shoe_ended") and t.reveal_due is None and t.expects() != "reveal"


def test_the_journal_keeps_read_time_and_reveal_time(tmp_path, capsys):
    profile = tmp_path / "macau-reveal.toml"
    with open(load_profile("macau").path) as macau:
        profile.write_text(macau.read() + '\n[display]\nreveal = "on_reveal"\n')
    journal = tmp_path / "j.db"
    assert main(["simulate", "--profile", str(profile), "--seed", "3", "--json",
                 "--journal", str(journal)]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    results = of(events, "round_result")
    reveals = of(events, "reveal")
    assert results and [(r["shoe"], r["round"]) for r in results] == \
        [(r["shoe"], r["round"]) for r in reveals]        # the virtual dealer revealed each
    with Journal.open_readonly(journal) as j:
        records = list(j.records(kinds=["round_result", "reveal"]))
    read = {(r.data["shoe"], r.data["round"]): r for r in records if r.kind == "round_result"}
    for rec in (r for r in records if r.kind == "reveal"):
        result = read[(rec.data["shoe"], rec.data["round"])]
        assert result.data["reveal"] == "pending"
        assert result.seq < rec.seq and result.utc <= rec.utc and result.mono < rec.mono
    # recall tells both times
    from controller.journal.recall import format_story, last_rounds
    with Journal.open_readonly(journal) as j:
        story = last_rounds(j, 2)[0]
    assert story["ended_utc"] <= story["revealed_utc"] and "reveal" not in story["outcome"]
    assert ", shown to the table " in format_story(story)
