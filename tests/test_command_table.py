"""The command table is the one owner of what is legal: in every state a game's table reaches
(on a hold or off one), for every command of the table, what the table offers, what it
accepts, what each role's console offers and what the roles allow are the same set."""
from __future__ import annotations

import random
from typing import Any, Callable

import pytest

from controller.access import roles
from controller.console import text
from controller.errors import CommandRefused
from controller.settings.profile import load_profile, resolve
from controller.shoe.cards import ordered_shoe, parse_card
from controller.table import Table, command
from controller.table import legal
from controller.words import words_of
from tests.tablekit import shuffled_shoe

PROFILES = {"punto_banco": "macau", "andar_bahar": "andar-bahar",
            "chemin_de_fer": "chemin-de-fer", "baccarat_banque": "baccarat-banque"}
PEOPLE = ("dealer", "supervisor", "manager", "auditor")
#: the console has a key for every command a person issues at the table; these come in by
#: `tablectl override` (and the manager's `tablectl profile`), or from the service itself
NOT_ON_CONSOLE = {"stake", "banco", "accept_stakes", "start_round", "cut_card",
                  "confirm_result", "shoe_empty", "count_done", "change_profile",
                  "accept_software", "new_shoe", "abandon_shoe"}


def _free_card(t: Table) -> str:
    """A card the shoe may still hold (what a supervisor would type for a card unread)."""
    shoe = t.shoe
    for c in ordered_shoe(1):
        if shoe is None or shoe.inventory.problem(parse_card(c.code)) is None:
            return c.code
    raise AssertionError("no card left in the shoe")


def _other_mode(t: Table) -> str:
    modes = [m for m in t.profile.paytables if m != t.profile.mode]
    return modes[0] if modes else "no-such-mode"


def _decision(t: Table) -> dict[str, Any]:
    """The decision due, with the rules' default; else a seat's input (who holds the bank),
    which a banking game takes at any point of a round."""
    due = t.decision()
    return {"name": due[0], "value": due[1]} if due else {"name": "banker_seat", "value": 1}


def _punter(t: Table) -> int:
    """A seat that does not hold the bank."""
    return 3 if t.round is not None and t.round.bank_seat == 2 else 2


#: the arguments a person (or the service) would give each command, given the table
ARGS: dict[str, Callable[[Table], dict[str, Any]]] = {
    "enter_card": lambda t: {"code": _free_card(t)},
    "decide": _decision,
    "stake": lambda t: {"seat": _punter(t), "amount": 10},
    "banco": lambda t: {"seat": _punter(t)},
    "accept_stakes": lambda t: {"amount": 10},
    "switch_mode": lambda t: {"mode": _other_mode(t)},
    "change_profile": lambda t: {"profile": t.profile.name,
                                 "text": resolve(t.profile.name).read_text("utf-8")},
    "new_shoe": lambda t: {"cut_position": None if t.profile.continuous_shuffler else 60},
    "hold": lambda t: {"note": "checking"},
    "accept_software": lambda t: {"software": "5e" * 32},      # the controller adds its hash
}


def issue(t: Table, name: str) -> None:
    c = legal.BY_NAME[name]
    role = next((r for r in c.roles if r in roles.ROLES), "system")
    t.apply(command(name, user="pat", role=role, reason="checked at the table",
                    **ARGS.get(name, lambda _: {})(t)))


def _key(t: Table) -> tuple:
    """What makes one place differ from another for what is legal: a hold's kind and where it
    came from (one step of a round stands for the others: the same commands apply on them)."""
    hold, shoe, rnd = t.hold, t.shoe, t.round
    origin = hold.resume_to if hold else None
    if origin and origin.startswith("dealing.") and origin != "dealing.burn":
        origin = "dealing"
    return (t.state, origin, hold.last.kind if hold else None,
            bool(hold and hold.queued), t.expects(), t.reveal_due is not None,
            bool(rnd and rnd.cards), bool(shoe and shoe.rounds), t.decision() is not None,
            bool(shoe and shoe.house_burn_announced), bool(shoe and shoe.house_burn))


