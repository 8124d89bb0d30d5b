"""The console for a dealer: the dealer's actions only, the prompt large, the round's layout; a
hold in the dealer's words with nobody's key to clear it; and a supervisor's console on the same
table offering the supervisor's actions, only those that apply. The states are a real table's
views (as the control socket's `state` answers them, with the viewer)."""
from __future__ import annotations

import dataclasses

from controller.console.screens import ActionScreen
from controller.settings.profile import load_profile
from controller.table import Table
from tests.test_console import (PINS, SIZE, FakeTable, make_app, run_async, screen_text,
                                settle, server, short_dir, table, template_db)  # noqa: F401


def _sup(action, **args):
    return {"type": "command", "action": action, "args": args, "user": "sam",
            "role": "supervisor", "reason": "r"}


def _attended_table() -> Table:
    # a house whose rule burns a card that came out face up (the supervisor applies it)
    profile = dataclasses.replace(load_profile("macau"), face_up_card="burn")
    t = Table(profile, auto_open=False, betting_seconds=20)
    t.apply(_sup("new_shoe"))
    for code in "KD 3S 8H JC 2D 9S 4H QC 7D 6S 5C".split():     # K turned: ten more burned
        if t.state != "idle":
            t.apply({"type": "card", "code": code})
    assert t.state == "idle"
    return t


def _view(t: Table, role: str) -> dict:
    return dict(t.view(), table="T1", alarms=[], last_rounds=[],
                viewer={"user": "ana" if role == "dealer" else "sam", "role": role})


def _shown_buttons(app) -> set[str]:
    """The actions that can be taken now: their buttons shown and not greyed out."""
    return {b.id[len("act-"):] for b in app.query("ActionBar Button")
            if b.display and not b.disabled}


def _key_bar(app) -> list[str]:
    """Every button on the bar, in its place (greyed out or not)."""
    return [b.id[len("act-"):] for b in app.query("ActionBar Button") if b.display]


#: the dealer's keys, always the same, in the same places
DEALER_BAR = ["reveal", "open_bets", "close_bets", "report_misplaced", "report_face_up",
              "report_unread", "call_supervisor", "decide", "house_burn",
              "withdraw_house_burn"]


@run_async
async def test_a_dealer_gets_the_dealers_actions_the_prompt_and_the_round(server, table):
    t = _attended_table()
    table.state = _view(t, "dealer")
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.refresh_state()
        await settle(app, pilot)
        assert app.screen.has_class("-dealer")
        assert _shown_buttons(app) == {"open_bets", "call_supervisor", "house_burn"}
        assert sorted(_key_bar(app)) == sorted(DEALER_BAR)
        assert ">>  OPEN BETS  <<" in screen_text(app)
        await pilot.press("h")                    # a supervisor's key: no form for a dealer
        await pilot.pause()
        assert not isinstance(app.screen, ActionScreen)
        # a round being dealt: the layout, and the dealer's reports
        t.apply(_sup("open_bets"))
        t.apply(_sup("close_bets"))
        t.apply({"type": "card", "code": "9H"})
        table.state = _view(t, "dealer")
        await app.refresh_state()
        await settle(app, pilot)
        shown = screen_text(app)
        assert "DEAL THE BANKER'S FIRST CARD" in shown
        assert "PLAYER     9 of hearts" in shown and "▶ next" in shown
        assert _shown_buttons(app) == {"report_misplaced", "report_face_up", "report_unread",
                                       "call_supervisor"}
        assert sorted(_key_bar(app)) == sorted(DEALER_BAR)      # the bar did not move
        assert "Health" not in shown and "Alarms" not in shown       # the supervisor's panels
        # the dealer reports a face-up card: the form asks for no reason, only name and PIN
        await pilot.press("u")
        await pilot.pause()
        assert isinstance(app.screen, ActionScreen)
        assert not app.screen.query("#reason")
        await pilot.press("escape")
        await pilot.pause()
        # the card is held for the supervisor: the dealer reads why, and waits
        t.apply({**_sup("report_face_up"), "role": "dealer", "reason": ""})
        table.state = _view(t, "dealer")
        await app.refresh_state()
        await settle(app, pilot)
        shown = screen_text(app)
        assert "A CARD CAME OUT FACE UP. WAIT FOR THE SUPERVISOR." in shown
        assert "Wait for a supervisor" in shown and "[V]" not in shown
        # a card that leaves the shoe unread while the hold waits joins that hold
        assert _shown_buttons(app) == {"call_supervisor", "report_unread"}
        assert sorted(_key_bar(app)) == sorted(DEALER_BAR)


