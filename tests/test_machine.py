"""The machine is the procedure: each game's successor table is exactly what its rules can do,
the machine built from it allows nothing else, and the diagram draws only those moves."""
import re

import pytest

from controller.shoe.cards import parse_card
from controller.errors import CommandRefused
from controller.games import get_rules
from controller.games.procedure import RESULT, RULES_DECIDE, step_of
from controller.settings.profile import load_profile
from controller.table import Table, command
from controller.table.diagram import mermaid
from controller.table.machine import MoveRefused, machine_for
from controller.table.states import BETTING, BURN, dealing

GAMES = ("punto_banco", "andar_bahar", "chemin_de_fer", "baccarat_banque")
PROFILE = {"punto_banco": "macau", "andar_bahar": "andar-bahar",
           "chemin_de_fer": "chemin-de-fer", "baccarat_banque": "baccarat-banque"}
#: one card of each point value 0–9
CARDS = [parse_card(c) for c in ("TS", "AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S")]


def _copy(hands):
    return {k: (dict(v) if isinstance(v, dict) else list(v)) for k, v in hands.items()}


def reachable_moves(game):
    """Every (step, next step) the rules produce over every reachable hand (by totals)."""
    rules = get_rules(game)
    moves, seen = set(), set()

    def key(hands):
        # what the rules can look at: counts, totals, two-card totals, the third card's value
        # (only the player's third card counts for another hand: the banker's tableau)
        return tuple((name, tuple(sorted(v.items())) if isinstance(v, dict) else
                      (len(v), sum(c.point for c in v) % 10, sum(c.point for c in v[:2]) % 10,
                       v[2].point if len(v) > 2 and name == "player" else None))
                     for name, v in hands.items())

    def walk(hands):
        k = key(hands)
        if k in seen:
            return
        seen.add(k)
        nxt = rules.next_phase(hands)
        if nxt is None:
            return
        step = step_of(nxt)
        if nxt.startswith(RULES_DECIDE):
            for value in (True, False):
                h = _copy(hands)
                rules.decide(h, nxt[len(RULES_DECIDE):], value)
                moves.add((step, step_of(rules.next_phase(h))))
                walk(h)
            return
        for card in CARDS:
            h = _copy(hands)
            rules.place(h, nxt, card)
            moves.add((step, step_of(rules.next_phase(h))))
            walk(h)

    if game == "andar_bahar":
        # the game card's rank against the cards dealt: a match ends the round on either side
        return {("game_card", "andar"), ("andar", "bahar"), ("andar", RESULT),
                ("bahar", "andar"), ("bahar", RESULT)}
    walk(rules.new_hands())
    return moves


@pytest.mark.parametrize("game", ["punto_banco", "chemin_de_fer"])
def test_successor_table_is_exactly_what_the_rules_do(game):
    proc = get_rules(game).procedure
    assert set(proc.moves()) == reachable_moves(game)


def test_banque_successor_table_matches_random_coups():
    """Two tableaux and three decisions make the full walk long; 6,000 seeded coups with random
    cards and decisions visit every move of the table, and none outside it."""
    import random
    rules = get_rules("baccarat_banque")
    rng = random.Random(5)
    seen = set()
    for _ in range(6000):
        hands = rules.new_hands()
        nxt = rules.next_phase(hands)
        while nxt is not None:
            if nxt.startswith(RULES_DECIDE):
                rules.decide(hands, nxt[len(RULES_DECIDE):], rng.random() < 0.5)
            else:
                rules.place(hands, nxt, rng.choice(CARDS))
            after = rules.next_phase(hands)
            seen.add((step_of(nxt), step_of(after)))
            nxt = after
    assert seen == set(rules.procedure.moves())


def test_andar_bahar_table_matches_dealt_decks():
    import random
    from controller.shoe.cards import ordered_shoe
    rules = get_rules("andar_bahar")
    seen = set()
    for seed in range(300):
        deck = list(ordered_shoe(1))
        random.Random(seed).shuffle(deck)
        hands, cur, i = rules.new_hands(), rules.next_phase(rules.new_hands()), 0
        while cur is not None:
            rules.place(hands, cur, deck[i])
            i += 1
            nxt = rules.next_phase(hands)
            seen.add((step_of(cur), step_of(nxt)))
            cur = nxt
    assert seen == set(rules.procedure.moves())


class At:
    """A table as the machine sees it: the state it stands in, nothing else."""
    mstate = state = "closed"
    hold = None


