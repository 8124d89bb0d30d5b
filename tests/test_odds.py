"""Exact odds (controller.odds): reference figures for Punto Banco and Andar Bahar, an independent brute-force
check through the game rules, RTP bands, the `tablectl odds` command and the simulation summary."""
from __future__ import annotations

import io
import json
import random
from fractions import Fraction

import pytest

from controller.shoe.cards import RANKS, SUITS, Card
from controller.cli import main
from controller.games import andar_bahar as ab_rules
from controller.games import punto_banco as pb_rules
from controller.odds import (andar_bahar as ab, check_rtp_bands, compute_odds, paytable_odds,
                             parse_decks, punto_banco as pb)
from controller.odds import report, simulation
from controller.errors import InputError
from controller.settings.profile import BetRule, ProfileError, parse_profile

# ---- profiles built from dicts (independent of the files in config/profiles) -------------------

PB_PAYTABLE = {"player": 1, "banker": 0.95, "tie": 8, "player_pair": 11, "banker_pair": 11,
               "big": 0.54, "small": 1.5}
CARD_COUNT_PAYS = dict(zip(ab_rules.CARD_COUNT_BETS, (2, 3, 4, 5, 8, 12, 20, 40, 110, 800)))
AB_PAYTABLES = {
    "commission": {"andar": 0.9, "bahar": 1, "first_andar": 15, "first_bahar": 15.5,
                   "first_three": {"straight_flush": 120, "straight": 8, "flush": 5},
                   **CARD_COUNT_PAYS},
    "no_commission": {"andar": {"pays": 1, "on_first": 0.25}, "bahar": 1, **CARD_COUNT_PAYS},
}


def pb_profile(decks: int = 8, paytable: dict | None = None, **extra):
    return parse_profile({"name": "test-pb", "game": "punto_banco", "decks": decks,
                          "paytable": paytable or PB_PAYTABLE, **extra}, "test-pb.toml")


def ab_profile(**extra):
    return parse_profile({"name": "test-ab", "game": "andar_bahar", "decks": 1,
                          "burn": {"rule": "none"}, "cut_card": {"enabled": False},
                          "mode": "commission", "paytables": AB_PAYTABLES, **extra},
                         "test-ab.toml")


def pct(x: Fraction) -> float:
    return float(x) * 100


def agrees(value: float, reference: str) -> bool:
    """`value` rounds to the reference figure as printed (half a unit in its last place)."""
    places = len(reference.split(".")[1])
    return abs(value - float(reference)) <= 0.5 * 10 ** -places + 1e-12


# ---- Punto Banco: exact reference ------------------------------------------------------------

def test_punto_banco_eight_decks_reference():
    r = compute_odds(pb_profile(8))
    assert agrees(float(r.outcomes["banker"]), "0.45859742")
    assert agrees(float(r.outcomes["player"]), "0.44624661")
    assert agrees(float(r.outcomes["tie"]), "0.09515597")
    edges = {bet: pct(o.house_edge) for bet, o in r.bets.items()}
    assert agrees(edges["banker"], "1.0579")
    assert agrees(edges["player"], "1.2351")
    assert agrees(edges["tie"], "14.3596")
    assert agrees(edges["player_pair"], "10.3614")
    assert agrees(edges["banker_pair"], "10.3614")
    assert agrees(edges["big"], "4.3457")
    assert agrees(edges["small"], "5.2829")


def test_super_six_reference():
    super6 = dict(PB_PAYTABLE, banker={"pays": 1, "on_six": 0.5})
    r = compute_odds(pb_profile(8, super6))
    assert agrees(pct(r.bets["banker"].house_edge), "1.4581")
    # a Banker win on 6 pays half: the bet differs from a 1:1 Banker by half that probability
    plain = compute_odds(pb_profile(8, dict(PB_PAYTABLE, banker=1)))
    assert plain.bets["banker"].mean - r.bets["banker"].mean == \
        r.outcomes["banker_wins_with_6"] / 2


def test_punto_banco_six_decks_reference():
    r = compute_odds(pb_profile(6))
    edges = {bet: pct(o.house_edge) for bet, o in r.bets.items()}
    assert agrees(edges["banker"], "1.0558")
    assert agrees(edges["player"], "1.2374")
    assert agrees(edges["tie"], "14.4382")
    assert agrees(edges["player_pair"], "11.2540")


