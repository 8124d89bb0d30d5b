"""Recovery from every state: every hold an input can cause is cleared by at least one remedy
the table accepts; the hold event, the table's view and the console offer exactly the remedies
the table accepts; a defect while applying a remedy leaves the hold as it was; a restart is
reviewed in every phase in which cards leave the shoe, and the review is cleared."""
from __future__ import annotations

import random
from dataclasses import replace
from typing import Callable

import pytest

from controller.console import text
from controller.errors import CommandRefused
from controller.settings.profile import load_profile
from controller.table import Table, command
from controller.table import legal
from tests.tablekit import BURN_TWO, burn_shoe_start, card, deal, new_shoe, of, rest_of, sup

#: every action that may clear a hold (a person's), with the arguments a supervisor would give
ARGS = {"enter_card": {"code": "9H"}, "end_shoe": {"void": True},
        "change_shoe": {"void": True}}
CLEARING = {c.name for c in legal.COMMANDS if c.remedy and legal.SYSTEM not in c.roles} | {
    "change_shoe"}          # ending the shoe by its other name is not a way off a hold
ACTIONS = sorted(CLEARING)


def unattended(profile: str = "macau", **changes) -> Table:
    p = load_profile(profile)
    t = Table(replace(p, **changes) if changes else p)
    new_shoe(t, cut_position=402)
    burn_shoe_start(t)
    return t


def attended(profile: str = "macau") -> Table:
    t = Table(load_profile(profile), auto_open=False, betting_seconds=30.0)
    new_shoe(t, cut_position=402)
    burn_shoe_start(t)
    return t


def shuffling() -> Table:
    t = Table(load_profile("macau"))
    new_shoe(t, cut_position=402, shuffler=True)
    return t


def counting(by: str) -> Table:
    """A shoe ended after its cut card, its rest being counted back by the shuffler or by
    reading it through the shoe."""
    t = Table(load_profile("classic"))
    new_shoe(t, cut_position=40, shuffler=by == "shuffler")
    if by == "shuffler":
        t.apply({"type": "shuffled", "count": 312, "composition": {}})
    rest = rest_of(6, BURN_TWO)
    random.Random(3).shuffle(rest)
    cards = iter(rest)
    burn_shoe_start(t)
    deal(t, [next(cards) for _ in range(40)])
    t.apply({"type": "cut_card"})
    while t.state != "shoe_ended":
        card(t, next(cards))
    return t


def kept(t: Table, *codes: str) -> Table:
    deal(t, list(codes))
    assert t.hold is not None and [q.code for q in t.hold.queued][-len(codes):] == list(codes)
    return t


def link_lost(back: bool, reads: str = "") -> Table:
    t = unattended()
    card(t, "4H")
    t.apply({"type": "link_lost", "device": "shoe", "reason": "cable"})
    deal(t, reads)
    if back:
        t.apply({"type": "link_back", "device": "shoe"})
    return t


def false_coup() -> Table:
    p = load_profile("chemin-de-fer")
    t = Table(replace(p, game_options={**p.game_options, "false_coup": "void"}))
    new_shoe(t, cut_position=300)
    deal(t, "AS KD 2S 3H AC 3D")                  # the player's 3 must draw
    t.apply(command("decide", user="p", role="player", name="player_draw", value="stand"))
    return t


def defect(monkeypatch) -> Table:
    import controller.games.punto_banco as pb
    t = unattended()
    with monkeypatch.context() as m:
        m.setattr(pb.RULES, "place", lambda *a: 1 / 0)
        t.apply_safely({"type": "card", "code": "4H"})
    return t


def restarted(t: Table) -> Table:
    t.apply({"type": "restarted", "resends": False})
    return t


