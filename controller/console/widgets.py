"""The panels of the supervisor console's main screen (Textual widgets).

Each panel shows one part of the controller's state through the plain-words functions of
controller.console.text; `show(state)` redraws it from a fresh state.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Grid
from textual.widgets import Button, Static

from controller.console import text


def _language(widget: Any) -> str:
    """The reader's language (the app's), English outside an app."""
    try:
        return str(getattr(widget.app, "language", "en"))
    except Exception:           # not mounted in an app
        return "en"


def _role(widget: Any) -> str | None:
    try:
        return getattr(widget.app, "role", None)
    except Exception:
        return None


class Banner(Static):
    """A full-width line for what stops the console from showing a live table."""

    DEFAULT_CSS = """
    Banner { display: none; width: 100%; padding: 0 1; background: $error; color: $text;
             text-style: bold; }
    Banner.-shown { display: block; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", markup=False, **kwargs)
        self.message = ""

    def say(self, message: str) -> None:
        """Show `message`; an empty one hides the banner."""
        self.message = message
        self.update(message)
        self.set_class(bool(message), "-shown")


class HeaderBar(Static):
    """Table, profile, state, shoe and cards out."""

    DEFAULT_CSS = "HeaderBar { width: 100%; height: auto; padding: 0 1; background: $boost; }"

    def show(self, state: Mapping[str, Any]) -> None:
        self.update(text.header_text(state, _language(self)))


class PromptBox(Static):
    """The dealer's prompt, large."""

    DEFAULT_CSS = """
    PromptBox { width: 100%; height: 3; content-align: center middle; text-style: bold;
                background: $primary-background; color: $text; border: none; }
    PromptBox.-hold { background: $error; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", markup=False, **kwargs)

    def show(self, state: Mapping[str, Any]) -> None:
        lang = _language(self)
        held = text.on_hold(state)
        # a dealer is told a hold by its kind; the supervisor reads its problem in full
        words = text.dealer_hold_text(state, lang) if held and _role(self) == "dealer" \
            else text.prompt_text(state, lang)
        self.update(Text(f">>  {words.upper()}  <<"))
        self.set_class(held, "-hold")


class Panel(Static):
    """A bordered panel with a title."""

    DEFAULT_CSS = "Panel { border: round $secondary; padding: 0 1; height: auto; }"

    def __init__(self, title: str, **kwargs: Any) -> None:
        super().__init__("", **kwargs)
        self.border_title = title


class RoundView(Panel):
    """The round being dealt, each card in its slot."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("Current round", **kwargs)

    def show(self, state: Mapping[str, Any]) -> None:
        self.border_title = text.word("console.panel.round", _language(self))
        profile = state.get("profile")
        if not isinstance(profile, dict):
            profile = {}
        self.update(text.round_text(state.get("round"), state.get("hold"), _language(self),
                                    profile.get("game")))


class HoldPanel(Panel):
    """Why the table is on hold and what clears it; shown only on hold."""

    DEFAULT_CSS = """
    HoldPanel { display: none; border: heavy $error; background: $error 20%; }
    HoldPanel.-shown { display: block; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("HOLD", **kwargs)

    def show(self, state: Mapping[str, Any]) -> None:
        self.border_title = text.word("console.panel.hold", _language(self))
        on_hold = text.on_hold(state)
        self.set_class(on_hold, "-shown")
        self.update(text.hold_text(state.get("hold"), _language(self), _role(self))
                    if on_hold else "")


class AlarmList(Panel):
    """Device alarms and warnings."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("Alarms", **kwargs)

    def show(self, state: Mapping[str, Any]) -> None:
        self.border_title = text.word("console.panel.alarms", _language(self))
        self.update(text.alarms_text(state.get("alarms"), _language(self)))


class RoadsPanel(Panel):
    """The shoe's big road and bead plate, as the scoreboard draws them (every result at once:
    the supervisor does not wait for a reveal)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("Roads", **kwargs)

    def show(self, state: Mapping[str, Any]) -> None:
        self.border_title = text.word("console.panel.roads", _language(self))
        self.update(text.roads_panel_text(state.get("roads"), language=_language(self)))


class HealthPanel(Panel):
    """The table PC's health: device links, the shoe's counters, journal, feed, clock and
    software (what `tablectl status` prints)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("Health", **kwargs)

    def show(self, state: Mapping[str, Any]) -> None:
        from controller.console.health import health_lines
        self.border_title = text.word("console.panel.health", _language(self))
        health = state.get("health")
        if not isinstance(health, dict):
            self.update(Text(text.word("console.no_health", _language(self)), style="dim"))
            return
        lines = health_lines(health)[1:]          # the header bar names the table already
        out = Text()
        for i, line in enumerate(lines):
            out.append(("\n" if i else "") + text.clean(line),
                       style="bold red" if line.startswith("  !") else "")
        self.update(out)


class HistoryList(Panel):
    """The last 10 rounds, newest last."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("Last 10 rounds", **kwargs)

    def show(self, state: Mapping[str, Any]) -> None:
        self.border_title = text.word("console.panel.history", _language(self))
        self.update(text.history_text(state.get("last_rounds"), _language(self)))


class ActionBar(Grid):
    """One button per action the viewer's role may take, its key first, always in the same
    place: what does not apply now is greyed out (not removed, so the keys do not move from
    card to card); the ones that clear the hold stand out."""

    DEFAULT_CSS = """
    ActionBar { grid-size: 5; grid-gutter: 0 1; height: auto; padding: 0 1; }
    ActionBar Button { width: 100%; min-width: 10; }
    ActionBar Button.-needed { text-style: bold reverse; }
    """

    def compose(self) -> ComposeResult:
        for info in text.ACTIONS.values():
            yield Button(Text(f"{info.key.upper()} {info.title}"), id=f"act-{info.name}",
                         compact=True, tooltip=info.help)

    def offer(self, names: Iterable[str], language: str = "en", role: str | None = None
              ) -> None:
        """The buttons of the role's actions (every one without a role), in `language`, those
        of `names` (what applies now) enabled."""
        from controller.access import roles
        wanted = set(names)
        for button in self.query(Button):
            name = (button.id or "")[len("act-"):]
            button.display = name in wanted if role is None else roles.allowed(role, name)
            button.disabled = name not in wanted
            if name in text.ACTIONS:
                button.label = Text(f"{text.ACTIONS[name].key.upper()} "
                                    f"{text.title(name, language)}")

    def highlight(self, needed: Iterable[str]) -> None:
        """Mark the buttons of the actions in `needed`."""
        wanted = set(needed)
        for button in self.query(Button):
            name = (button.id or "")[len("act-"):]
            button.set_class(name in wanted, "-needed")
            button.variant = "warning" if name in wanted else "default"


class StatusLine(Static):
    """The outcome of the last action this console sent."""

    DEFAULT_CSS = """
    StatusLine { width: 100%; height: auto; padding: 0 1; color: $text-muted; }
    StatusLine.-refused { color: $error; text-style: bold; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__("", markup=False, **kwargs)

    def say(self, message: str, *, refused: bool = False) -> None:
        self.update(message)
        self.set_class(refused, "-refused")
