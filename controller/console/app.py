"""The supervisor console: a Textual App that polls the controller and sends overrides.

Every `refresh_s` seconds the app asks the controller for its state (in a worker thread, one
request at a time) and redraws the panels. When the controller does not answer, a
DISCONNECTED banner says so and the last state stays on screen, marked stale, while the app
keeps retrying. A refused viewing sign-in stops the polling at once (a wrong PIN repeated
every second would lock the account) and asks for the sign-in again.
"""
from __future__ import annotations

import asyncio
import time
from typing import Any

from textual import on
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Footer

from controller.console import text
from controller.console.client import ConsoleClient, Credentials, Outcome
from controller.console.screens import ActionScreen, SignInScreen
from controller.console.widgets import (ActionBar, AlarmList, Banner, HeaderBar, HistoryList,
                                        HoldPanel, PromptBox, RoadsPanel, RoundView, StatusLine)


class ConsoleApp(App[int]):
    """The full-screen console for one table's controller."""

    TITLE = "tablectl console"
    CSS = """
    #body { height: 1fr; }
    #left { width: 3fr; }
    #right { width: 2fr; }
    .stale { opacity: 60%; }
    """
    BINDINGS = [Binding(info.key, f"override('{info.name}')", info.title, show=False)
                for info in text.ACTIONS.values()] + [
        Binding("ctrl+r", "refresh_now", "Refresh"),
        Binding("ctrl+q", "quit", "Quit"),
    ]

    def __init__(self, client: ConsoleClient, *, user: str = "", refresh_s: float = 1.0,
                 credentials: Credentials | None = None) -> None:
        super().__init__()
        self.client = client
        self.user = user
        self.refresh_s = refresh_s
        self.viewer = credentials
        self.state: dict[str, Any] | None = None
        self.state_at: float | None = None
        self.connected: bool | None = None
        self._polling = False

    # -- layout --------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Banner(id="banner")
        yield HeaderBar("Waiting for the controller…", id="header")
        yield PromptBox(id="prompt")
        with Horizontal(id="body"):
            with VerticalScroll(id="left"):
                yield HoldPanel(id="hold")
                yield RoundView(id="round")
                yield RoadsPanel(id="roads")
            with VerticalScroll(id="right"):
                yield AlarmList(id="alarms")
                yield HistoryList(id="history")
        yield ActionBar(id="actions")
        yield StatusLine(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(self.refresh_s, self.refresh_state)
        if self.viewer is None:
            self.ask_sign_in()
        else:
            self.run_worker(self.refresh_state(), group="poll")

    # -- viewing sign-in -----------------------------------------------------------------------

    def ask_sign_in(self, message: str = "") -> None:
        self.query_one(Banner).say("Not signed in: sign in to see the table."
                                   + (f" {message}" if message else ""))
        self.push_screen(SignInScreen(self.client.socket_path, self.user, message),
                         self._signed_in)

    def _signed_in(self, credentials: Credentials | None) -> None:
        if credentials is None:
            return
        self.viewer = credentials
        self.user = self.user or credentials.user
        self.query_one(Banner).say("Signing in…")
        self.run_worker(self.refresh_state(), group="poll")

    # -- polling -------------------------------------------------------------------------------

    async def refresh_state(self) -> None:
        """Ask the controller for its state once and show the answer (skipped if one is out)."""
        if self.viewer is None or self._polling:
            return
        self._polling = True
        try:
            outcome = await asyncio.to_thread(self.client.fetch_state, self.viewer)
        finally:
            self._polling = False
        self.apply(outcome)

    def action_refresh_now(self) -> None:
        self.run_worker(self.refresh_state(), group="poll")

    def apply(self, outcome: Outcome) -> None:
        """Show a poll's outcome: the state, a disconnection, or a refused sign-in."""
        banner = self.query_one(Banner)
        if outcome.ok:
            if outcome.view_token and self.viewer is not None and self.viewer.pin:
                self.viewer = self.viewer.viewing(outcome.view_token)   # the PIN is dropped
            self.connected = True
            self.state, self.state_at = outcome.result, time.time()
            banner.say("")
            self.show_state(outcome.result)
            return
        if outcome.auth_problem:
            self.viewer = None
            self.ask_sign_in(outcome.plain())
            return
        self.connected = False
        seen = ""
        if self.state_at is not None:
            at = time.strftime("%H:%M:%S", time.localtime(self.state_at))
            seen = f" Showing the state received at {at}."
        if outcome.unavailable:
            banner.say(f"DISCONNECTED: {outcome.message}. Retrying every {self.refresh_s:g} s."
                       + seen)
        else:
            banner.say(f"NO STATE: {outcome.plain()}. Retrying every {self.refresh_s:g} s."
                       + seen)
        for panel in self._panels():
            panel.add_class("stale")

    def _panels(self) -> list[Any]:
        return [self.query_one(HeaderBar), self.query_one(PromptBox), self.query_one(HoldPanel),
                self.query_one(RoundView), self.query_one(RoadsPanel), self.query_one(AlarmList),
                self.query_one(HistoryList)]

    def show_state(self, state: dict[str, Any]) -> None:
        for panel in self._panels():
            panel.remove_class("stale")
            panel.show(state)
        self.query_one(ActionBar).highlight(self.needed_actions())

    def needed_actions(self) -> list[str]:
        """The overrides that clear the current hold."""
        if not self.state or not text.on_hold(self.state):
            return []
        return text.hold_actions(self.state.get("hold"))

    # -- overrides -----------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # no second dialog over an open one (its buttons do not take letter keys)
        if action == "override" and isinstance(self.screen, ModalScreen):
            return False
        return True

    @on(Button.Pressed, "ActionBar Button")
    def _action_button(self, event: Button.Pressed) -> None:
        self.action_override((event.button.id or "")[len("act-"):])

    def action_override(self, name: str) -> None:
        """Open the form of override `name`."""
        if name not in text.ACTIONS or isinstance(self.screen, ModalScreen):
            return
        user = self.user or (self.viewer.user if self.viewer else "")
        screen = ActionScreen(name, self.client, user=user, needed=name in self.needed_actions())
        self.push_screen(screen, lambda outcome: self._action_done(name, outcome))

    def _action_done(self, name: str, outcome: Outcome | None) -> None:
        status = self.query_one(StatusLine)
        clock = time.strftime("%H:%M:%S")
        if outcome is None:
            status.say(f"{clock}  {text.ACTIONS[name].title}: cancelled, nothing sent.")
            return
        status.say(f"{clock}  {text.ACTIONS[name].title}: done. {self._result_words(outcome)}")
        self.run_worker(self.refresh_state(), group="poll")

    @staticmethod
    def _result_words(outcome: Outcome) -> str:
        result = outcome.result
        if isinstance(result, dict) and result.get("state"):
            return f"Table state now: {text.clean(result['state'])}."
        return "" if result in (None, {}, "") else f"Answer: {text.clean(result)}"