@pytest.mark.parametrize("game", GAMES)
def test_every_out_of_order_step_is_refused_by_the_machine(game):
    proc = get_rules(game).procedure
    steps = (BURN,) + proc.steps
    legal = {s: set(proc.successors.get(s, ())) for s in proc.steps}
    legal[BURN] = {BURN, proc.first}
    if proc.bets_after:                 # its card opens the bets: no card step follows it
        legal[proc.bets_after] = set()
    refused = 0
    m, at = machine_for(game), At()
    for here in steps:
        for there in steps:
            m.set_state(at, dealing(here))
            trigger = f"next_{there}"
            if there in legal[here]:
                m.fire[trigger]()
                assert at.state == dealing(there)
                continue
            with pytest.raises(MoveRefused):
                m.fire[trigger]()
            assert at.state == dealing(here)
            refused += 1
        m.set_state(at, dealing(here))
        if RESULT not in legal[here]:
            with pytest.raises(MoveRefused):
                m.fire["result"]()
    assert refused > len(steps)


@pytest.mark.parametrize("game", GAMES)
def test_the_direct_moves_are_the_machines_own(game):
    """The table takes the procedure's unguarded moves from `GameMachine.direct` instead of
    firing `transitions`: from every state, every such trigger goes where the machine goes,
    and what the machine refuses is not there."""
    from controller.table.desk import Desk
    from controller.table.machine import PROCEDURE_MOVES
    from controller.table.states import shown
    m, at = machine_for(game), At()
    direct = 0
    triggers = [t for t in m.machine.events if t in PROCEDURE_MOVES or t.startswith("next_")]
    for state in m.machine.states:
        for trigger in triggers:
            m.set_state(at, state)
            try:
                m.fire[trigger]()
                went = at.mstate
            except MoveRefused:
                went = None
            fast = m.direct.get(trigger, {}).get(state)
            if fast is not None:
                direct += 1
                assert fast == (went, shown(went)), (state, trigger)
            else:
                assert went is None or any(
                    mv.conditions or mv.command for mv in m.moves
                    if mv.trigger == trigger and mv.source == state), (state, trigger)
    assert direct > 10
    # through the table's own desk: a direct move, and a refused one that falls to the machine
    desk = Desk(load_profile(PROFILE[game]), auto_open=True, betting_seconds=0.0,
                initial="loaded")
    desk.move("no_burn")
    assert (desk.mstate, desk.state) == ("idle", "idle")
    with pytest.raises(MoveRefused):
        desk.move("count_ok")
    assert desk.mstate == "idle"


@pytest.mark.parametrize("game", GAMES)
def test_the_diagram_draws_no_move_the_procedure_forbids(game):
    proc = get_rules(game).procedure
    allowed = {(dealing(s), dealing(d)) for s, d in proc.moves()
               if d != RESULT and s != proc.bets_after}
    allowed |= {(dealing(BURN), dealing(BURN)), (dealing(BURN), dealing(proc.first))}
    if proc.bets_after:                 # bets open after that card and close onto what follows
        allowed |= {(BETTING, dealing(d)) for d in proc.successors[proc.bets_after]}
    else:
        allowed |= {(BETTING, dealing(BURN)), (BETTING, dealing(proc.first))}
    drawn = set()
    for line in mermaid(game).splitlines():
        m = re.match(r"\s*(\S+) --> (\S+): (.*)", line)
        if m and m.group(1).startswith(("dealing.", "betting")) \
                and m.group(2).startswith("dealing."):
            drawn.add((m.group(1), m.group(2)))
    assert drawn == allowed


def test_andar_bahar_shows_the_game_card_before_bets():
    """The seed's order: the game card, then the betting window, then Andar and Bahar."""
    t = Table(load_profile("andar-bahar"), betting_seconds=20)
    t.apply(command("new_shoe"))
    assert t.state == dealing("game_card")
    events = t.apply({"type": "card", "code": "7S"})       # due: no irregularity, no hold
    assert [e["event"] for e in events] == ["card", "bets_open"] and t.state == BETTING
    early = Table.restore(t.profile, t.snapshot(), betting_seconds=20)
    early.apply({"type": "card", "code": "2D"})            # Andar's card before bets close
    assert early.state == "hold" and early.hold.last.kind == "card_while_betting"
    events = t.apply(command("close_bets", user="timer"))
    assert [e["event"] for e in events] == ["bets_closed"] and t.state == dealing("andar")
    events = t.apply({"type": "card", "code": "7H"})        # Andar's first card matches
    result = [e for e in events if e["event"] == "round_result"][0]
    assert result["winner"] == "andar" and result["game_card"] == "7S"


def test_a_card_is_placed_only_where_the_rules_say():
    """Through the public way in: each card moves the machine one legal step."""
    t = Table(load_profile("macau"))
    t.apply(command("new_shoe", cut_position=400))
    for code in ("2S", "AH", "3C"):          # a 2 turned: two more burned
        t.apply({"type": "card", "code": code})
    assert t.state == dealing("P1")
    seen = []
    for code in ("4H", "5C", "KD", "2S", "3D"):
        t.apply({"type": "card", "code": code})
        seen.append(t.state)
    assert seen[:3] == [dealing("B1"), dealing("P2"), dealing("B2")]
    assert seen[3] == dealing("player_third")