HOLDS: dict[str, Callable[..., Table]] = {
    "unreadable in a round": lambda: unattended().apply({"type": "read_failed"}) and None,
    "unreadable in the burn": lambda: _after(Table(load_profile("macau")),
                                             lambda t: (new_shoe(t, cut_position=402),
                                                        card(t, "2S"),
                                                        t.apply({"type": "read_failed"}))),
    "unread, reported": lambda: _after(unattended(), lambda t: (card(t, "4H"),
                                                                t.apply(sup("report_unread")))),
    "card between rounds": lambda: _after(attended(), lambda t: card(t, "9D")),
    "card while shuffling": lambda: _after(shuffling(), lambda t: card(t, "9D")),
    "cards while shuffling, shuffled meanwhile": lambda: _after(
        shuffling(), lambda t: (card(t, "9D"), card(t, "8D"),
                                t.apply({"type": "shuffled", "count": 416, "composition": {}}))),
    "card while counting back": lambda: _after(counting("shuffler"), lambda t: card(t, "9D")),
    "card while betting": lambda: _after(attended(), lambda t: (t.apply(command("open_bets")),
                                                                card(t, "9D"))),
    "stray card, reads kept": lambda: kept(_after(attended(), lambda t: card(t, "9D")),
                                           "8D", "7D"),
    "foreign card": lambda: _after(unattended(), lambda t: (
        t.shoe.inventory.seen.__setitem__("KD", 8), card(t, "KD"))),
    "impossible card": lambda: _after(unattended(), lambda t: card(t, "XZ")),
    "card with no shoe": lambda: _after(Table(load_profile("macau")), lambda t: card(t, "9D")),
    "face-up card": lambda: _after(unattended("macau", face_up_card="burn"),
                                   lambda t: card(t, "9D", face_up=True)),
    "count mismatch": lambda: _after(shuffling(), lambda t: t.apply(
        {"type": "shuffled", "count": 415, "composition": {}})),
    "device alarm in a round": lambda: _after(unattended(), lambda t: t.apply(
        {"type": "alarm", "device": "shoe", "code": "E3", "text": "head dirty"})),
    "shuffler jam": lambda: _after(shuffling(), lambda t: t.apply(
        {"type": "alarm", "device": "shuffler", "code": "jam", "text": "jam"})),
    "card while shuffling, then a jam": lambda: _after(shuffling(), lambda t: (
        card(t, "9D"), t.apply({"type": "alarm", "device": "shuffler", "code": "jam",
                                "text": "jam"}))),
    "supervisor's hold while shuffling, then a jam": lambda: _after(shuffling(), lambda t: (
        t.apply(sup("hold")), t.apply({"type": "alarm", "device": "shuffler", "code": "jam",
                                       "text": "jam"}))),
    "link down": lambda: link_lost(back=False, reads="5D"),
    "link back, reads kept": lambda: link_lost(back=True, reads="5D 6C"),
    "link back, no reads": lambda: link_lost(back=True),
    "restart in the burn": lambda: _after(Table(load_profile("macau")), lambda t: (
        new_shoe(t, cut_position=402), card(t, "2S"), restarted(t))),
    "restart in a round": lambda: restarted(_after(unattended(), lambda t: card(t, "4H"))),
    "restart in the burn before a round": lambda: restarted(_after(
        unattended("live-commission"), lambda t: deal(t, "4H 5D 6C 7S"))),
    "restart between rounds": lambda: restarted(attended()),
    "restart during the count-back": lambda: restarted(counting("shoe")),
    "restart, reads kept": lambda: kept(restarted(_after(unattended(),
                                                          lambda t: card(t, "4H"))), "5D"),
    "supervisor's hold in a round": lambda: _after(unattended(), lambda t: t.apply(
        sup("hold", note="dispute"))),
    "supervisor's hold between rounds, reads kept": lambda: kept(_after(
        attended(), lambda t: t.apply(sup("hold"))), "9D"),
    "supervisor's hold while shuffling": lambda: _after(shuffling(), lambda t: t.apply(
        sup("hold"))),
    "unshuffled shoe": lambda: _after(unattended(), lambda t: deal(t, "AS 2S 3S 4S 5S")),
    "missed shoe burn": lambda: _after(Table(load_profile("macau"), auto_open=False),
                                       lambda t: (new_shoe(t, cut_position=402),
                                                  t.apply(command("open_bets")))),
    "false coup": false_coup,
}


def _after(t: Table, steps: Callable[[Table], object]) -> Table:
    steps(t)
    return t


def build(name: str, monkeypatch) -> Table:
    if name == "defect in a round":
        return defect(monkeypatch)
    t = HOLDS[name]()
    if t is None:                               # a lambda that only applied inputs
        t = unattended()
        t.apply({"type": "read_failed"})
    return t


NAMES = list(HOLDS) + ["defect in a round"]


@pytest.mark.parametrize("name", NAMES)
def test_every_hold_offers_exactly_the_remedies_the_table_accepts(name, monkeypatch):
    t = build(name, monkeypatch)
    assert t.state == "hold", (name, t.state)
    offered = t.view()["hold"]["actions"]
    assert offered, f"{name}: nothing clears the hold"
    accepted = []
    for action in ACTIONS:
        trial = build(name, monkeypatch)
        before = trial.snapshot()
        try:
            trial.apply(sup(action, **ARGS.get(action, {})))
        except Exception as err:
            assert trial.snapshot() == before, (name, action, err)      # refused: unchanged
            assert type(err).__name__ == "CommandRefused", (name, action, err)
        else:
            accepted.append(action)
    assert sorted(accepted) == sorted(offered), name
    # the same set wherever it is told: the view, the table's offers, the console
    view = t.view()
    assert view["hold"]["actions"] == offered
    assert set(t.offers()) & CLEARING == set(offered)
    console = set(text.offered(view, role="supervisor")) & CLEARING
    assert console == set(offered), name
    assert t.status()["hold"]["actions"] == offered


