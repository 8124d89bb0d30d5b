"""Exact odds of Chemin de Fer and Baccarat en Banque (controller.odds.banking_report): a brute
force through the game rules on small shoes, Punto Banco's figures when every option is drawn,
the best responses, the equilibrium, and the `tablectl odds` command."""
from __future__ import annotations

import json
import random
from fractions import Fraction

import pytest

from controller.shoe.cards import RANKS, SUITS, Card, hand_total
from controller.cli import main
from controller.games import baccarat_banque as bb_rules, chemin_de_fer as cdf_rules
from controller.odds import baccarat_banque as bb, chemin_de_fer as cdf, punto_banco as pb
from controller.odds import banking_report
from controller.odds.banking import Solver, Strategy
from controller.odds.report import exact_text
from controller.odds.strategy import parse
from controller.errors import InputError
from controller.settings.profile import load_profile

# One worker runs them all, so that the six-deck Banque coup is enumerated once (`make test`
# runs pytest with --dist loadgroup)
pytestmark = pytest.mark.xdist_group("banking_odds")

CDF = load_profile("chemin-de-fer")
BANQUE = load_profile("baccarat-banque")


def solver(game, profile, coup) -> Solver:
    table = profile.paytable
    return Solver(coup, lambda bet, o: game.net(table, bet, o), tuple(table),
                  game.sides(table), game.BANK)


def shared(game, profile, decks=6) -> Solver:
    """The solver `tablectl odds` uses in this process (one enumeration per game and decks)."""
    return banking_report._solver(game, profile, decks)


def random_strategy(cells, seed: int) -> Strategy:
    rng = random.Random(seed)
    return Strategy({c: Fraction(rng.randint(0, 4), 4) for c in cells}, "random")


def brute_force(rules, ranks: dict[str, int], paytable, choose) -> dict[str, dict]:
    """Every deal of the shoe `ranks` (rank → count) played by the game's own rules, each
    decision drawn with probability `choose(hands, name)`: bet → net → probability."""
    dist: dict[str, dict[Fraction, Fraction]] = {bet: {} for bet in paytable}
    left = dict(ranks)

    def play(hands, p: Fraction) -> None:
        phase = rules.next_phase(hands)
        if phase is None:
            for bet, net in rules.settle(hands, paytable).items():
                dist[bet][net] = dist[bet].get(net, Fraction(0)) + p
            return
        if phase.startswith("decide:"):
            name = phase[7:]
            q = choose(hands, name)
            for value, share in ((True, q), (False, 1 - q)):
                if share:
                    h = {k: list(v) if isinstance(v, list) else dict(v)
                         for k, v in hands.items()}
                    rules.decide(h, name, value)
                    play(h, p * share)
            return
        n = sum(left.values())
        for rank, k in left.items():
            if k:
                left[rank] -= 1
                rules.place(hands, phase, Card(rank, SUITS[k % 4]))
                play(hands, p * Fraction(k, n))
                hands[rules.hand_of[phase]].pop()
                left[rank] += 1

    play(rules.new_hands(), Fraction(1))
    return {bet: {n: p for n, p in d.items() if p} for bet, d in dist.items()}


def ranks_tuple(ranks: dict[str, int]) -> tuple[int, ...]:
    return tuple(ranks.get(r, 0) for r in RANKS)


# ---- the enumeration against the rules, on small shoes -------------------------------------

def test_chemin_de_fer_enumeration_matches_the_rules_for_a_mixed_strategy():
    shoe = {"A": 2, "2": 2, "4": 2, "9": 2, "K": 2}      # banker 3 v 9 and 5 v 4, player 5
    coup = cdf.composition_coup(ranks_tuple(shoe))
    s = random_strategy(coup.cells, seed=3)
    assert {s[c] for c in coup.cells} - {0, 1}          # some cell is truly mixed

    def choose(hands, name):
        if name == "player_draw":
            return s["player_5"]
        third = hands["player"][2].point if len(hands["player"]) == 3 else None
        return s[cdf.banker_cell(hand_total(hands["banker"]), third)]

    expected = brute_force(cdf_rules.RULES, shoe, CDF.paytable, choose)
    sol = solver(cdf, CDF, coup)
    for bet in CDF.paytable:
        assert sol.bet_distribution(s, bet) == expected[bet], bet


