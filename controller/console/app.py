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
from typing import Any, ClassVar

from textual import on
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import Button, Footer

from controller.console import keys, text
from controller.console.client import ConsoleClient, Credentials, Outcome
from controller.console import prefs
from controller.console.screens import ActionScreen, LanguageScreen, SignInScreen
from controller.words.fields import word
from controller.console.widgets import (ActionBar, AlarmList, Banner, HeaderBar, HealthPanel,
                                        HistoryList, HoldPanel, PromptBox, RoadsPanel, RoundView,
                                        StatusLine)


#: actions about the table as it is when they arrive, whatever round is in play (a hold, a
#: call for the supervisor): sent without the round the screen showed
NOW_ACTIONS = frozenset({"hold", "call_supervisor"})

class ConsoleApp(App[int]):
    """The full-screen console for one table's controller."""

    TITLE = "tablectl console"
    CSS = """
    #body { height: 1fr; }
    #left { width: 3fr; }
    #right { width: 2fr; }
    .stale { opacity: 60%; }
    /* a dealer: the prompt large, the round, the dealer's keys; nothing of the supervisor's */
    .-dealer #right { display: none; }
    .-dealer #roads { display: none; }
    .-dealer PromptBox { height: 7; text-style: bold; }
    """
    # relabelled in the reader's language (language)
    BINDINGS: ClassVar[list[BindingType]] = [*keys.main_keys("en")]

    def __init__(self, client: ConsoleClient, *, user: str = "", refresh_s: float = 1.0,
                 credentials: Credentials | None = None, language: str | None = None) -> None:
        super().__init__()
        self.client = client
        # the reader's language: given, else the one this person chose last time, else English
        self.fixed_language = language
        self._language = "en"
        self.language = language or prefs.language_of(user) or "en"
        self.role: str | None = None        # the signed-in viewer's role, from the state
        self.user = user
        self.refresh_s = refresh_s
        self.viewer = credentials
        self.state: dict[str, Any] | None = None
        self.state_at: float | None = None
        self.connected: bool | None = None
        self._polling = False

    @property
    def language(self) -> str:
        """The reader's language; setting it relabels the keys at once."""
        return self._language

    @language.setter
    def language(self, value: str) -> None:
        if value != self._language:
            keys.relabel(self, keys.main_keys(value))
        self._language = value

    # -- layout --------------------------------------------------------------------------------

    def _fatal_error(self) -> None:
        """A fault of the console itself ends it as Textual would, but its traceback shows no
        frame's local variables (a PIN typed into a dialog may be one) and no secret."""
        import traceback
        from rich.text import Text

        from controller.logsetup import get_logger, scrub
        error: BaseException | None = self._exception
        from textual.worker import WorkerFailed
        if isinstance(error, WorkerFailed) and isinstance(error.error, BaseException):
            error = error.error             # what went wrong, with its own frames
        self.bell()
        if error is not None:
            get_logger("controller.console").critical("console failed", exc_info=error)
            shown = "".join(traceback.format_exception(type(error), error, error.__traceback__))
            self._exit_renderables.append(Text(scrub(shown)))
        self._close_messages_no_wait()

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
                yield HealthPanel(id="health")
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
        self.query_one(Banner).say(word("console.not_signed_in", self.language)
                                   + (f" {message}" if message else ""))
        # the name typed before stays (self.user): after a refusal the PIN has the cursor
        self.push_screen(SignInScreen(self.client.socket_path, self.user, message,
                                      language=self.language),
                         self._signed_in)

    def _signed_in(self, credentials: Credentials | None) -> None:
        if credentials is None:
            return
        self.viewer = credentials
        self.user = self.user or credentials.user
        if self.fixed_language is None:
            self.language = prefs.language_of(credentials.user) or self.language
        self.query_one(Banner).say(word("console.signing_in", self.language))
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
        try:
            banner = self.query_one(Banner)
        except NoMatches:
            return              # an answer before the screen is up: the next poll shows it
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
            self.ask_sign_in(outcome.plain(self.language))
            return
        self.connected = False
        seen = ""
        if self.state_at is not None:
            at = time.strftime("%H:%M:%S", time.localtime(self.state_at))
            seen = " " + word("console.stale", self.language, time=at)
        if outcome.unavailable:
            banner.say(word("console.disconnected", self.language, seconds=self.refresh_s)
                       + f" ({outcome.message})"
                       + seen)
        else:
            banner.say(word("console.no_state", self.language, why=outcome.plain(self.language),
                            seconds=self.refresh_s)
                       + seen)
        for panel in self._panels():
            panel.add_class("stale")

    def _panels(self) -> list[Any]:
        return [self.query_one(HeaderBar), self.query_one(PromptBox), self.query_one(HoldPanel),
                self.query_one(RoundView), self.query_one(RoadsPanel), self.query_one(AlarmList),
                self.query_one(HealthPanel), self.query_one(HistoryList)]

    def show_state(self, state: dict[str, Any]) -> None:
        viewer = state.get("viewer")
        if not isinstance(viewer, dict):
            viewer = {}
        role = viewer.get("role") if isinstance(viewer.get("role"), str) else None
        if role != self.role:
            self.role = role
            self.screen.set_class(role == "dealer", "-dealer")
            if self.fixed_language is None and viewer.get("user"):
                self.language = prefs.language_of(str(viewer["user"])) or self.language
        for panel in self._panels():
            panel.remove_class("stale")
            panel.show(state)
        bar = self.query_one(ActionBar)
        bar.offer(self.offered_actions(), self.language, self.role)
        bar.highlight(self.needed_actions())

    def offered_actions(self) -> list[str]:
        """The actions that apply now and that the viewer's role may take."""
        return text.offered(self.state or {}, self.role)

    def action_choose_language(self) -> None:
        if isinstance(self.screen, ModalScreen):
            return
        self.push_screen(LanguageScreen(self.language), self._language_chosen)

    def _language_chosen(self, language: str | None) -> None:
        if not language:
            return
        self.language = language
        user = self.user or (self.viewer.user if self.viewer else "")
        if user:
            prefs.remember(user, language)      # this person's language next time
        if self.state is not None:
            self.show_state(self.state)

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
        if self.state is not None and name not in self.offered_actions():
            return                  # not for this role, or not now: no form to be refused
        user = self.user or (self.viewer.user if self.viewer else "")
        screen = ActionScreen(name, self.client, user=user, needed=name in self.needed_actions(),
                              language=self.language,
                              expect=None if name in NOW_ACTIONS else self.where())
        self.push_screen(screen, lambda outcome: self._action_done(name, outcome))

    def where(self) -> dict[str, Any] | None:
        """The shoe and round on the screen (None before the first state): a command is sent
        for them, and refused if the table has moved on by the time it arrives."""
        if not isinstance(self.state, dict):
            return None
        shoe, rnd = self.state.get("shoe"), self.state.get("round")
        return {"shoe": shoe.get("number") if isinstance(shoe, dict) else None,
                "round": rnd.get("number") if isinstance(rnd, dict) else None}

    def _action_done(self, name: str, outcome: Outcome | None) -> None:
        status = self.query_one(StatusLine)
        clock = time.strftime("%H:%M:%S")
        action = text.title(name, self.language)
        if outcome is None:
            status.say(f"{clock}  {word('console.cancelled', self.language, what=action)}")
            return
        status.say(f"{clock}  {word('console.done', self.language, what=action)} "
                   f"{self._result_words(outcome)}")
        self.run_worker(self.refresh_state(), group="poll")

    def _result_words(self, outcome: Outcome) -> str:
        result = outcome.result
        if isinstance(result, dict) and result.get("state"):
            return text.clean(word("console.state_now", self.language,
                                   state=str(result["state"])))
        return ""