@pytest.mark.parametrize("decks", [*range(1, 13), None])
def test_every_deck_count_is_a_probability_distribution(decks):
    deal = pb.deal_odds(decks)
    assert sum(deal.finals.values()) == 1
    o = pb.outcomes(deal)
    assert o["banker"] + o["player"] + o["tie"] == 1
    assert o["four_cards"] + o["five_cards"] + o["six_cards"] == 1
    assert all(p > 0 for p in o.values())
    for bet, odds in compute_odds(pb_profile(8), decks).bets.items():
        assert odds.p_win + odds.p_push + odds.p_loss == 1, bet


def test_pairs_are_exact_over_ranks():
    # 8 decks: 32 of each rank among 416 cards → (32 − 1)/(416 − 1); T/J/Q/K differ
    assert pb.deal_odds(8).pair == Fraction(31, 415)
    assert pb.deal_odds(1).pair == Fraction(3, 51)
    assert pb.deal_odds(None).pair == Fraction(1, 13)


def test_infinite_deck_is_the_limit_of_large_shoes():
    inf = pb.outcomes(pb.deal_odds(None))
    huge = pb.outcomes(pb.composition_odds((4 * 10 ** 6,) * 13))
    for name in ("banker", "player", "tie", "natural", "four_cards", "banker_wins_with_6"):
        assert abs(float(inf[name] - huge[name])) < 1e-6, name


def _brute_force(ranks: tuple[int, ...], paytable: dict) -> dict[str, dict[Fraction, Fraction]]:
    """Every ordered deal of physical cards, played and settled by controller.games.punto_banco."""
    shoe = [Card(RANKS[r], SUITS[i % 4]) for r, k in enumerate(ranks) for i in range(k)]
    dist: dict[str, dict[Fraction, Fraction]] = {bet: {} for bet in paytable}

    def deal(used: int, player: list, banker: list, p: Fraction) -> None:
        phase = pb_rules.next_phase(player, banker)
        if phase is None:
            for bet, net in pb_rules.settle(player, banker, paytable).items():
                dist[bet][net] = dist[bet].get(net, Fraction(0)) + p
            return
        left = [i for i in range(len(shoe)) if not used >> i & 1]
        hand = player if phase in ("P1", "P2", "player_third") else banker
        for i in left:
            hand.append(shoe[i])
            deal(used | 1 << i, player, banker, p / len(left))
            hand.pop()
    deal(0, [], [], Fraction(1))
    return dist


@pytest.mark.parametrize("ranks", [
    (1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 0, 2),     # A 3 5 6 8 T K K: naturals, draws, K-K pair
    (0, 0, 0, 2, 1, 2, 0, 0, 0, 1, 1, 1, 0),     # 4 4 5 6 6 T J Q: J-Q is no pair
    (0, 1, 1, 0, 0, 0, 0, 0, 1, 2, 0, 2, 0),     # 2 3 9 T T Q Q, depletion of 0s
])
def test_enumeration_matches_brute_force_through_the_rules(ranks):
    paytable = {bet: BetRule(Fraction(p).limit_denominator()) for bet, p in PB_PAYTABLE.items()}
    paytable["banker"] = BetRule(Fraction(1), {"on_six": Fraction(1, 2)})
    deal = pb.composition_odds(ranks)
    expected = _brute_force(ranks, paytable)
    for bet, rule in paytable.items():
        got = {net: p for net, p in pb.bet_distribution(deal, bet, rule).items() if p}
        assert got == expected[bet], bet


# ---- Andar Bahar: exact reference --------------------------------------------------------------

def test_andar_bahar_reference():
    r = compute_odds(ab_profile())
    assert r.outcomes["andar"] == Fraction(429, 833)
    assert agrees(pct(r.bets["andar"].rtp), "97.8511")
    assert agrees(pct(r.bets["bahar"].rtp), "96.9988")
    nc = compute_odds(ab_profile(), mode="no_commission")
    assert nc.mode == "no_commission"
    assert agrees(pct(nc.bets["andar"].rtp), "98.5894")
    assert set(nc.bets) == set(AB_PAYTABLES["no_commission"])


