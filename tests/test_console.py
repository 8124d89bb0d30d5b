"""The supervisor console (Textual pilot) against a real control socket and a fake table."""
from __future__ import annotations

import asyncio
import functools
import io
import shutil
import tempfile
from pathlib import Path

import pytest
from rich.console import Console

from controller.access import roles
from controller.access.accounts import AccountStore, ScryptParams
from controller.cli import main
from controller.console import text
from controller.console.app import ConsoleApp
from controller.console.client import ConsoleClient, Credentials, Outcome, explain
from controller.console.screens import ActionScreen, SignInScreen
from controller.access.server import Command, ControlServer
from controller.words import refuse

FAST = ScryptParams(n=2 ** 4, r=1, p=1)
PINS = {"mia": "manager-pin", "sam": "supervisor-pin", "aud": "auditor-pin"}
SIZE = (130, 48)

HOLD_STATE = {
    "table": "T1", "state": "hold", "prompt": "HOLD: the shoe could not read a card",
    "prompt_words": {"code": "prompt.hold", "fields": {
        "problem": {"code": "problem.unreadable_card", "fields": {}}}},
    # as the table offers them on this hold (any role; each console keeps its role's)
    "actions": ["enter_card", "void_round", "call_supervisor", "decide"],
    "profile": {"name": "macau", "game": "punto_banco", "mode": "default", "decks": 8},
    "shoe": {"number": 3, "cards_out": 57, "cut_seen": False, "rounds": 9},
    "round": {"number": 10, "demo": False, "hands": {"player": ["9H"], "banker": ["2S"]},
              "burned_before": ["7C"], "next": None},     # on hold: nothing is due now
    "hold": {"resume_to": "dealing.P2",
             "problems": [{"kind": "unreadable_card",
                           "detail": "the shoe could not read a card (checksum); enter its code "
                                     "or void the round"}],
             "actions": ["enter_card", "void_round"]},
    "alarms": [{"source": "shoe", "code": "E3", "text": "read head dirty",
                "severity": "warning"}],
    "last_rounds": [
        {"event": "round_result", "shoe": 3, "round": 8, "game": "punto_banco",
         "player": ["9H", "5C", "KD"], "banker": ["2S", "3D"], "player_total": 4,
         "banker_total": 5, "winner": "banker", "bets": {}},
        {"event": "round_result", "shoe": 3, "round": 9, "game": "punto_banco",
         "player": ["AS", "7D"], "banker": ["KC", "QH"], "player_total": 8,
         "banker_total": 0, "winner": "player", "bets": {}},
    ],
}


class FakeTable:
    """The application's side of the socket: answers "state", records the rest."""

    def __init__(self):
        self.state = dict(HOLD_STATE)
        self.commands: list[Command] = []

    def submit(self, command: Command) -> None:
        if command.action == "state":
            command.reply.set_result(self.state)
            return
        self.commands.append(command)
        if command.action == "hold":
            return                                # the test settles command.reply itself
        if command.action == "void_round":
            command.reply.set_exception(refuse("no_round_to_void"))
        else:
            command.reply.set_result({"state": "dealing.B2"})


@pytest.fixture(scope="module")
def template_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("accounts") / "users.db"
    store = AccountStore(path, kdf=FAST)
    store.bootstrap("mia", PINS["mia"])
    store.add("sam", "supervisor", PINS["sam"], by="mia")
    store.add("aud", "auditor", PINS["aud"], by="mia")
    return path


