"""The house burn and the invalid shoe through the one loop: the table service on the virtual
clock, a shoe loaded by hand from a known order behind the simulated shoe's URL, the virtual
dealer pulling a card only when the table asks for one, and a dealer and a supervisor who act
on what the table publishes, through the service's queue as the control socket's commands do
(tests/test_house_burn_live.py does the same at a live table, through the socket itself). Then
what recall and the report say of it, read from the journal."""
from __future__ import annotations

from dataclasses import replace

import pytest

from controller.commands._people import Actors, People
from controller.journal import Journal
from controller.journal.recall import select_rounds
from controller.journal.recall_text import format_text
from controller.report.collect import collect
from controller.service.build import DeviceSettings, TableSpec, build
from controller.service.clock import VirtualClock
from controller.service.parts import Listener
from controller.service.cycle import ShoePlan
from controller.settings.profile import load_profile
from controller.table import Table
from controller.table.inputs import command
from controller.words.fields import card as card_name
from simulators.rig import SimRig
from tests.eventcheck import check_events
from tests.tablekit import burn_shoe_start, deal, new_shoe, of, shuffled_shoe, sup

DEALER = {"user": "ann", "role": "dealer"}


def play(tmp_path, results: str = "stand", house_burn: str = "supervisor"):
    """One shoe: round 2 has a house burn, and at round 4's start the supervisor declares
    the shoe invalid. The journal's records, and the shoe's cards in their order."""
    base = load_profile("macau")
    profile = replace(base, burn=replace(base.burn, invalid_shoe_rounds=results,
                                         house_burn=house_burn))
    cards = shuffled_shoe(3, profile.decks)
    clock = VirtualClock()
    rig = SimRig(profile.decks, protocol="beetek", seed=3, clock=clock)
    path = str(tmp_path / "j.db")
    actors = Actors(dealer=True, dealer_pace_s=0.5,
                    hand_cards=lambda shoe: cards if shoe == 1 else None)

    def people(rt):
        # people at the table, acting a few seconds after what they see
        svc = rt.service

        def person(e: dict) -> None:
            if e["event"] == "bets_open" and e.get("round") == 2:
                svc.call_later(3.0, lambda: svc.submit(command("house_burn", **DEALER)))
            elif e["event"] == "house_burn" and e["stage"] == "announced" \
                    and house_burn == "supervisor":
                # after the betting window ran out: the bets wait for the burn all the same
                svc.call_later(25.0, lambda: svc.submit(command(
                    "confirm_house_burn", user="sam", role="supervisor",
                    reason="the house burns at the round's start")))
            elif e["event"] == "bets_open" and e.get("round") == 4:
                svc.call_later(2.0, lambda: svc.submit(command(
                    "declare_invalid", user="sam", role="supervisor",
                    reason="no burn at the shoe's start, seen on the camera")))
        return Listener(person)

    spec = TableSpec(
        profile, journal_path=path, shoes=0, clock=clock, rig=rig, betting_seconds=20.0,
        devices=DeviceSettings(shoe_url=rig.shoe_url, protocol="beetek",
                               shoe_options=dict(read_timeout_s=0.01,
                                                 reconnect_initial_s=0.01,
                                                 reconnect_max_s=0.05)),
        plan=lambda n: ShoePlan(402, shuffler=False) if n == 1 else None,
        people=(*People(rig, actors, profile).makers(), people))
    runtime = build(spec)
    runtime.run()
    assert runtime.cycle.done
    with Journal.open_readonly(path) as j:
        assert j.verify().ok
        records = list(j.records())
        stories = select_rounds(j, last=10)
        report = collect(j)
    return records, cards, stories, report