def positions(game: str) -> list[dict]:
    """Snapshots of a table of `game` in every kind of place a shift takes it: a whole shoe
    dealt by hand (shuffled, cut, dealt, counted back), and from each place a hold: the
    supervisor's, a card when none is due, a foreign card and an unreadable one; and a house
    burn announced, and confirmed."""
    profile = load_profile(PROFILES[game])
    seen: dict[tuple, dict] = {}

    def keep(t: Table) -> bool:
        """Keep a place not seen before (True), else nothing."""
        key = _key(t)
        if key in seen:
            return False
        seen[key] = t.snapshot()
        return True

    def holds_from(t: Table) -> None:
        snap = t.snapshot()
        for make in (lambda u: issue(u, "hold"),
                     # a house burn announced, then confirmed (and a hold on top of each)
                     lambda u: issue(u, "house_burn"),
                     lambda u: (issue(u, "house_burn"), issue(u, "confirm_house_burn")),
                     lambda u: (issue(u, "house_burn"), issue(u, "hold")),
                     lambda u: u.apply({"type": "card", "code": "XZ"}),
                     lambda u: u.apply({"type": "read_failed", "reason": "E3"}),
                     lambda u: (u.shoe.inventory.seen.__setitem__("KD", 99),
                                u.apply({"type": "card", "code": "KD"}))):
            u = Table.restore(profile, snap, auto_open=False, betting_seconds=30.0)
            try:
                make(u)
            except CommandRefused:
                continue
            if keep(u) and u.hold is not None and u.hold.last.kind == "hold":
                u.apply({"type": "card", "code": _free_card(u)})   # what arrives joins it
                keep(u)

    for shuffler in (False, True):
        t = Table(profile, auto_open=False, betting_seconds=30.0)
        keep(t)
        issue(t, "new_shoe") if not shuffler else t.apply(command(
            "new_shoe", shuffler=True, cut_position=ARGS["new_shoe"](t)["cut_position"]))
        cards = iter(shuffled_shoe(7, profile.decks))
        if shuffler:
            keep(t)
            holds_from(t)
            t.apply({"type": "shuffled", "count": profile.decks * 52, "composition": {}})
        dealt = 0
        # to the cut card and a few cards of the count-back (the rest of it is more of the same)
        while t.state != "shoe_ended" or (t.expects() == "count_back" and dealt < 70):
            if keep(t) and t.state != "shoe_ended":
                holds_from(t)
            want = t.expects()
            if want in ("card", "count_back"):
                t.apply({"type": "card", "code": next(cards)})
                dealt += 1
                if dealt == 60 and not profile.continuous_shuffler:
                    t.apply({"type": "cut_card"})
            elif want == "decision":
                issue(t, "decide")
            elif want == "bets":
                if game == "chemin_de_fer":
                    issue(t, "stake")
                issue(t, "close_bets")
            elif want == "open":
                issue(t, "open_bets")
            elif want == "reveal":
                issue(t, "reveal")
            else:
                raise AssertionError(f"{game}: stuck in {t.state} ({want})")
            if dealt > 200 and t.state != "shoe_ended" and profile.continuous_shuffler:
                break
        keep(t)
    return list(seen.values())


@pytest.mark.parametrize("game", sorted(PROFILES))
def test_what_is_offered_allowed_and_accepted_is_one_set_in_every_state(game):
    profile = load_profile(PROFILES[game])
    game_commands = {u.command.name for u in legal.uses_for(Table(profile)._d.rules)}
    places = positions(game)
    states = {(s["state"], (s.get("hold") or {}).get("resume_to")) for s in places}
    assert len(states) >= 12, sorted(states)
    for snap in places:
        t = Table.restore(profile, snap, auto_open=False, betting_seconds=30.0)
        offered = t.offers()
        where = (snap["state"], t.hold.last.kind if t.hold else None, t.expects())
        accepted, why = [], {}
        for c in legal.COMMANDS:
            trial = Table.restore(profile, snap, auto_open=False, betting_seconds=30.0)
            before = trial.snapshot()
            try:
                issue(trial, c.name)
            except CommandRefused as err:
                assert trial.snapshot() == before, (where, c.name)
                why[c.name] = f"{err.code}: {err}"
            else:
                accepted.append(c.name)
        assert accepted == offered, (where, {n: why.get(n) for n in offered})
        assert set(offered) <= game_commands
        # on a hold, its remedies are the offers that clear it
        view = t.view()
        if t.hold is not None:
            assert view["hold"]["actions"] == [n for n in offered if legal.BY_NAME[n].remedy
                                               and legal.SYSTEM not in legal.BY_NAME[n].roles]
        # each person's console offers exactly what the table takes from their role
        for role in PEOPLE:
            rights = {n for n in offered if roles.allowed(role, n)}
            assert set(text.offered(view, role=role)) == rights - NOT_ON_CONSOLE, (where, role)
            assert rights == {n for n in offered if role in legal.BY_NAME[n].roles}