def test_banque_enumeration_matches_the_rules_for_a_mixed_strategy():
    shoe = {"A": 4, "4": 4, "K": 4}     # totals 2, 5 (a choice), 1, 8 (natural), 4, 0
    coup = bb.composition_coup(ranks_tuple(shoe))
    s = random_strategy(coup.cells, seed=5)

    def view(hand):
        if bb_rules.natural(hand):
            return bb.NATURAL
        return bb.STOOD if len(hand) == 2 else hand[2].point

    def choose(hands, name):
        if name != "bank_draw":
            return s[bb.hand_cell(name.removesuffix("_draw"), 5)]
        return s[bb.bank_cell(hand_total(hands["bank"]), view(hands["right"]),
                              view(hands["left"]))]

    expected = brute_force(bb_rules.RULES, shoe, BANQUE.paytable, choose)
    sol = solver(bb, BANQUE, coup)
    outcomes = sol.outcomes(s)
    assert sum(outcomes.values()) == 1
    for bet in BANQUE.paytable:
        assert sol.bet_distribution(s, bet, outcomes) == expected[bet], bet


# ---- every option drawn: Punto Banco's tableau -------------------------------------------------

@pytest.mark.parametrize("decks", [1, 6, None])
def test_chemin_de_fer_drawing_every_option_is_punto_banco(decks):
    sol = solver(cdf, CDF, cdf.coup(decks))
    draw = cdf.presets()["draw"]
    finals: dict = {}
    for (pt, bt, pc, bc), p in sol.outcomes(draw).items():
        finals[(pt, bt, pc + bc)] = finals.get((pt, bt, pc + bc), 0) + p
    deal = pb.deal_odds(decks)
    assert finals == dict(deal.finals)
    for bet, rule in CDF.paytable.items():
        assert sol.bet_distribution(draw, bet) == pb.bet_distribution(deal, bet, rule), bet


# the hands are each other's mirror: the everyday run takes the right, the slow run the left too
@pytest.mark.parametrize("against", ["right", pytest.param("left", marks=pytest.mark.slow)])
def test_banque_against_one_hand_by_the_tableau_is_punto_banco(against):
    """Each hand draws on 5 and the bank follows the tableau against one of them: that hand's
    coup against the bank is Punto Banco's, the other hand's cards notwithstanding."""
    sol = shared(bb, BANQUE)
    s = parse(f"draw,bank=tableau-{against}", _game(bb, sol)).strategy
    deal = pb.deal_odds(6)
    pb_bets = {"player": pb.bet_distribution(deal, "player", BANQUE.paytable[against]),
               "banker": pb.bet_distribution(deal, "banker",
                                             BANQUE.paytable[f"bank_{against}"])}
    assert sol.bet_distribution(s, against) == pb_bets["player"]
    assert sol.bet_distribution(s, f"bank_{against}") == pb_bets["banker"]
    results, events = bb.outcomes(sol.outcomes(s))
    assert sum(results.values()) == 1
    assert events[against] == pb.outcomes(deal)["player"]


def test_banque_default_is_even_for_the_hands():
    """By default the bank draws on 0-5 and stands on 6-7 like the hands: an even contest, so
    each hand's punters break even and the bank pays its commission."""
    sol = shared(bb, BANQUE)
    means = sol.means(bb.default_strategy())
    assert means["right"] == means["left"] == 0
    results, events = bb.outcomes(sol.outcomes(bb.default_strategy()))
    assert events["bank_right"] == events["right"]
    assert means["bank"] == -Fraction(1, 20) * events["bank_right"]


def _game(module, sol):
    from controller.odds.strategy import Game
    return Game(module.GAME, module.cells(),
                module.presets(), tuple(sol.sides), module.side_rule)


# ---- best responses and the equilibrium --------------------------------------------------

def test_chemin_de_fer_best_responses_and_pure_equilibrium():
    sol = shared(cdf, CDF)
    standing = cdf.presets()["stand"]
    reply, _ = sol.best_response(standing, "player")
    assert reply["player_5"] == 1                       # drawing on 5 gains against it
    assert sol.mean(reply, "player") > sol.mean(standing, "player")
    eq, = sol.equilibria(cdf.default_strategy())
    assert eq.pure and all(eq.strategy[c] == 1 for c in sol.coup.cells)
    for side in sol.sides:             # no side can do better against the other's choices
        for cell in sol.owned(side):
            other = eq.strategy.with_cells({cell: 1 - eq.strategy[cell]}, "")
            assert sol.mean(other, side) <= eq.means[side]