@pytest.mark.xdist_group("report")       # the report's renderer: on test_report.py's worker
@pytest.mark.parametrize("results", ["stand", "void"])
def test_a_house_burn_then_a_forgotten_shoe_burn_found_after_three_rounds(tmp_path, results):
    records, shoe, stories, report = play(tmp_path, results)
    cards = [r.data for r in records if r.kind == "card"]
    assert [c["code"] for c in cards] == shoe[:len(cards)]          # read order, none lost
    house = [c for c in cards if "house_burn" in c["flags"]]
    assert len(house) == 1 and house[0]["slot"] == "burn" and house[0]["round"] == 2
    # the burn came while bets were open: the window's timer waited for it, then the hands
    i = cards.index(house[0])
    assert cards[i + 1]["round"] == 2 and cards[i + 1]["slot"] != "burn"
    seqs = {(r.kind, r.data.get("round"), r.data.get("stage")): r.seq for r in records
            if r.kind in ("bets_closed", "house_burn")}
    assert seqs[("house_burn", 2, "burned")] < seqs[("bets_closed", 2, None)]
    stages = [(r.data["stage"], r.data.get("announced_by"), r.data.get("confirmed_by"))
              for r in records if r.kind == "house_burn"]
    assert stages == [("announced", "ann", None), ("due", "ann", "sam"),
                      ("burned", "ann", "sam")]
    # three rounds settled, round 4 opened but not dealt: cancelled; the shoe ends invalid
    settled = [r.data for r in records if r.kind == "round_result"]
    assert [r["round"] for r in settled] == [1, 2, 3]
    assert not any(r.get("void") for r in settled)
    assert len([r for r in records if r.kind == "round_cancelled"]) == 1
    ended, = [r.data for r in records if r.kind == "shoe_ended"]
    assert (ended["reason"], ended["cause"], ended["results"], ended["settled"]) == (
        "invalid", "shoe_burn_forgotten", results, 3)
    voided = [(r.data["round"], r.data["reason"]) for r in records if r.kind == "round_voided"]
    assert voided == ([(1, "invalid_shoe"), (2, "invalid_shoe"), (3, "invalid_shoe")]
                      if results == "void" else [])
    assert [r.data["action"] for r in records if r.kind == "override"] == [
        "confirm_house_burn", "declare_invalid"]
    # as published: every field of the new events is in the contract
    check_events([{**r.data, "event": r.kind, "seq": r.seq} for r in records
                  if r.kind in ("house_burn", "round_voided", "shoe_ended", "card")],
                 stamped=False)
    # recall tells the house burn with who announced and who confirmed it, and the shoe's end
    told = format_text(stories, source="j.db")
    assert (f"{card_name(house[0]['code'], 'en')} burned for the house, announced by ann, "
            f"confirmed by sam") in told
    two = next(s for s in stories if s["round"] == 2)
    assert [b["stage"] for b in two["house_burns"]] == ["announced", "due", "burned"]
    if results == "void":
        assert "its 3 rounds are all void" in told
        assert all(s["void"] and s["reason"] == "invalid_shoe" for s in stories
                   if s["round"] <= 3)
        assert told.count("VOID (the shoe was declared invalid)") == 3
    else:
        assert "the results of its 3 rounds stand" in told
        assert not any(s["void"] for s in stories)
    # the report: the house burn, why the shoe ended, and void rounds counted as void (its
    # module brings matplotlib: imported here, not by every worker's collection)
    from controller.report.render import tables
    said = {t.title: t for t in tables(report, None, None)}
    burns = said["House burns"].rows
    assert len(burns) == 1 and burns[0][1:3] == ["1", "2"]
    assert burns[0][3].endswith("announced by ann, confirmed by sam")
    assert said["Shoes"].rows[0][7] == "invalid: not an authorised game"
    assert ("declared invalid" in said["Shoes"].note)
    assert report.void == (3 if results == "void" else 0)
    assert sum(report.winners.values()) == (0 if results == "void" else 3)
    assert all(n == (0 if results == "void" else 3) for _, n in report.bets.values())


def test_the_dealer_alone_where_the_profile_allows_it(tmp_path):
    records, _, stories, report = play(tmp_path, house_burn="dealer")
    stages = [(r.data["stage"], r.data.get("confirmed_by")) for r in records
              if r.kind == "house_burn"]
    assert stages == [("announced", None), ("due", None), ("burned", None)]
    told = format_text(stories, source="j.db")
    assert "announced by ann (the dealer alone, as the profile allows)" in told
    assert [r.data["action"] for r in records if r.kind == "override"] == ["declare_invalid"]