def test_the_roles_rights_are_the_command_tables():
    assert set(text.ACTIONS) | NOT_ON_CONSOLE == set(legal.BY_NAME)
    for c in legal.COMMANDS:
        for role in PEOPLE:
            expected = role in c.roles
            assert roles.allowed(role, c.name) == expected, (c.name, role)
        assert roles.needs_reason(c.name) == c.override, c.name


def test_a_foreign_card_is_not_burned_unless_the_table_offers_it():
    profile = load_profile("macau")
    t = Table(profile, auto_open=False, betting_seconds=30.0)
    issue(t, "new_shoe")
    for code in ("2S", "AH", "3C"):
        t.apply({"type": "card", "code": code})
    t.shoe.inventory.seen["KD"] = 99              # every king of diamonds is out already
    t.apply({"type": "card", "code": "KD"})
    assert t.hold is not None and t.hold.last.kind == "foreign_card"
    assert "burn_card" not in t.offers() and "remove_card" in t.offers()
    before = t.snapshot()
    with pytest.raises(CommandRefused) as refused:
        issue(t, "burn_card")
    said = words_of(refused.value)
    assert said is not None and said.code == "refuse.hold_needs_other"
    assert "remove_card" in said.fields["actions"]
    assert t.snapshot() == before
    issue(t, "remove_card")
    assert t.state == "idle"


@pytest.mark.parametrize("game", sorted(PROFILES))
def test_resume_goes_back_exactly_where_the_hold_came_from(game):
    from controller.table.machine import machine_for
    from controller.table.states import held, origin_of
    m = machine_for(game)
    resumes = [mv for mv in m.moves if mv.trigger == "resume"]
    assert resumes
    for mv in resumes:
        assert mv.dest == origin_of(mv.source) and mv.source == held(mv.dest), mv
    # and every command of the command table is a trigger of the machine
    assert set(m.commands) <= set(m.machine.events)


def test_the_house_burns_one_announced_and_confirmed_card_before_a_round():
    t = Table(load_profile("macau"), auto_open=False, betting_seconds=30.0)
    issue(t, "new_shoe")
    for code in ("2S", "AH", "3C"):
        t.apply({"type": "card", "code": code})
    assert t.state == "idle" and "house_burn" in t.offers()
    said = t.apply(command("house_burn", user="dana", role="dealer"))
    assert [(e["stage"], e["announced_by"]) for e in said if e["event"] == "house_burn"] == [
        ("announced", "dana")]
    # no card is due until a supervisor confirms it; the dealer is told to wait
    assert t.expects() == "open" and t.prompt_words().code == "prompt.house_burn_confirm"
    assert "confirm_house_burn" in t.offers() and "house_burn" not in t.offers()
    refused = t.apply_safely(command("confirm_house_burn", user="dana", role="supervisor"))
    assert refused.refused is not None and words_of(refused.refused).code == "refuse.needs_reason"
    confirmed = t.apply(command("confirm_house_burn", user="sam", role="supervisor",
                                reason="house right at the round's start"))
    assert [e["event"] for e in confirmed] == ["house_burn", "override"]
    assert confirmed[0]["confirmed_by"] == "sam" and confirmed[0]["stage"] == "due"
    assert t.expects() == "card" and t.prompt() == \
        "House burn: draw one card from the shoe and burn it"
    # the round waits for the burn, in plain words
    refused = t.apply_safely(command("open_bets", user="dana", role="dealer"))
    assert refused.refused is not None
    assert words_of(refused.refused).code == "refuse.house_burn_due"
    burned = t.apply({"type": "card", "code": "9D"})
    assert [(e["event"], e.get("slot"), e.get("flags")) for e in burned] == [
        ("card", "burn", ["house_burn"]), ("house_burn", None, None)]
    assert burned[1] == {"event": "house_burn", "shoe": 1, "stage": "burned", "code": "9D",
                         "announced_by": "dana", "confirmed_by": "sam"}
    assert t.state == "idle" and t.hold is None and t.shoe.inventory.cards_out == 4
    # exactly one: a second card is one drawn when none was due
    t.apply({"type": "card", "code": "8D"})
    assert t.hold is not None and t.hold.last.kind == "card_not_due"