@pytest.mark.parametrize("name", ["restart in the burn", "restart in a round",
                                  "restart in the burn before a round",
                                  "restart between rounds", "restart during the count-back"])
def test_a_restart_is_reviewed_in_every_phase_and_confirming_deals_on(name, monkeypatch):
    t = build(name, monkeypatch)
    problem = t.hold.last
    assert problem.kind == "restart_review" and "layout" in problem.extra
    where = t.hold.resume_to
    events = t.apply(sup("confirm_layout"))
    assert of(events, "layout_confirmed") and t.hold is None
    assert t.state == where or where == "idle"
    if t.expects() in ("card", "count_back"):
        code = "QH" if t.state != "shoe_ended" else next(
            c for c in ("KH", "QS", "JD") if t.shoe.inventory.seen[c] < 6)
        after = card(t, code)
        assert of(after, "card") or of(after, "count_back"), (name, after)


JAM = {"type": "alarm", "device": "shuffler", "code": "jam", "text": "shuffler jam"}


def test_an_alarm_while_held_for_something_else_joins_that_hold_and_its_remedy_asks_again():
    """A card drawn while the shuffler shuffles holds the table; the shuffler then jams. The
    jam was only logged: the hold's remedy put the table back to shuffling with nobody asking
    the jammed shuffler again, and the table waited for a shoe for ever."""
    t = shuffling()
    card(t, "9D")
    events = t.apply(JAM)
    assert [e["event"] for e in events] == ["alarm", "irregularity", "hold"]
    assert [p.kind for p in t.hold.problems] == ["card_not_due", "device_alarm"]
    assert [e["event"] for e in t.apply(JAM)] == ["alarm"]   # said again: nothing new
    # the stray card first (resuming would pass over it), then the jam
    assert "resume" not in t.view()["hold"]["actions"]
    with pytest.raises(CommandRefused, match="give it back or burn it first"):
        t.apply(sup("resume"))
    t.apply(sup("return_reads"))
    assert t.state == "hold" and t.view()["hold"]["actions"] == ["resume"]
    events = t.apply(sup("resume"))
    assert t.state == "shuffling"
    assert [(e["device"], e["action"]) for e in of(events, "device_request")] == [
        ("shuffler", "shuffle")]


def test_confirm_layout_in_the_shoe_start_burn_deals_on():
    t = HOLDS["restart in the burn"]()
    t.apply(sup("confirm_layout"))
    assert t.state == "burning"
    deal(t, BURN_TWO[1:])
    assert t.state == "dealing.P1" and t.shoe.start_burn == list(BURN_TWO)


def test_a_defect_while_applying_a_remedy_leaves_the_hold_as_it_was(tmp_path, monkeypatch):
    from controller.journal import Journal
    from controller.service.clock import VirtualClock
    from controller.service.loop import TableService
    from controller.service.recovery import open_table
    from controller.words import render, words_of
    journal = Journal(str(tmp_path / "j.db"))
    table, _ = open_table(load_profile("macau"), journal)
    svc = TableService(table, journal, VirtualClock())
    svc.process(command("new_shoe", cut_position=402))
    for code in BURN_TWO:
        svc.process(parse(dict(type="card", code=code)))
    svc.process(parse(dict(type="read_failed", reason="E3")))
    held = table.snapshot()
    from controller.table.holds import Holds
    monkeypatch.setattr(Holds, "left", lambda self, hold, back: 1 / 0)
    out = svc.process(sup("enter_card", code="4H"))
    assert out.refused is not None and isinstance(out.error, ZeroDivisionError)
    assert table.snapshot() == held and table.hold.last.kind == "unreadable_card"
    said = render(words_of(out.refused), "en")
    assert "\n" not in said and "could not be done" in said and "Nothing changed" in said
    record = list(journal.records(kinds=["input"]))[-1].data
    assert "refused" in record and "ZeroDivisionError" in record["error"]
    assert [r.data["reason"] for r in journal.records(kinds=["hold"])] == ["unreadable_card"]
    monkeypatch.undo()
    svc.process(sup("enter_card", code="4H"))          # the remedy, once the defect is gone
    assert table.hold is None and table.state == "dealing.B1"
    journal.close()


def parse(d):
    from controller.table.inputs import parse_input
    return parse_input(d)


def test_the_console_lists_the_reads_kept_with_a_hold_and_the_prompt_counts_them():
    from controller.words import render
    t = HOLDS["stray card, reads kept"]()
    shown = text.hold_text(t.view()["hold"], "en").plain
    assert "2 reads kept with the hold: 8 of diamonds, 7 of diamonds" in shown
    assert "2 reads came meanwhile" in render(t.prompt_words(), "en")
    assert t.status()["hold"]["queued"] == 2
