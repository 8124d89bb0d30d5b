"""The console's dialogs: the viewing sign-in and the form of one override.

The override form asks for the action's arguments, the reason (required), the user name and
the PIN, sends the request in a worker thread, and either closes with the controller's answer
or shows the refusal in plain words and stays open so the supervisor can fix what it names.
The PIN field is emptied the moment it is read; the PIN goes into that one request only.

Where the cursor is decides where a PIN typed blind lands, so: a dialog opens on its first
empty field (never the name already filled in: with nothing else to fill, that is the PIN), and
after any refusal the cursor is in the PIN field, which is empty again and is what must be
typed anew. A typed name is kept when the sign-in is asked again.
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

from controller.access import roles
from controller.console import keys
from controller.console import text
from controller.console.client import ConsoleClient, Credentials, Outcome
from controller.words import LANGUAGES
from controller.words.fields import word

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

    def __init__(self, socket_path: str, user: str = "", message: str = "",
                 language: str = "en") -> None:
        super().__init__()
        self.socket_path = socket_path
        self.user = user
        self.message = message
        self.language = language
        keys.relabel(self, keys.escape_key("quit_console", "console.quit", language))

    def compose(self) -> ComposeResult:
        lang = self.language
        with VerticalScroll():
            yield Static(word("console.sign_in_title", lang), classes="title", markup=False)
            yield Static(f"{word('console.sign_in_help', lang)} ({self.socket_path})",
                         classes="help", markup=False)
            yield Label(word("console.your_name", lang))
            yield Input(value=self.user, placeholder=word("console.your_name", lang), id="user")
            yield Label(word("console.pin", lang))
            yield Input(password=True, placeholder=word("console.pin", lang), id="pin")
            yield Static(self.message, classes="error", id="error", markup=False)
            with Horizontal():
                yield Button(word("console.sign_in", lang), variant="primary", id="sign-in")
                yield Button(word("console.quit", lang), id="quit")

    def on_mount(self) -> None:
        first_empty(self).focus()

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
            self.query_one("#error", Static).update(word("console.give_name", self.language))
            self.query_one("#user", Input).focus()
            return
        if not pin_input.value:
            self.query_one("#error", Static).update(word("console.give_pin", self.language))
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
                 needed: bool = False, language: str = "en",
                 expect: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.action_name = action
        # the shoe and round on the screen when the form was opened: what the person acts on
        self.expect = expect
        self.info = text.ACTIONS[action]
        self.client = client
        self.user = user
        self.needed = needed
        self.language = language
        keys.relabel(self, keys.escape_key("cancel", "console.cancel", language))
        # an override asks for a reason; a note beside it would ask the same thing twice
        self.asks_reason = roles.needs_reason(action)
        self.spec = tuple(a for a in roles.ACTION_ARGS.get(action, ())
                          if not (self.asks_reason and a.name == "note"))
        self.sending = False

    def compose(self) -> ComposeResult:
        lang = self.language
        with VerticalScroll():
            yield Static(text.title(self.action_name, lang), classes="title", markup=False)
            yield Static(text.help_text(self.action_name, lang), classes="help", markup=False)
            if self.needed:
                yield Static(word("console.needed", lang), classes="needed", markup=False)
            for arg in self.spec:
                label = word(f"arg.{arg.name}", lang)
                yield Label(label if arg.required else word("console.optional", lang,
                                                            label=label))
                yield Input(placeholder=word(f"arg.{arg.name}.hint", lang),
                            id=f"arg-{arg.name}")
            if self.asks_reason:
                yield Label(word("console.reason", lang))
                yield Input(placeholder=word("console.reason_hint", lang), id="reason",
                            max_length=roles.REASON_MAX_CHARS)
            yield Label(word("console.your_name", lang))
            yield Input(value=self.user, placeholder=word("console.your_name", lang), id="user")
            yield Label(word("console.pin", lang))
            yield Input(password=True, placeholder=word("console.pin", lang), id="pin")
            yield Static("", classes="error", id="error", markup=False)
            with Horizontal():
                yield Button(word("console.send", lang), variant="primary", id="send")
                yield Button(word("console.cancel", lang), id="cancel")

    def on_mount(self) -> None:
        first_empty(self).focus()

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        # once sent, wait for the answer: closing now would hide whether it was done
        if self.sending:
            self._fail(word("console.wait_answer", self.language))
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
                    self._fail(word("refuse.arg_missing", self.language,
                                    arg=word(f"arg.{arg.name}", self.language)),
                               f"arg-{arg.name}")
                    return None
                continue
            args[arg.name] = roles.coerce(arg, typed)
        problem = roles.check_args(self.action_name, args)
        if problem:
            bad = next((a for a in self.spec if a.name in problem), self.spec[0] if self.spec
                       else None)
            # what is wrong, and what to type instead (the field's own hint)
            name = bad.name if bad else "unknown"
            self._fail(word("refuse.arg_bad_hint", self.language,
                            arg=word(f"arg.{name}", self.language),
                            hint=word(f"arg.{name}.hint", self.language)),
                       f"arg-{bad.name}" if bad else None)
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
        reason = self.query_one("#reason", Input).value.strip() if self.asks_reason else ""
        if self.asks_reason and not reason:
            self._fail(word("refuse.reason_required", self.language), "reason")
            return
        user = self.query_one("#user", Input).value.strip()
        if not user:
            self._fail(word("console.give_name", self.language), "user")
            return
        pin_input = self.query_one("#pin", Input)
        if not pin_input.value:
            self._fail(word("console.give_pin", self.language), "pin")
            return
        if self.asks_reason and any(a.name == "note" for a in
                                    roles.ACTION_ARGS.get(self.action_name, ())):
            args.setdefault("note", reason)     # the reason is the note the hold shows
        credentials = Credentials(user, pin_input.value)
        pin_input.value = ""
        self._fail(word("console.sending", self.language))
        self.sending = True
        self.query_one("#send", Button).disabled = True
        self.run_worker(self._send(credentials, args, reason), group="send", exclusive=True)

    async def _send(self, credentials: Credentials, args: dict[str, Any], reason: str) -> None:
        outcome = await asyncio.to_thread(self.client.send, self.action_name, credentials,
                                          args=args, reason=reason, expect=self.expect)
        del credentials
        self.sending = False
        self.query_one("#send", Button).disabled = False
        if outcome.ok:
            self.dismiss(outcome)
            return
        # stay open: the supervisor fixes what the refusal names and sends again, with the PIN
        # typed anew: the cursor waits there, whatever the refusal was (a name field with the
        # cursor in it would show a PIN typed blind in clear)
        self._fail(word("console.refused", self.language, why=outcome.plain(self.language)),
                   "pin")


def first_empty(screen: Any) -> Input:
    """The field a dialog opens on: the first one still empty (the PIN, when the name is
    filled in and nothing else is asked)."""
    fields = list(screen.query(Input))
    return next((f for f in fields if not f.value), fields[-1])


#: each language by its own name, as the picker lists it
LANGUAGE_NAMES = {"en": "English", "zh_Hant": "繁體中文", "hi": "हिन्दी", "bn": "বাংলা",
                  "th": "ไทย"}


class LanguageScreen(ModalScreen[str | None]):
    """The console's language for the person signed in (F2); kept for them next time."""

    DEFAULT_CSS = DIALOG_CSS.format(name="LanguageScreen")
    BINDINGS = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, language: str = "en") -> None:
        super().__init__()
        self.language = language
        keys.relabel(self, keys.escape_key("cancel", "console.cancel", language))

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(word("console.choose_language", self.language), classes="title",
                         markup=False)
            with Horizontal():
                for code in LANGUAGES:
                    yield Button(LANGUAGE_NAMES[code], id=f"lang-{code}",
                                 variant="primary" if code == self.language else "default")

    @on(Button.Pressed)
    def _chosen(self, event: Button.Pressed) -> None:
        self.dismiss((event.button.id or "")[len("lang-"):] or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
