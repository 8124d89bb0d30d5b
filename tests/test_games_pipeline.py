"""Andar Bahar, Chemin de Fer, Baccarat en Banque and the continuous shuffler through the whole
simulation pipeline (simulated devices, drivers, table machine), and the golden decks."""
import json
from dataclasses import replace

import pytest

from controller.shoe.cards import hand_total, ordered_shoe, parse_card
from controller.cli import main
from controller.commands._simulation import run_simulation
from controller.errors import CommandRefused
from controller.games.chemin_de_fer import RULES as CDF
from controller.journal import Journal
from controller.settings.profile import load_profile
from controller.table import Table, command
from tests.eventcheck import check_events
from tests.golden import GOLDEN, compare, expected, needs_golden
from tests.tablekit import count_back, deal, new_shoe, of, rest_of, without_seq



def cli_events(capsys, *argv):
    assert main(["simulate", *argv, "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def two_card_total(codes):
    return hand_total([parse_card(c) for c in codes[:2]])


# --- Andar Bahar ----------------------------------------------------------------------------

@needs_golden
@pytest.mark.parametrize("options", [
    ("--shuffler-url", "none"),
    (),
], ids=["no-shuffler", "default"])
@pytest.mark.parametrize("name", ["andar-bahar", "andar-bahar-no-commission"])
def test_andar_bahar_golden_decks_through_the_cli(capsys, name, options):
    # --shoes is left at 1: a file plays every deck it holds
    events = cli_events(capsys, "--profile", name, "--shoe-file", str(GOLDEN / f"{name}.shoe"),
                        *options)
    want = expected(name)
    compare(want, events)
    check_events(events)             # every event of the run is as the contract says
    assert [r["round"] for r in of(events, "round_result")] == list(range(1, len(want) + 1))
    assert len(of(events, "shoe_started")) == len(want)
    # dealt in the rules' order: the game card, then bets, then Andar and Bahar: never a hold
    assert not of(events, "hold") and not of(events, "irregularity")
    kinds = [e["event"] for e in events if e["event"] in ("card", "bets_open", "bets_closed")]
    for first in range(len(kinds)):
        if kinds[first] == "bets_open":
            assert kinds[first - 1] == "card" and kinds[first + 1] == "bets_closed"


def test_every_andar_bahar_round_settles_both_modes(capsys):
    from controller.shoe.cards import cards as parse_cards
    from controller.games.andar_bahar import RULES as AB
    from controller.games.deal import bet_number
    profile = load_profile("andar-bahar")
    events = cli_events(capsys, "--profile", "andar-bahar", "--seed", "9", "--shoes", "30")
    rounds = of(events, "round_result")
    assert len(rounds) == 30
    for r in rounds:
        hands = {"game_card": parse_cards([r["game_card"]]), "andar": parse_cards(r["andar"]),
                 "bahar": parse_cards(r["bahar"])}
        assert set(r["bets_by_mode"]) == {"commission", "no_commission"}
        for mode, table in profile.paytables.items():
            want = {b: bet_number(x) for b, x in AB.settle(hands, table).items()}
            assert r["bets_by_mode"][mode] == want
        assert r["bets"] == r["bets_by_mode"]["commission"]      # the profile's mode


def test_a_void_andar_bahar_round_keeps_the_shapes_of_a_settled_one():
    t = Table(load_profile("andar-bahar"))
    new_shoe(t)
    deal(t, ["5S", "9H"])
    void = of(t.apply(command("void_round", user="sup", role="supervisor", reason="dispute")),
              "round_result")[0]
    assert void["void"] and void["game_card"] == "5S" and void["andar"] == ["9H"]
    assert void["bahar"] == [] and void["cards_dealt"] == 1
    assert set(void["bets_by_mode"]) == {"commission", "no_commission"}
    assert all(v == 0 for bets in void["bets_by_mode"].values() for v in bets.values())


def test_one_mode_at_a_time_when_the_profile_says_so():
    profile = load_profile("andar-bahar")
    profile = replace(profile, game_options={"modes": "one"})
    t = Table(profile)
    new_shoe(t)
    result = of(deal(t, "5S 9H 2C 5D".split()), "round_result")[0]
    assert "bets_by_mode" not in result and result["bets"]["andar"] == 0.9


def test_andar_bahar_seeded_decks_one_round_each(capsys, monkeypatch):
    from simulators.rig import SimRig
    decks = []
    load = SimRig.load_shoe

    def recording(self, cards, cut, **kw):
        decks.append(list(cards))
        return load(self, cards, cut, **kw)

    monkeypatch.setattr(SimRig, "load_shoe", recording)
    events = cli_events(capsys, "--profile", "andar-bahar", "--seed", "5", "--shoes", "20")
    rounds = of(events, "round_result")
    assert [r["round"] for r in rounds] == list(range(1, 21))
    assert [r["shoe"] for r in rounds] == list(range(1, 21))
    assert [e["reason"] for e in of(events, "shoe_ended")] == ["round_complete"] * 20
    full = sorted(c.code for c in ordered_shoe(1))
    assert len(decks) == 20 and all(sorted(d) == full for d in decks)
    assert len({tuple(d) for d in decks}) == 20          # freshly shuffled every round
    for deck, r in zip(decks, rounds):
        n = 1 + r["cards_dealt"]
        dealt = [r["game_card"]] + [c for pair in zip(r["andar"], r["bahar"] + [None])
                                    for c in pair if c]
        assert dealt == deck[:n]


def test_switch_mode_between_rounds_changes_the_next_paytable():
    profile = load_profile("andar-bahar")
    t = Table(profile)
    new_shoe(t)
    dealt = "5S 9H 2C 5D".split()               # Andar 9H, Bahar 2C, Andar 5D: andar wins
    first = of(deal(t, dealt), "round_result")[0]
    assert first["bets"]["andar"] == 0.9 and "first_andar" in first["bets"]
    # the deck's rest is read back through the shoe; it reconciles by itself
    rec, = of(count_back(t, rest_of(1, dealt)), "reconciliation")
    assert rec["ok"] and rec["remainder"] == 48
    switch = command("switch_mode", user="sup", role="supervisor", reason="house switch",
                     mode="no_commission")
    assert of(t.apply(switch), "mode_changed")[0]["mode"] == "no_commission"
    new_shoe(t)
    second = of(deal(t, "7S 7H"), "round_result")[0]    # the 1st card dealt matches: 0.25 to 1
    assert (first["round"], second["round"]) == (1, 2)
    assert set(second["bets"]) == set(profile.paytables["no_commission"])
    assert second["bets"]["andar"] == 0.25 and second["winner"] == "andar"
    count_back(t, rest_of(1, ["7S", "7H"]))
    new_shoe(t)                                 # a round in progress keeps its mode
    deal(t, "8C")
    with pytest.raises(CommandRefused, match="between rounds"):
        t.apply(switch)
    assert t.profile.mode == "no_commission"


# --- Chemin de Fer --------------------------------------------------------------------------

def cdf(seed=3, profile=None, **kw):
    return run_simulation(profile or load_profile("chemin-de-fer"), seed=seed, **kw)


def check_coup(r):
    """The coup's cards follow the chemmy tableau with the decisions it records."""
    hands = CDF.new_hands()
    hands["decisions"].update(r["decisions"])
    p, b = [parse_card(c) for c in r["player"]], [parse_card(c) for c in r["banker"]]
    for card in (p[0], b[0], p[1], b[1]):
        CDF.place(hands, CDF.next_phase(hands), card)
    for card, hand in ((p[2:], "player"), (b[2:], "banker")):
        if card:
            assert CDF.next_phase(hands) == f"{hand}_third", r
            CDF.place(hands, f"{hand}_third", card[0])
    assert CDF.next_phase(hands) is None, r


def test_chemin_de_fer_shoe_with_default_decisions():
    events = cdf()
    start = of(events, "shoe_started")[0]
    assert start["cut_card_position"] == start["cards"] - 7
    rounds = of(events, "round_result")
    assert of(events, "shoe_ended")[0]["reason"] == "cut_card"
    # the coup in which the card behind the cut card is drawn is finished, and no coup follows
    behind = [e for e in of(events, "card") if e["n"] == start["cut_card_position"] + 1][0]
    assert behind["round"] == rounds[-1]["round"] == len(rounds)
    decisions = of(events, "decision")
    assert decisions and all(d["value"] == "draw" for d in decisions)
    assert {d["user"] for d in decisions} <= {"virtual-player", "virtual-banker"}
    assert all(d["user"] == "virtual-player" for d in decisions if d["name"] == "player_draw")
    for r in rounds:
        assert not r.get("void") and not r.get("irregularities")
        check_coup(r)
    made = {(d["round"], d["name"]) for d in decisions}
    assert made == {(r["round"], n) for r in rounds for n in r["decisions"]}


def test_bank_rotation_over_a_shoe():
    rounds = of(cdf(seed=4), "round_result")
    assert rounds[0]["bank_seat"] == 1
    passes = 0
    for r, nxt in zip(rounds, rounds[1:] + [None]):
        keeps = r["winner"] in ("banker", "tie")
        want = r["bank_seat"] if keeps else r["bank_seat"] % 12 + 1
        assert r["next_bank_seat"] == want
        passes += not keeps
        if nxt is not None:
            assert nxt["bank_seat"] == r["next_bank_seat"]
    assert passes > 10


def test_chemin_de_fer_decisions_file_and_a_forced_false_coup(tmp_path):
    base = cdf()
    rounds = of(base, "round_result")
    first_choice = of(base, "decision")[0]
    f = first_choice["round"]
    forced = next(r["round"] for r in rounds if r["round"] < f and len(r["player"]) == 3
                  and two_card_total(r["player"]) <= 4)
    path = tmp_path / "decisions.txt"
    path.write_text(f"# the players' calls\n1 banker_seat 4\n"
                    f"{forced} player_draw stand   # a false coup: stands on a mandatory draw\n"
                    f"1:{f} {first_choice['name']} stand\n")
    correcting = replace(load_profile("chemin-de-fer"), game_options={"false_coup": "correct"})
    events = cdf(decisions=str(path), profile=correcting)
    got = of(events, "round_result")
    assert got[0]["bank_seat"] == 4 and got[0]["decisions"] == {"banker_seat": 4}
    coup = [e for e in of(events, "irregularity") if e["kind"] == "false_coup"]
    assert len(coup) == 1 and coup[0]["round"] == forced and coup[0]["remedy"] == "correct"
    assert coup[0]["user"] == "virtual-player"
    # corrected at once: the coup is dealt as the tableau says, bets stand
    assert got[forced - 1]["player"] == rounds[forced - 1]["player"]
    assert got[forced - 1]["irregularities"] == ["false_coup"]
    assert not got[forced - 1].get("void")
    assert [r["player"] for r in got[:f - 1]] == [r["player"] for r in rounds[:f - 1]]
    chosen = got[f - 1]
    assert chosen["decisions"][first_choice["name"]] is False
    mine = [d for d in of(events, "decision") if d["round"] == f]
    assert mine[0]["value"] == "stand" and mine[0]["user"] in ("virtual-player", "virtual-banker")
    for r in got:
        check_coup(r)


@pytest.mark.parametrize("name", ["chemin-de-fer", "baccarat-banque"])
def test_the_shipped_profiles_void_a_false_coup(name):
    assert load_profile(name).game_options == {"false_coup": "void"}


def test_false_coup_void_remedy_through_the_pipeline(tmp_path):
    base = of(cdf(), "round_result")
    forced = next(r["round"] for r in base if len(r["player"]) == 3
                  and two_card_total(r["player"]) <= 4)
    path = tmp_path / "d.txt"
    path.write_text(f"{forced} player_draw stand\n")
    events = run_simulation(load_profile("chemin-de-fer"), seed=3, decisions=str(path))
    voided = [r for r in of(events, "round_result") if r["round"] == forced][0]
    assert voided["void"] and voided["irregularities"] == ["false_coup"]
    assert set(voided["bets"].values()) == {0}
    assert [h["reason"] for h in of(events, "hold")] == ["false_coup"]
    assert [o["user"] for o in of(events, "override") if o["action"] == "void_round"] == \
        ["virtual-supervisor"]
    assert of(events, "shoe_ended")[0]["reason"] == "cut_card"


def test_bad_decisions_file_is_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "bad.txt"
    path.write_text("3 player_draw perhaps\n")
    assert main(["simulate", "--profile", "chemin-de-fer", "--seed", "1",
                 "--decisions", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "bad.txt:1" in err and "draw or stand" in err and "\n" not in err
    path.write_text("3 player_draw stand\n")
    assert main(["simulate", "--profile", "macau", "--seed", "1",
                 "--decisions", str(path)]) == 2
    assert "takes no decisions" in capsys.readouterr().err


# --- Baccarat en Banque ---------------------------------------------------------------------

def test_baccarat_en_banque_shoe():
    events = run_simulation(load_profile("baccarat-banque"), seed=2)
    start = of(events, "shoe_started")[0]
    assert start["decks"] == 6 and start["cut_card_position"] == start["cards"] - 10
    rounds = of(events, "round_result")
    assert len(rounds) > 10 and of(events, "shoe_ended")[0]["reason"] == "cut_card"
    bank_draws = [d for d in of(events, "decision") if d["name"] == "bank_draw"]
    assert bank_draws and all(d["user"] == "virtual-banker" for d in bank_draws)
    by_round = {r["round"]: r for r in rounds}
    for d in bank_draws:
        r = by_round[d["round"]]
        drew = len(r["bank"]) == 3
        assert d["value"] == ("draw" if drew else "stand")
        assert (two_card_total(r["bank"]) <= 5) == drew       # the default policy
    for r in rounds:
        assert not r.get("void") and r["bank_seat"] == r["next_bank_seat"] == 1
        for side in ("right", "left"):
            win = r[f"{side}_winner"]
            assert r["bets"][side] == (1 if win == side else 0 if win == "tie" else -1)
            assert r["bets"][f"bank_{side}"] == (0.95 if win == "bank" else
                                                 0 if win == "tie" else -1)


# --- continuous shuffler --------------------------------------------------------------------

def test_macau_csm_deals_rounds_and_the_inventory_reconciles(tmp_path):
    from controller.service.recovery import open_table
    profile = load_profile("macau-csm")
    path = tmp_path / "j.db"
    events = run_simulation(profile, seed=7, journal_path=str(path))
    start = of(events, "shoe_started")[0]
    assert start["cut_card_position"] is None and not of(events, "burn")
    rounds = of(events, "round_result")
    returned = of(events, "cards_returned")
    assert len(returned) == len(rounds) > 60
    for r, back in zip(rounds, returned):
        assert back["round"] == r["round"] and back["cards"] == r["player"] + r["banker"]
    cards = of(events, "card")
    assert len(cards) >= profile.cards                     # the machine never ran out
    assert len(cards) == sum(len(b["cards"]) for b in returned)
    assert not of(events, "irregularity") and not any(r.get("void") for r in rounds)
    assert of(events, "shoe_ended")[0]["reason"] == "cards_dealt"
    # the machine's ledger: every card dealt went back, none is out at the end
    rec, = of(events, "reconciliation")
    assert rec["ok"] and rec["method"] == "ledger" and rec["differences"] == 0
    assert rec["remainder"] == profile.cards and rec["removed"] == 0
    # the journal holds every read, and rebuilds a table whose ledger says the same
    journal = Journal.open_readonly(path)
    reads = [r.data["code"] for r in journal.records(kinds=["input"])
             if r.data["type"] == "card"]
    table, _ = open_table(profile, journal)
    journal.close()
    assert reads == [c["code"] for c in cards]
    inv = table.shoe.inventory
    assert inv.cards_out == 0 and sorted(inv.by_place["returned"]) == sorted(reads)
    assert inv.reconcile([c.code for c in ordered_shoe(profile.decks)]) == []


def test_csm_shoe_file_refuses_a_cut_card(tmp_path, capsys):
    codes = [c.code for c in ordered_shoe(8)]
    path = tmp_path / "csm.shoe"
    path.write_text("\n".join(codes[:400] + ["CUT"] + codes[400:]) + "\n")
    assert main(["simulate", "--profile", "macau-csm", "--shoe-file", str(path)]) == 2
    assert "no cut card" in capsys.readouterr().err


@pytest.mark.parametrize("remedy", [
    "void", "correct"])
def test_journaled_decisions_replay_to_the_same_coups(tmp_path, remedy):
    """The journal holds each decision as an input: replaying the inputs through a fresh table
    gives the same coups, decisions, false coups and bank (the outcome is a function of the
    inputs)."""
    profile = load_profile("chemin-de-fer")
    profile = replace(profile, game_options={**profile.game_options, "false_coup": remedy})
    base = of(cdf(), "round_result")
    forced = next(r["round"] for r in base if len(r["player"]) == 3
                  and two_card_total(r["player"]) <= 4)
    decisions = tmp_path / "d.txt"
    decisions.write_text(f"{forced} player_draw stand\n2 banker_seat 9\n")
    path = tmp_path / "j.db"
    events = cdf(profile=profile, journal_path=str(path), decisions=str(decisions))
    journal = Journal.open_readonly(path)
    table = Table(profile)
    replayed, refused = [], 0
    for rec in journal.records(kinds=["input"]):
        out = table.apply_safely(rec.data)
        assert out.error is None
        assert (out.refused is not None) == ("refused" in rec.data)
        refused += out.refused is not None
        replayed += out.events
    journal.close()
    for kind in ("round_result", "decision", "irregularity", "override"):
        assert of(replayed, kind) == without_seq(of(events, kind))
    coup = [e for e in of(events, "irregularity") if e["kind"] == "false_coup"]
    assert [e["round"] for e in coup] == [forced] and coup[0]["remedy"] == remedy
    assert of(events, "decision")
    assert of(events, "round_result")[1]["bank_seat"] == 9
    assert table.snapshot()["bank"]["banker"] == of(events, "round_result")[-1]["next_bank_seat"]
