"""The console's dialogs: the viewing sign-in and the form of one override.

The override form asks for the action's arguments, the reason (required), the user name and
the PIN, sends the request in a worker thread, and either closes with the controller's answer
or shows the refusal in plain words and stays open so the supervisor can fix what it names.
The PIN field is emptied the moment it is read; the PIN goes into that one request only.
"""
from __future__ import annotations

import asyncio
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Static

from controller import roles
from controller.console import text
from controller.console.client import ConsoleClient, Credentials, Outcome

DIALOG_CSS = """
{name} {{ align: center middle; }}
{name} > VerticalScroll {{ width: 76; height: auto; max-height: 90%; border: thick $accent;
                           background: $surface; padding: 1 2; }}
{name} .title {{ text-style: bold; }}
{name} .help {{ color: $text-muted; margin-bottom: 1; }}
{name} .needed {{ color: $warning; text-style: bold; }}
{name} .error {{ color: $error; text-style: bold; height: auto; }}
{name} Input {{ margin-bottom: 1; }}
{name} Horizontal {{ height: auto; }}
{name} Button {{ margin-right: 2; }}
"""


class SignInScreen(ModalScreen[Credentials | None]):
    """Who views the table: the controller answers only to staff with an account."""

    DEFAULT_CSS = DIALOG_CSS.format(name="SignInScreen")
    BINDINGS = [Binding("escape", "quit_console", "Quit")]

    def __init__(self, socket_path: str, user: str = "", message: str = "") -> None:
        super().__init__()
        self.socket_path = socket_path
        self.user = user
        self.message = message

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("Sign in to view the table", classes="title", markup=False)
            yield Static(f"The controller on {self.socket_path} answers only to staff with an "
                         "account. Your name and PIN are used to read the table; every override "
                         "asks for them again.", classes="help", markup=False)
            yield Label("Your name")
            yield Input(value=self.user, placeholder="user name", id="user")
            yield Label("PIN")
            yield Input(password=True, placeholder="PIN", id="pin")
            yield Static(self.message, classes="error", id="error", markup=False)
            with Horizontal():
                yield Button("Sign in", variant="primary", id="sign-in")
                yield Button("Quit", id="quit")

    def on_mount(self) -> None:
        self.query_one("#pin" if self.user else "#user", Input).focus()

    def action_quit_console(self) -> None:
        self.app.exit()

    @on(Button.Pressed, "#quit")
    def _quit(self) -> None:
        self.app.exit()

    @on(Input.Submitted, "#user")
    def _next(self) -> None:
        self.query_one("#pin", Input).focus()

    @on(Button.Pressed, "#sign-in")
    @on(Input.Submitted, "#pin")
    def sign_in(self) -> None:
        user = self.query_one("#user", Input).value.strip()
        pin_input = self.query_one("#pin", Input)
        if not user:
            self.query_one("#error", Static).update("Give your user name.")
            self.query_one("#user", Input).focus()
            return
        if not pin_input.value:
            self.query_one("#error", Static).update("Give your PIN.")
            pin_input.focus()
            return
        credentials = Credentials(user, pin_input.value)
        pin_input.value = ""
        self.dismiss(credentials)


class ActionScreen(ModalScreen[Outcome | None]):
    """The form of one override; closes with the controller's Outcome, or None if cancelled."""

    DEFAULT_CSS = DIALOG_CSS.format(name="ActionScreen")
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, action: str, client: ConsoleClient, *, user: str = "",
                 needed: bool = False) -> None:
        super().__init__()
        self.action_name = action
        self.info = text.ACTIONS[action]
        self.client = client
        self.user = user
        self.needed = needed
        self.spec = roles.ACTION_ARGS.get(action, ())
        self.sending = False

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(f"{self.info.title} ({self.action_name})", classes="title",
                         markup=False)
            yield Static(self.info.help, classes="help", markup=False)
            if self.needed:
                yield Static("This is one of the actions that clear the hold.",
                             classes="needed", markup=False)
            for arg in self.spec:
                optional = "" if arg.required else " (optional)"
                yield Label(f"{arg.name.capitalize()}{optional}")
                yield Input(placeholder=text.ARG_HINTS.get(arg.name, arg.kind),
                            id=f"arg-{arg.name}")
            yield Label("Reason (required; kept in the journal with your name)")
            yield Input(placeholder="why you are doing this", id="reason",
                        max_length=roles.REASON_MAX_CHARS)
            yield Label("Your name")
            yield Input(value=self.user, placeholder="user name", id="user")
            yield Label("PIN")
            yield Input(password=True, placeholder="PIN", id="pin")
            yield Static("", classes="error", id="error", markup=False)
            with Horizontal():
                yield Button("Send", variant="primary", id="send")
                yield Button("Cancel", id="cancel")

    def on_mount(self) -> None:
        self.query(Input).first().focus()

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        # once sent, wait for the answer: closing now would hide whether it was done
        if self.sending:
            self._fail("Sending… wait for the controller's answer.")
            return
        self.dismiss(None)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "pin":
            self.send()
        else:
            self.focus_next()

    def _fail(self, message: str, field: str | None = None) -> None:
        self.query_one("#error", Static).update(message)
        if field is not None:
            self.query_one(f"#{field}", Input).focus()

    def collect_args(self) -> dict[str, Any] | None:
        """The arguments typed, checked as the controller will check them (None: shown why)."""
        args: dict[str, Any] = {}
        for arg in self.spec:
            typed = self.query_one(f"#arg-{arg.name}", Input).value.strip()
            if not typed:
                if arg.required:
                    self._fail(f"Give the {arg.name} ({text.ARG_HINTS.get(arg.name, arg.kind)}).",
                               f"arg-{arg.name}")
                    return None
                continue
            args[arg.name] = roles.coerce(arg, typed)
        problem = roles.check_args(self.action_name, args)
        if problem:
            self._fail(problem, f"arg-{self.spec[0].name}" if self.spec else None)
            return None
        return args

    @on(Button.Pressed, "#send")
    def send(self) -> None:
        """Check the form, then send the request in a worker thread."""
        if self.sending:
            return
        args = self.collect_args()
        if args is None:
            return
        reason = self.query_one("#reason", Input).value.strip()
        if not reason:
            self._fail("Give a reason: every override is journaled with why it was done.",
                       "reason")
            return
        user = self.query_one("#user", Input).value.strip()
        if not user:
            self._fail("Give your user name.", "user")
            return
        pin_input = self.query_one("#pin", Input)
        if not pin_input.value:
            self._fail("Give your PIN.", "pin")
            return
        credentials = Credentials(user, pin_input.value)
        pin_input.value = ""
        self._fail("Sending…")
        self.sending = True
        self.query_one("#send", Button).disabled = True
        self.run_worker(self._send(credentials, args, reason), group="send", exclusive=True)

    async def _send(self, credentials: Credentials, args: dict[str, Any], reason: str) -> None:
        outcome = await asyncio.to_thread(self.client.send, self.action_name, credentials,
                                          args=args, reason=reason)
        del credentials
        self.sending = False
        self.query_one("#send", Button).disabled = False
        if outcome.ok:
            self.dismiss(outcome)
            return
        # stay open: the supervisor fixes what the refusal names and sends again
        field = {"auth_failed": "pin", "locked": "user", "disabled": "user", "forbidden": "user",
                 "reason_required": "reason"}.get(outcome.error or "")
        if outcome.error == "invalid_args" and self.spec:
            field = f"arg-{self.spec[0].name}"
        self._fail(f"Refused. {outcome.plain()}", field)