@pytest.fixture
def short_dir():
    # AF_UNIX paths are limited to ~107 bytes; pytest's tmp_path can be longer
    path = Path(tempfile.mkdtemp(prefix="con", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def table():
    return FakeTable()


@pytest.fixture
def server(short_dir, template_db, table):
    shutil.copy(template_db, short_dir / "users.db")
    store = AccountStore(short_dir / "users.db", kdf=FAST)
    with ControlServer(short_dir / "ctl.sock", store, table.submit, reply_timeout_s=5) as srv:
        yield srv


def run_async(test):
    """Run an async test in its own event loop (no pytest plugin needed)."""
    @functools.wraps(test)
    def wrapper(*args, **kwargs):
        asyncio.run(test(*args, **kwargs))
    return wrapper


def make_app(server, *, viewer=Credentials("aud", PINS["aud"]), refresh_s=30.0, user="sam"):
    # a long refresh: the tests poll by hand, so nothing depends on timing
    return ConsoleApp(ConsoleClient(server.path, poll_timeout_s=5), user=user,
                      refresh_s=refresh_s, credentials=viewer)


def screen_text(app) -> str:
    """What the terminal shows, as plain text (the same render export_screenshot uses)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), force_terminal=True,
                      color_system="truecolor", record=True, legacy_windows=False)
    console.print(app.screen._compositor.render_update(
        full=True, screen_stack=app._background_screens))
    return console.export_text()


def form_error(app) -> str:
    """The error line of the open dialog."""
    return str(app.screen.query_one("#error").content)


async def settle(app, pilot) -> None:
    """Let workers finish and the screen redraw."""
    await app.workers.wait_for_complete()
    await pilot.pause()


async def until(pilot, condition, tries: int = 100) -> None:
    """Wait for `condition` (no timing assertion: it fails only if it never happens)."""
    for _ in range(tries):
        if condition():
            return
        await pilot.pause(0.05)
    raise AssertionError("condition never became true")


async def fill(pilot, app, field: str, value: str) -> None:
    """Put `value` in a field of the open dialog (typing every key is slow)."""
    field_widget = app.screen.query_one(f"#{field}")
    field_widget.focus()
    field_widget.value = value
    await pilot.pause()


async def type_into(pilot, app, field: str, value: str) -> None:
    """Type `value` key by key into a field of the open dialog."""
    app.screen.query_one(f"#{field}").focus()
    await pilot.press(*value)


# --- the hold, and clearing it ------------------------------------------------------------------

@run_async
async def test_hold_panel_shows_problem_and_what_clears_it(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.refresh_state()
        await settle(app, pilot)
        shown = screen_text(app)
        assert "TABLE ON HOLD" in shown
        # the problem once, in words (the controller's detail is for the log)
        assert shown.count("The shoe could not read a card") == 1
        assert "checksum" not in shown
        assert "[E] Enter card" in shown and "[V] Void round" in shown
        assert "ON HOLD: THE SHOE COULD NOT READ A CARD" in shown       # the prompt, large
        assert "Table T1" in shown and "macau (Punto Banco, 8 decks)" in shown
        assert "State: on hold" in shown
        assert "Shoe 3: 57 cards out, 9 rounds" in shown
        assert "PLAYER     9 of hearts   ▶ next" in shown and "2 of spades" in shown
        assert "Burned before this round: 7 of clubs" in shown
        assert "Next card once the hold is cleared: the Player's second card" in shown
        assert "#8  P 9H 5C KD = 4   B 2S 3D = 5   BANKER" in shown
        assert "WARNING shoe E3: read head dirty" in shown
        assert app.query_one("#act-enter_card").has_class("-needed")
        assert app.query_one("#act-void_round").has_class("-needed")
        # only what applies now is offered: no burn, no end of shoe, on this hold
        assert not app.query_one("#act-burn_card").display
        assert not app.query_one("#act-end_shoe").display
        assert app.query_one("#act-call_supervisor").display


@run_async
async def test_enter_card_sends_the_request(server, table):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.refresh_state()
        await settle(app, pilot)
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ActionScreen)
        assert "clear the hold" in screen_text(app)
        await type_into(pilot, app, "arg-code", "10h")
        await fill(pilot, app, "reason", "reader missed it")
        assert app.screen.query_one("#user").value == "sam"        # prefilled from --user
        await type_into(pilot, app, "pin", PINS["sam"])
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(app.screen, ActionScreen))
        await settle(app, pilot)
        [cmd] = table.commands
        assert (cmd.user, cmd.role, cmd.action, dict(cmd.args), cmd.reason) == \
            ("sam", "supervisor", "enter_card", {"code": "10h"}, "reader missed it")
        # for the shoe and round on the screen: the table refuses it if it has moved on
        assert cmd.expect == {"shoe": 3, "round": 10}
        assert "Enter card: done. The table now: a round is being dealt." in screen_text(app)


@run_async
async def test_refusal_is_shown_in_plain_words(server, table):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.refresh_state()
        await settle(app, pilot)
        await pilot.click("#act-void_round")
        await pilot.pause()
        await fill(pilot, app, "reason", "card fell")
        await fill(pilot, app, "pin", PINS["sam"])
        await pilot.click("#send")
        await settle(app, pilot)
        assert isinstance(app.screen, ActionScreen)                  # stays open to fix
        assert form_error(app) == ("Refused. The table cannot do that now: There is no round "
                                   "in progress to void.")
        assert "Refused. The table cannot do that now" in screen_text(app)
        assert [c.action for c in table.commands] == ["void_round"]
        assert app.screen.query_one("#pin").value == ""               # the PIN is not kept


@run_async
async def test_wrong_pin_is_refused_and_nothing_reaches_the_table(server, table):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.refresh_state()
        await pilot.press("v")
        await pilot.pause()
        await fill(pilot, app, "reason", "dealer exposed a card")
        await fill(pilot, app, "pin", "not-the-pin")
        await pilot.press("enter")
        await settle(app, pilot)
        assert form_error(app).startswith("Refused. Name or PIN not accepted: wrong PIN for "
                                          "'sam'")
        assert app.screen.focused.id == "pin"
        assert table.commands == []


@run_async
async def test_form_checks_before_sending(server, table):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("e")
        await pilot.pause()
        await fill(pilot, app, "arg-code", "ZZ")
        await fill(pilot, app, "pin", PINS["sam"])
        await pilot.click("#send")
        await pilot.pause()
        assert form_error(app) == "The Card is not right: give the card, e.g. 9H, TD, AS, 10c."
        await fill(pilot, app, "arg-code", "AS")
        # a button ignores clicks for a moment after it was pressed (Textual's -active)
        await until(pilot, lambda: not app.screen.query_one("#send").has_class("-active"))
        await pilot.click("#send")
        await pilot.pause()
        assert form_error(app).startswith("Give a reason")
        assert app.screen.focused.id == "reason"
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ActionScreen)
        assert "Enter card: cancelled, nothing sent." in screen_text(app)
        assert table.commands == []


@run_async
async def test_the_form_waits_for_the_answer(server, table):
    table.state = dict(HOLD_STATE, state="betting", hold=None, actions=["hold", "void_round"],
                       prompt_words={"code": "prompt.bets_open", "fields": {}})
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.refresh_state()
        await settle(app, pilot)
        await pilot.press("h")
        await pilot.pause()
        await fill(pilot, app, "reason", "checking the shoe")
        await fill(pilot, app, "pin", PINS["sam"])
        await pilot.click("#send")
        await until(pilot, lambda: table.commands)
        await pilot.press("escape")                   # the request is out: no closing yet
        await pilot.pause()
        assert isinstance(app.screen, ActionScreen)
        assert form_error(app).startswith("Sending")
        table.commands[0].reply.set_result({"state": "hold"})
        await until(pilot, lambda: not isinstance(app.screen, ActionScreen))
        await settle(app, pilot)
        assert "Hold: done. The table now: on hold." in screen_text(app)
        # the hold's one text box is the reason; it is the note the hold shows
        assert dict(table.commands[0].args) == {"note": "checking the shoe"}


@run_async
async def test_decide_sends_name_and_value(server, table):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("k")
        await pilot.pause()
        await fill(pilot, app, "arg-name", "player_draw")
        await fill(pilot, app, "arg-value", "true")
        assert not app.screen.query("#reason")          # a dealer's action: no reason asked
        await fill(pilot, app, "pin", PINS["sam"])
        await pilot.click("#send")
        await until(pilot, lambda: table.commands)
        assert dict(table.commands[0].args) == {"name": "player_draw", "value": True}


# --- connection and sign-in ---------------------------------------------------------------------

@run_async
async def test_disconnected_banner_when_the_socket_is_gone(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.refresh_state()
        await settle(app, pilot)
        server.close()
        await app.refresh_state()
        await pilot.pause()
        shown = screen_text(app)
        assert "DISCONNECTED: no controller answers" in shown
        assert "no controller listening on" in shown
        assert "Retrying every 30 s" in shown
        assert "TABLE ON HOLD" in shown                  # the last state stays, marked stale
        assert app.query_one("#hold").has_class("stale")


@run_async
async def test_polls_on_its_own_and_recovers(short_dir, template_db, table):
    shutil.copy(template_db, short_dir / "users.db")
    store = AccountStore(short_dir / "users.db", kdf=FAST)
    srv = ControlServer(short_dir / "ctl.sock", store, table.submit)
    app = make_app(srv, refresh_s=0.1)
    async with app.run_test(size=SIZE) as pilot:
        # the first poll can fail before the main screen is mounted: wait for both
        await until(pilot, lambda: app.connected is False and bool(app.query("#banner")))
        assert app.query_one("#banner").message.startswith("DISCONNECTED")
        with srv:
            await until(pilot, lambda: app.connected)
            await pilot.pause()
            assert not app.query_one("#banner").has_class("-shown")
            assert "TABLE ON HOLD" in screen_text(app)


@run_async
async def test_sign_in_then_refused_sign_in_asks_again(server):
    app = make_app(server, viewer=None, user="aud")
    async with app.run_test(size=SIZE) as pilot:
        assert isinstance(app.screen, SignInScreen)
        assert "Not signed in" in screen_text(app)
        await pilot.press(*PINS["aud"], "enter")
        await until(pilot, lambda: app.state is not None)
        assert app.viewer.user == "aud"
        # the first answer brings a read-only view token; the PIN is not kept for polling
        assert app.viewer.pin == "" and app.viewer.token
        await app.refresh_state()
        await pilot.pause()
        assert app.connected and app.viewer.token
        # the account's PIN changed: the next poll is refused, polling stops, sign-in again
        app.viewer = Credentials("aud", "old-pin-123")
        await app.refresh_state()
        await pilot.pause()
        assert app.viewer is None and isinstance(app.screen, SignInScreen)
        assert "Name or PIN not accepted" in screen_text(app)


# --- pieces -------------------------------------------------------------------------------------

def test_every_override_has_a_key_and_words():
    # every override, plus `decide` (a dealer's entry of a player's call) and `reveal` (the
    # dealer's turn of the hands), also on the console
    supervisors = [a for a in text.ACTIONS if a in roles.SUPERVISOR_ACTIONS]
    assert set(supervisors) == set(roles.SUPERVISOR_ACTIONS)     # each with its key
    dealers = {"open_bets", "close_bets", "report_misplaced", "report_face_up",
               "call_supervisor", "decide", "reveal"}
    assert dealers <= set(text.ACTIONS) and dealers <= set(roles.DEALER_ACTIONS)
    keys = [a.key for a in text.ACTIONS.values()]
    assert len(set(keys)) == len(keys)
    for name, spec in roles.ACTION_ARGS.items():
        if name in text.ACTIONS:
            from controller.words.catalogue import ARGS
            assert all(f"arg.{arg.name}" in ARGS for arg in spec)


def test_history_lines():
    andar = {"round": 3, "game_card": "7H", "andar": ["5D", "5S", "7S"], "bahar": ["KD", "TD"],
             "winner": "andar", "cards_dealt": 5}
    assert text.history_line(andar) == "#3  GAME 7H   A 5D 5S 7S   B KD TD   ANDAR"
    void = {"round": 4, "player": ["AS"], "banker": [], "void": True, "reason": "supervisor",
            "demo": True, "burned_before": ["7C"], "irregularities": ["hold"]}
    assert text.history_line(void) == "#4  P AS   B    VOID (by a supervisor)  (demo)"
    banque = {"round": 5, "right": ["AS", "2C"], "left": ["9D", "KC"], "bank": ["3H", "3S"],
              "right_total": 3, "left_total": 9, "bank_total": 6, "right_winner": "bank",
              "left_winner": "left", "naturals": ["left"]}
    assert text.history_line(banque) == ("#5  R AS 2C = 3   L 9D KC = 9   B 3H 3S = 6   "
                                         "RIGHT: BANK, LEFT: LEFT")


def test_round_slots():
    dealing = {"number": 4, "hands": {"player": ["9H", "5C"], "banker": ["2S", "3D"]},
               "next": "player_third"}
    shown = text.round_text(dealing).plain
    assert "PLAYER     9 of hearts   5 of clubs   ▶ next" in shown
    assert shown.endswith("Next card: the Player's third card")
    entered = dict(dealing, entered=["5C"])         # typed by a supervisor: marked
    assert "5 of clubs (entered by hand)" in text.round_text(entered).plain
    done = dict(dealing, next=None)
    assert text.round_text(done).plain.endswith("All cards dealt.")
    held = {"resume_to": "betting", "problems": [{"kind": "hold"}]}
    assert text.round_text(done, held).plain.endswith("No card is taken while the table is "
                                                      "on hold.")
    banque = {"number": 1, "hands": {"right": ["AS"], "left": ["2C"], "bank": [],
                                     "decisions": {"right_player": 3}}, "next": "B1"}
    shown = text.round_text(banque, game="baccarat_banque").plain
    assert "BANK       ▶ next" in shown and "Decisions: who plays the right hand: seat 3" in shown
    assert shown.endswith("Next card: the bank's first card")
    andar = {"number": 2, "hands": {"game_card": ["7H"], "andar": ["5D"], "bahar": []},
             "next": "bahar"}
    shown = text.round_text(andar).plain
    assert "GAME CARD  7 of hearts" in shown and "ANDAR      5 of diamonds" in shown
    assert "BAHAR      ▶ next" in shown


def test_text_survives_odd_state():
    odd = {"state": 5, "profile": "x", "shoe": [], "round": {"hands": {"player": "9H"}},
           "hold": {"problems": "no", "actions": [3, "nope"]}, "alarms": [1, {"text": "\x1b[2J"}],
           "last_rounds": "none"}
    assert "Table ?" in text.header_text(odd).plain
    assert "Round ?" in text.round_text(odd["round"]).plain
    assert "then Resume" in text.hold_text(odd["hold"]).plain
    assert "\x1b" not in text.alarms_text(odd["alarms"]).plain
    assert text.history_text(odd["last_rounds"]).plain.startswith("No rounds")
    assert text.round_text({"number": 2, "hands": {"andar": [], "bahar": [], "game_card": []},
                            "next": "game_card"}).plain.endswith("Next card: the game card")


def test_client_outcomes(server, short_dir):
    client = ConsoleClient(server.path)
    ok = client.fetch_state(Credentials("aud", PINS["aud"]))
    assert ok.ok and ok.result["state"] == "hold"
    bad = client.fetch_state(Credentials("aud", "wrong-pin"))
    assert bad.auth_problem and bad.plain().startswith("Name or PIN not accepted")
    gone = ConsoleClient(short_dir / "none.sock").fetch_state(Credentials("aud", "x"))
    assert gone.unavailable and "no controller listening" in gone.plain()
    assert "secret-pin" not in repr(Credentials("aud", "secret-pin"))
    assert explain("strange", "") == "Refused"
    assert Outcome(True).plain() == "Done."


def test_command_refuses_bad_refresh_and_no_terminal(capsys):
    assert main(["console", "--refresh-s", "0", "--socket", "/tmp/x.sock"]) == 2
    assert "--refresh-s must be between" in capsys.readouterr().err
    assert main(["console", "--socket", "/tmp/x.sock"]) == 2      # pytest gives no terminal
    assert "needs a terminal" in capsys.readouterr().err


@run_async
async def test_polls_go_on_while_a_form_is_open(server, table):
    """The console keeps polling behind an open form, which stays as it is (what the
    supervisor typed is not lost), and shows the newest state once the form closes."""
    app = make_app(server, refresh_s=0.25)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.state is not None)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.screen, ActionScreen))
        await type_into(pilot, app, "arg-code", "10h")
        polled = app.state_at
        await until(pilot, lambda: app.state_at != polled)      # polled behind the form
        await pilot.pause(0.3)
        assert isinstance(app.screen, ActionScreen) and app.is_running
        assert app.screen.query_one("#arg-code").value == "10h"
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, ActionScreen))
        await until(pilot, lambda: "TABLE ON HOLD" in screen_text(app))


@run_async
async def test_a_pin_typed_blind_always_lands_in_the_pin_field(server, table):
    """Every dialog opens on its first empty field, never on the name already filled in (so a
    dialog that asks nothing else opens on the PIN), and after any refusal the cursor is in the
    PIN field: keys typed without looking go there, hidden, whatever the refusal was."""
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.refresh_state()
        # a form of name and PIN only, and one with an argument and a reason before them
        for action in ("reveal", "enter_card"):
            screen = ActionScreen(action, app.client, user="sam")
            await app.push_screen(screen)
            await pilot.pause()
            fields = [f.id for f in screen.query("Input")]
            expected = next(f for f in fields if f != "user")
            assert screen.focused.id == expected, (action, fields, screen.focused.id)
            if fields == ["user", "pin"]:
                assert screen.focused.id == "pin" and screen.query_one("#pin").password
            screen.dismiss(None)
            await pilot.pause()
        said = set()
        # (a wrong PIN: test_wrong_pin_is_refused_and_nothing_reaches_the_table)
        for user, pin in (("sam", PINS["sam"]),          # the table refuses (no round to void)
                          ("aud", PINS["aud"])):         # the role may not
            screen = ActionScreen("void_round", app.client, user=user)
            await app.push_screen(screen)
            await pilot.pause()
            await fill(pilot, app, "reason", "dealer exposed a card")
            await fill(pilot, app, "pin", pin)
            screen.query_one("#user").focus()          # wherever the cursor was
            await pilot.click("#send")
            await settle(app, pilot)
            assert form_error(app).startswith("Refused"), form_error(app)
            said.add(form_error(app))
            assert screen.focused.id == "pin" and screen.query_one("#pin").value == ""
            await pilot.press(*"123456")
            assert screen.query_one("#pin").value == "123456"
            assert screen.query_one("#user").value == user
            screen.dismiss(None)
            await pilot.pause()
        assert len(said) == 2
        for user, focused in (("sam", "pin"), ("", "user")):    # the sign-in, asked again
            screen = SignInScreen(server.path, user, "Refused.")
            await app.push_screen(screen)
            await pilot.pause()
            assert screen.focused.id == focused
            screen.dismiss(None)
            await pilot.pause()


# --- a lock, and the way out of it -------------------------------------------------------------

@run_async
async def test_a_locked_account_is_told_the_way_out_and_signs_in_once_a_manager_opens_it(
        short_dir, template_db, table):
    """Wrong PINs from elsewhere (one console alone is slowed down before it could lock an
    account) lock sam's account: the console's sign-in says how it opens (by itself, or a
    manager's `tablectl users enable`), in the reader's language; once the manager has, sam's
    next sign-in shows the table at once."""
    shutil.copy(template_db, short_dir / "users.db")
    store = AccountStore(short_dir / "users.db", kdf=FAST)
    for attempt in range(store.max_failures):
        assert not store.authenticate("sam", f"not-the-pin-{attempt}").ok
    with ControlServer(short_dir / "ctl.sock", store, table.submit, reply_timeout_s=5) as srv:
        app = ConsoleApp(ConsoleClient(srv.path, poll_timeout_s=5), user="sam", refresh_s=30.0,
                         language="zh_Hant")
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SignInScreen))
            app.screen.query_one("#pin").value = PINS["sam"]
            app.screen.sign_in()
            await settle(app, pilot)
            await until(pilot, lambda: isinstance(app.screen, SignInScreen))
            said = form_error(app)
            assert said.startswith("此帳戶已鎖定") and "sam 的帳戶" in said, said
            assert "tablectl users enable sam --as MANAGER" in said and "分鐘後自動解鎖" in said
            store.enable("sam", by="mia")                   # the manager opens it
            app.screen.query_one("#pin").value = PINS["sam"]
            app.screen.sign_in()
            await settle(app, pilot)
            await until(pilot, lambda: app.state is not None)
            assert not isinstance(app.screen, SignInScreen)
            assert app.query_one("#banner").message == ""


@run_async
async def test_every_panel_title_is_in_the_readers_language(server):
    app = make_app(server)
    async with app.run_test(size=SIZE) as pilot:
        await app.refresh_state()
        app._language_chosen("zh_Hant")
        await settle(app, pilot)
        titles = {p.id: str(p.border_title) for p in app.query("Panel")}
        assert titles == {"hold": "暫停", "round": "本局", "roads": "路單", "alarms": "警報",
                          "health": "系統狀況", "history": "最近 10 局"}, titles