def _idle_table(profile: str = "macau") -> Table:
    t = Table(load_profile(profile), auto_open=False, betting_seconds=30.0)
    new_shoe(t, cut_position=402)
    burn_shoe_start(t)
    return t


def test_a_house_burn_while_bets_are_open_waits_for_its_one_card():
    t = _idle_table()
    t.apply(command("open_bets", **DEALER))
    t.apply(command("house_burn", **DEALER))
    refused = t.apply_safely(command("close_bets", **DEALER))
    assert refused.refused is not None and "house burn" in str(refused.refused)
    assert t.apply_safely(command("house_burn", **DEALER)).refused is not None   # once
    # a card before the confirmation is a card drawn while bets were open, as ever
    snap = t.snapshot()
    t.apply({"type": "card", "code": "9D"})
    assert t.hold is not None and t.hold.last.kind == "card_while_betting"
    t = Table.restore(t.profile, snap, auto_open=False, betting_seconds=30.0)
    t.apply(sup("confirm_house_burn"))
    assert t.status()["house_burn"] == "due" and t.expects() == "card"
    out = t.apply({"type": "card", "code": "9D"})
    assert of(out, "card")[0]["round"] == 1 and of(out, "card")[0]["flags"] == ["house_burn"]
    assert t.state == "betting" and t.round.burned_before == [] and t.round.cards == 0
    t.apply(command("close_bets", **DEALER))
    out = deal(t, "2H 3H 4H 5H")
    assert [c["slot"] for c in of(out, "card")][:2] == ["P1", "B1"]


def test_a_house_burn_withdrawn_lets_bets_close_and_is_recorded():
    t = _idle_table()
    t.apply(command("open_bets", **DEALER))
    t.apply(command("house_burn", **DEALER))
    out = t.apply(command("withdraw_house_burn", user="sam", role="supervisor"))
    assert of(out, "house_burn")[0]["stage"] == "withdrawn"
    assert of(out, "house_burn")[0]["withdrawn_by"] == "sam"
    assert "house_burn" in t.offers() and "withdraw_house_burn" not in t.offers()
    t.apply(command("close_bets", **DEALER))
    assert t.state.startswith("dealing.")


def test_no_house_burn_once_a_card_of_the_round_is_out_nor_an_invalid_shoe_mid_round():
    t = _idle_table()
    t.apply(command("open_bets", **DEALER))
    t.apply(command("close_bets", **DEALER))
    deal(t, "2H")
    assert "house_burn" not in t.offers() and "declare_invalid" not in t.offers()
    refused = t.apply_safely(sup("declare_invalid"))
    assert refused.refused is not None and "round is in progress" in str(refused.refused)
    # on the supervisor's own hold it applies: the round in progress is void first
    t.apply(sup("hold", note="the shoe was never burned"))
    assert "declare_invalid" in t.offers()
    out = t.apply(sup("declare_invalid"))
    void, = of(out, "round_result")
    assert void["void"] and void["reason"] == "invalid_shoe"
    ended, = of(out, "shoe_ended")
    assert ended["reason"] == "invalid" and ended["settled"] == 0


def test_the_profile_keys_take_only_their_values(tmp_path):
    import tomllib
    from controller.errors import ProfileError
    from controller.settings.profile import parse_profile, resolve
    data = tomllib.loads(resolve("macau").read_text("utf-8"))
    data["burn"]["house_burn"] = "anyone"
    with pytest.raises(ProfileError) as err:
        parse_profile(data, "house.toml")
    assert "house_burn" in str(err.value) and "supervisor" in str(err.value)
    data["burn"].update(house_burn="dealer", invalid_shoe_rounds="void")
    burn = parse_profile(data, "house.toml").burn
    assert (burn.house_burn, burn.invalid_shoe_rounds) == ("dealer", "void")