def test_cards_dealt_distribution_and_ranges():
    k = ab.cards_dealt(1)
    assert sum(k.pmf.values()) == 1 and max(k.pmf) == 49
    for n in (1, 2, 17, 49):     # first match at n: n − 1 misses, then one of the 3 matches
        p = Fraction(1)
        for i in range(n - 1):
            p *= Fraction(48 - i, 51 - i)
        assert k.pmf[n] == p * Fraction(3, 51 - (n - 1))
    bins = sum(k.between(lo, hi) for lo, hi in ab_rules.CARD_COUNT_BETS.values())
    assert bins == 1                           # the ten card-count bets cover 1–49 exactly once
    assert ab.cards_dealt(None).odd() == Fraction(13, 25)


def test_first_three_pattern_counts():
    # ordered (game, andar, bahar) triples of one deck: 52·51·50
    three = ab.first_three(1)
    total = 52 * 51 * 50
    assert three["straight_flush"] == Fraction(12 * 4 * 6, total)      # 12 runs (A23…QKA)
    assert three["straight"] == Fraction(12 * 6 * (4 ** 3 - 4), total)
    assert three["flush"] == Fraction(4 * 13 * 12 * 11 - 12 * 4 * 6, total)
    assert sum(three.values()) == 1


@pytest.mark.parametrize("mode", ["commission", "no_commission"])
def test_andar_bahar_distributions_agree_with_settlement(mode):
    """Each k-dependent bet's exact mean equals Σ P(k) · net(k) with net from the rules' settle."""
    paytable = ab_profile().paytables[mode]
    k = ab.cards_dealt(1)
    game = Card("7", "H")
    others = [Card(r, s) for s in SUITS for r in RANKS if r != "7"]
    mean = {bet: Fraction(0) for bet in paytable if bet != "first_three"}
    for n, p in k.pmf.items():
        dealt = others[:n - 1] + [Card("7", "S")]
        hands = {"game_card": [game], "andar": dealt[0::2], "bahar": dealt[1::2]}
        nets = ab_rules.settle(hands, {b: paytable[b] for b in mean})
        for bet in mean:
            mean[bet] += p * nets[bet]
    _, bets = paytable_odds("andar_bahar", paytable, 1)
    for bet, m in mean.items():
        assert bets[bet].mean == m, bet


def test_unknown_game_and_bad_decks():
    with pytest.raises(InputError):
        paytable_odds("chemin_de_fer", {}, 6)
    with pytest.raises(InputError):
        parse_decks("13")
    with pytest.raises(InputError):
        parse_decks("eight")
    assert parse_decks("inf") is None and parse_decks("8") == 8


# ---- RTP bands -----------------------------------------------------------------------------------

def test_rtp_band_accepts_the_right_payout():
    check_rtp_bands(pb_profile(8, rtp_band={"banker": [0.985, 0.992], "tie": [0.85, 0.86]}))


def test_rtp_band_catches_a_mistyped_payout():
    bad = pb_profile(8, dict(PB_PAYTABLE, banker=9.5), rtp_band={"banker": [0.985, 0.992]})
    with pytest.raises(ProfileError) as err:
        check_rtp_bands(bad)
    assert err.value.key == "rtp_band.banker"
    assert err.value.where == "test-pb.toml"
    assert "computed RTP" in err.value.problem and "outside [0.985, 0.992]" in err.value.problem
    assert err.value.fix == "check the payout of banker in [paytable]"
    assert len(str(err.value).splitlines()) == 1


def test_rtp_band_on_every_mode_and_unknown_bets():
    check_rtp_bands(ab_profile(rtp_band={"andar": [0.97, 0.99]}))
    with pytest.raises(ProfileError) as err:
        check_rtp_bands(ab_profile(rtp_band={"andar": [0.98, 0.99]}))   # commission: 0.9785
    assert "[paytables.commission]" in err.value.fix
    with pytest.raises(ProfileError) as err:
        check_rtp_bands(pb_profile(8, rtp_band={"big": [0.9, 1.0]}, paytable={"banker": 0.95}))
    assert err.value.key == "rtp_band.big" and "no such bet" in err.value.problem