@run_async
async def test_the_dealers_unread_card_is_told_without_the_supervisors_remedies(server, table):
    """The dealer reports a card that left the shoe unread: the hold reaches the dealer as the
    dealer's screen says it (wait for the supervisor), never as the supervisor's "enter it from
    the layout, or void the round"; the supervisor reads the latter."""
    t = _attended_table()
    t.apply(_sup("open_bets"))
    t.apply(_sup("close_bets"))
    t.apply({"type": "card", "code": "9H"})
    t.apply({**_sup("report_unread"), "role": "dealer", "reason": ""})
    assert t.state == "hold"
    table.state = _view(t, "dealer")
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.refresh_state()
        await settle(app, pilot)
        shown = screen_text(app)
        assert "Wait for the supervisor" in shown and "Wait for a supervisor" in shown
        assert "void the round" not in shown and "enter it" not in shown.lower()
        assert "[E]" not in shown and "[V]" not in shown
        assert _shown_buttons(app) == {"call_supervisor", "report_unread"}
        table.state = _view(t, "supervisor")
        app.role = None                       # the same table, a supervisor's console
        await app.refresh_state()
        await settle(app, pilot)
        shown = screen_text(app)
        assert "The dealer saw a card leave the shoe" in shown and "void the round" in shown
        assert {"enter_card", "void_round"} <= _shown_buttons(app)


@run_async
async def test_a_supervisor_sees_what_applies_now_in_their_language(server, table):
    t = _attended_table()
    t.apply(_sup("open_bets"))
    t.apply(_sup("close_bets"))
    t.apply({"type": "card", "code": "9H"})
    table.state = _view(t, "supervisor")
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.refresh_state()
        await settle(app, pilot)
        buttons = _shown_buttons(app)
        assert {"hold", "void_round", "report_misplaced"} <= buttons
        # a round is in progress: no end of the shoe, no resume, nothing to burn; and a
        # supervisor does not call a supervisor
        assert not buttons & {"end_shoe", "change_shoe", "resume", "burn_card", "open_bets",
                              "call_supervisor"}
        assert "call_supervisor" not in _key_bar(app) and "resume" in _key_bar(app)
        app._language_chosen("zh_Hant")
        await settle(app, pilot)
        shown = screen_text(app)
        assert "發莊家第一張牌" in shown and "紅心9" in shown and "取消本局" in shown
        # the footer's keys too
        footer = shown.splitlines()[-1]
        assert "重新整理" in footer and "語言" in footer and "Refresh" not in footer
        assert "Language" not in footer
        await pilot.press("f2")                    # the picker: its Escape in Chinese too
        await settle(app, pilot)
        assert type(app.screen).__name__ == "LanguageScreen"
        assert app.active_bindings["escape"].binding.description == "取消"


def test_a_language_that_cannot_be_kept_says_so(tmp_path, monkeypatch):
    from controller.console import prefs
    blocked = tmp_path / "file"
    blocked.write_text("")
    monkeypatch.setenv("TABLECTL_CONSOLE_PREFS", str(blocked / "console.json"))  # not a folder
    assert prefs.remember("sam", "th") is False
    assert prefs.language_of("sam") is None
    monkeypatch.setenv("TABLECTL_CONSOLE_PREFS", str(tmp_path / "prefs" / "console.json"))
    assert prefs.remember("sam", "th") is True and prefs.language_of("sam") == "th"