@pytest.mark.slow          # the whole six-deck game solved: the slow run
def test_banque_equilibrium_is_mixed_and_nobody_gains_by_changing():
    sol = shared(bb, BANQUE)
    eq, = sol.equilibria(bb.default_strategy())
    assert not eq.pure
    p = eq.strategy["right_5"]
    assert 0 < p < 1 and eq.strategy["left_5"] == p
    mixed = [c for c in sol.coup.cells if eq.strategy[c] not in (0, 1)]
    assert set(mixed) > {"right_5", "left_5"}
    # a hand that mixes is indifferent: drawing or standing on 5 gives the same mean
    for hand in ("right", "left"):
        for q in (Fraction(0), Fraction(1)):
            s = eq.strategy.with_cells({f"{hand}_5": q}, "")
            assert sol.mean(s, hand) == eq.means[hand]
    # the bank gains nothing by moving any of its cells to draw or to stand
    rng = random.Random(2)
    cells = mixed[2:] + rng.sample(sol.owned("bank"), 12)
    for cell in cells:
        for q in (Fraction(0), Fraction(1)):
            s = eq.strategy.with_cells({cell: q}, "")
            assert sol.mean(s, "bank") <= eq.means["bank"], cell


# ---- the command -------------------------------------------------------------------------------

@pytest.mark.parametrize("profile", ["chemin-de-fer", "baccarat-banque"])
def test_command_json_sums_to_one(profile, capsys):
    assert main(["odds", "--profile", profile, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["decks"] == 6 and doc["profile"] == profile
    assert sum(Fraction(o["fraction"]) for o in doc["outcomes"].values()) == 1
    for bet in doc["bets"].values():
        assert abs(bet["p_win"] + bet["p_push"] + bet["p_loss"] - 1) < 1e-12
    eq, = doc["equilibrium"]
    assert eq["pure"] == (profile == "chemin-de-fer")
    assert set(doc["best_response"]) == set(eq["means"])
    assert "equilibrium" in doc["method"]


def test_command_text_and_a_stated_strategy(capsys):
    assert main(["odds", "--profile", "chemin-de-fer", "--strategy",
                 "draw,player_5=stand,banker_5_4=1/3"]) == 0
    out = capsys.readouterr().out
    assert "player on 5: stand" in out
    assert "banker on 5, player's third card 4: draw with probability 0.333333 (1/3)" in out
    assert "Best response" in out and "player: change 1 cell(s)" in out
    assert "Equilibrium (pure)" in out and "Method:" in out
    assert main(["odds", "--profile", "baccarat-banque", "--strategy", "bank=best"]) == 0
    out = capsys.readouterr().out
    assert "bank: best response" in out and "Equilibrium (mixed)" in out
    assert "bank on 6 (rows: right hand" in out


@pytest.mark.parametrize("args, words", [
    (["--profile", "chemin-de-fer", "--strategy", "player_5=2"], "probability of drawing"),
    (["--profile", "chemin-de-fer", "--strategy", "banker_4_1=draw"], "no cell or side"),
    (["--profile", "chemin-de-fer", "--strategy", "draw,,stand"], "empty item"),
    (["--profile", "baccarat-banque", "--strategy", "bank=9"], "bank takes best"),
    (["--profile", "macau", "--strategy", "draw"], "no choices to make"),
    (["--profile", "chemin-de-fer", "--simulate", "2"], "stated strategy"),
])
def test_command_bad_strategy_is_one_line(args, words, capsys):
    assert main(["odds", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err


def test_strategy_parser_orders_items():
    game = _game(cdf, shared(cdf, CDF))
    parsed = parse("stand, banker_3_9=0.25, player=best", game)
    assert parsed.strategy["player_5"] == 0 and parsed.strategy["banker_3_9"] == Fraction(1, 4)
    assert parsed.best == ("player",)
    with pytest.raises(InputError):
        parse("banker_3_9=-0.1", game)
    assert exact_text(parse(None, game).strategy["banker_5_4"]) == "1"


def test_report_text_of_the_default(capsys):
    odds = banking_report.compute(CDF, 6, None)
    assert sum(odds.results.values()) == 1
    assert odds.bets["banker"].rtp == pb_rtp("banker", 6)


def pb_rtp(bet: str, decks: int) -> Fraction:
    deal = pb.deal_odds(decks)
    dist = pb.bet_distribution(deal, bet, CDF.paytable[bet])
    return 1 + sum((n * p for n, p in dist.items()), Fraction(0))