# ---- the command ---------------------------------------------------------------------------------

def _write_profile(tmp_path, decks: int = 8) -> str:
    lines = ['name = "file-pb"', 'game = "punto_banco"', f"decks = {decks}", "[paytable]"]
    lines += [f"{bet} = {p}" for bet, p in PB_PAYTABLE.items()]
    path = tmp_path / "file-pb.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def test_command_json(tmp_path, capsys):
    assert main(["odds", "--profile", _write_profile(tmp_path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["profile"] == "file-pb" and doc["decks"] == 8
    assert set(doc["bets"]) == set(PB_PAYTABLE)
    banker = doc["bets"]["banker"]
    assert agrees(banker["rtp"] * 100, "98.9421")
    assert abs(banker["rtp"] + banker["house_edge"] - 1) < 1e-12
    p, q = map(int, banker["rtp_fraction"].split("/"))
    assert Fraction(p, q) == compute_odds(pb_profile(8)).bets["banker"].rtp


def test_command_text_and_infinite_deck(tmp_path, capsys):
    assert main(["odds", "--profile", _write_profile(tmp_path), "--decks", "inf"]) == 0
    out = capsys.readouterr().out
    assert "an infinite deck" in out
    for column in ("Bet", "Payout", "P(win)", "P(push)", "P(loss)", "RTP %", "House edge %",
                   "RTP (exact)"):
        assert column in out
    assert "0.95:1" in out and "1/13" in out        # infinite-deck pair probability


def test_command_bad_input_is_one_line(tmp_path, capsys):
    assert main(["odds", "--profile", _write_profile(tmp_path), "--decks", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--decks" in err
    assert main(["odds", "--profile", _write_profile(tmp_path), "--simulate", "0"]) == 2


def test_payout_text():
    assert report.payout_text(BetRule(Fraction(19, 20))) == "0.95:1"
    assert report.payout_text(BetRule(Fraction(1), {"on_six": Fraction(1, 2)})) == \
        "1:1; 0.5:1 on a winning 6"
    three = BetRule(None, {"straight_flush": Fraction(120), "straight": Fraction(8),
                           "flush": Fraction(5)})
    assert report.payout_text(three) == "SF 120:1 / S 8:1 / F 5:1"
    assert report.payout_text(BetRule(Fraction(1, 3))) == "1/3:1"


# ---- simulation summary --------------------------------------------------------------------------

def _pb_round(player, banker, bets, **extra):
    pt = sum(Card(c[0], c[1]).point for c in player) % 10
    bt = sum(Card(c[0], c[1]).point for c in banker) % 10
    winner = "player" if pt > bt else "banker" if bt > pt else "tie"
    return {"event": "round_result", "shoe": 1, "round": 1, "game": "punto_banco",
            "player": player, "banker": banker, "player_total": pt, "banker_total": bt,
            "winner": winner, "natural": pt >= 8 or bt >= 8, "bets": bets, **extra}


def test_summarise_counts_rounds_and_skips_void_and_demo():
    exact = compute_odds(pb_profile(8, {"banker": 0.95, "player": 1}))
    events = [
        {"event": "shoe_started", "shoe": 1},
        _pb_round(["9H", "KD"], ["2S", "3D", "AC"], {"banker": -1, "player": 1}),
        _pb_round(["4H", "AD", "TC"], ["6S", "KD"], {"banker": 0.95, "player": -1}),
        _pb_round(["4H", "3D"], ["4S", "3C"], {"banker": 0, "player": 0}),
        _pb_round(["4H", "3D"], ["4S", "3C"], {"banker": 0, "player": 0}, void=True),
        _pb_round(["4H", "3D"], ["4S", "3C"], {"banker": 0, "player": 0}, demo=True),
        {"event": "shoe_ended", "shoe": 1, "rounds": 3, "reason": "cut_card"},
    ]
    shoes = []
    s = simulation.summarise(events, exact, on_shoe=shoes.append)
    assert (s.shoes, s.rounds, s.skipped) == (1, 3, 2) and shoes == [1]
    seen = {c.name: c.observed for c in s.outcomes}
    assert seen["player"] == seen["banker"] == seen["tie"] == pytest.approx(1 / 3)
    assert seen["banker_wins_with_6"] == pytest.approx(1 / 3)
    assert seen["natural"] == pytest.approx(1 / 3)
    assert seen["five_cards"] == pytest.approx(2 / 3)
    mean = {c.name: c.observed for c in s.bets}
    assert mean["banker"] == pytest.approx(-0.05 / 3) and mean["player"] == 0
    doc = simulation.to_json(s, seed=5)
    assert doc["rounds"] == 3 and doc["outcomes"]["tie"]["ci95"][0] <= 1 / 3


def test_summarise_andar_bahar_rounds():
    exact = compute_odds(ab_profile())
    e = {"event": "round_result", "game": "andar_bahar", "game_card": "7C", "andar": ["5C"],
         "bahar": ["6H", "7H"][:1], "winner": "bahar", "cards_dealt": 2,
         "bets": {bet: -1 for bet in exact.bets}}
    assert simulation.round_outcomes(e) == {"bahar", "bahar_on_first_card",
                                            "first_three_straight"}


def test_summary_agrees_with_exact_odds_on_random_rounds():
    """Rounds dealt from random 8-deck shoes by the rules land near the exact figures."""
    profile = pb_profile(8)
    exact = compute_odds(profile)
    rng = random.Random(11)
    shoe = [Card(r, s) for r in RANKS for s in SUITS] * 8
    events = []
    for _ in range(4000):
        rng.shuffle(shoe)
        player, banker = [], []
        it = iter(shoe)
        while (phase := pb_rules.next_phase(player, banker)) is not None:
            (player if phase in ("P1", "P2", "player_third") else banker).append(next(it))
        nets = pb_rules.settle(player, banker, profile.paytable)
        events.append(_pb_round([c.code for c in player], [c.code for c in banker],
                                {b: float(v) for b, v in nets.items()}))
    s = simulation.summarise(events, exact)
    misses = [c.name for c in s.outcomes + s.bets if not c.within]
    assert len(misses) <= 3, misses          # 17 intervals at 95 %: ~0.85 misses expected


def test_wilson_interval_and_progress_bar():
    lo, hi = simulation.wilson(50, 100)
    assert lo < 0.5 < hi and hi - lo == pytest.approx(0.192, abs=0.002)
    assert simulation.wilson(0, 10)[0] == 0.0
    buf = io.StringIO()
    bar = simulation.ProgressBar(4, buf, width=8)
    bar(1)
    bar(4)
    assert "[##------] 1/4 shoes" in buf.getvalue() and buf.getvalue().endswith("4/4 shoes\n")


def test_simulate_deals_seeded_shoes_by_the_rules(capsys):
    assert main(["odds", "--profile", "live-commission", "--simulate", "1", "--seed", "3",
                 "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    sim = doc["simulation"]
    assert sim["shoes"] == 1 and sim["rounds"] > 50 and sim["seed"] == 3
    assert set(sim["mean_return"]) == set(doc["bets"])
    assert "1/1 shoes" in captured.err


def test_first_three_return_by_the_game_card_shown_before_bets():
    """The game card is shown before bets: First 3 returns 70.27 % after an A, 2 or K and
    89.88 % otherwise; the average over the thirteen ranks is the bet's overall RTP."""
    from controller.odds import compute_odds
    from controller.odds.report import rank_classes, to_json
    from controller.settings.profile import load_profile
    report = compute_odds(load_profile("andar-bahar"))
    by_rank = report.by_game_card["first_three"]
    assert sum(by_rank.values()) / 13 == report.bets["first_three"].rtp
    classes = {tuple(ranks): rtp for ranks, rtp in rank_classes(by_rank)}
    assert round(float(classes[("A", "2", "K")]) * 100, 2) == 70.27
    assert round(float(classes[("3", "4", "5", "6", "7", "8", "9", "T", "J", "Q")]) * 100,
                 2) == 89.88
    doc = to_json(report)["bets"]["first_three"]["by_game_card"]
    assert [c["ranks"] for c in doc][0] == ["A", "2", "K"]
    assert "by_game_card" not in to_json(report)["bets"]["andar"]
