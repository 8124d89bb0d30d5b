"""Publishers of domain events: JSON Lines for programs, one readable line a round for people."""
from __future__ import annotations

import json
import sys
from typing import IO, TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from controller.schema import SCHEMA_VERSION, VERSION_FIELD, stamped

if TYPE_CHECKING:
    from controller.words import Words


def _compact_chunks() -> Callable[[Any, int], Sequence[str]]:
    """`json.dumps(o, separators=(",", ":"))` in pieces to join, from one encoder made once:
    the C encoder that dumps makes anew for every call, kept (without the circular-reference
    check, which only turns an impossible cycle's RecursionError into a ValueError), called
    as `chunks(o, 0)` with nothing in between."""
    from json import encoder
    plain = json.JSONEncoder(separators=(",", ":"))
    make = getattr(encoder, "c_make_encoder", None)
    if make is None:                # a Python without the C accelerator
        return lambda o, _level: (plain.encode(o),)
    return make(None, plain.default, encoder.encode_basestring_ascii, None, ":", ",",
                False, False, True)


_CHUNKS = _compact_chunks()
_STAMP = f',"{VERSION_FIELD}":{SCHEMA_VERSION}}}'


def json_line(event: dict) -> str:
    """The event as one line of the `--json` contract: `stamped(event)` encoded compactly, the
    version put after the event's own fields without copying them."""
    if not event or VERSION_FIELD in event:
        return "".join(_CHUNKS(stamped(event), 0))
    return "".join(_CHUNKS(event, 0))[:-1] + _STAMP


#: lines a JSON feed holds before it writes them without waiting for `flush`
HELD_LINES = 256


class JsonFeed:
    """One JSON object per event (the README's `--json` contract), each with the contract's
    version (controller.schema).

    The lines are written when the loop flushes its outlets, once the events it announces are
    all given (and at most `HELD_LINES` at a time): one write a batch, not one a line, which
    on a stream that writes through (PYTHONUNBUFFERED, as services often run) is a system
    call a line."""

    def __init__(self, stream: IO[str] | None = None, kinds: Iterable[str] | None = None):
        self.stream = stream or sys.stdout
        self.kinds = set(kinds) if kinds else None
        self._lines: list[str] = []         # given since the last write

    def publish(self, event: dict) -> None:
        if self.kinds is None or event["event"] in self.kinds:
            lines = self._lines
            # `json_line(event)` for every event not stamped already (nearly all), written out
            lines.append("".join(_CHUNKS(event, 0))[:-1] + _STAMP
                         if event and VERSION_FIELD not in event else json_line(event))
            if len(lines) >= HELD_LINES:
                self._write()

    def flush(self) -> None:
        """The lines given so far, out (the loop calls it once its events are announced)."""
        if self._lines:
            self._write()
        self.stream.flush()

    def _write(self) -> None:
        lines, self._lines = self._lines, []
        lines.append("")
        self.stream.write("\n".join(lines))


SUIT_SIGNS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}


def card_sign(code: object) -> str:
    """A card as the table's screens draw it, in any language: 9♥, 10♠, K♦."""
    text = str(code)
    rank, suit = text[:-1], text[-1:]
    return ("10" if rank == "T" else rank) + SUIT_SIGNS.get(suit, suit)


def _hand(cards: object) -> str:
    if isinstance(cards, str):
        cards = [cards]
    return " ".join(card_sign(c) for c in cards) if isinstance(cards, list) else ""


#: the hands of a result, in the order a line names them
HANDS = ("game_card", "player", "banker", "andar", "bahar", "right", "left", "bank")


def format_round(e: dict, language: str = "en") -> str:
    """A round's result on one line, every word in `language`: `#12  PLAYER 9♥ 5♣ K♦ = 4
    BANKER 2♠ 3♦ = 5   BANKER WINS` (and the Andar Bahar and two-tableaux forms)."""
    from controller.words.fields import number, word
    parts = []
    for hand in HANDS:
        cards = e.get(hand)
        if cards is None or cards == []:
            continue
        total = e.get(f"{hand}_total")
        parts.append(f"{word(f'console.hand.{hand}', language)} {_hand(cards)}"
                     + ("" if total is None else f" = {number(total, language)}"))
    if e.get("void"):
        reason = str(e.get("reason") or "")
        outcome = word("console.void", language) + (
            f" ({word(f'void.{reason}', language)})" if reason else "")
    elif e.get("winner") == "tie":
        outcome = word("console.winner.tie", language)
    elif e.get("winner"):
        outcome = word("page.wins", language,
                       winner=word(f"console.winner.{e['winner']}", language))
    else:
        sides = [(side, e.get(f"{side}_winner")) for side in ("right", "left")]
        outcome = " · ".join(f"{word(f'console.hand.{side}', language)}: "
                             f"{word(f'console.winner.{who}', language)}"
                             for side, who in sides if who)
    if "cards_dealt" in e:
        outcome += " (" + word("run.cards_dealt", language, n=e["cards_dealt"]) + ")"
    notes = []
    if e.get("burned_before"):
        notes.append(f"{word('console.burned_before', language)} {_hand(e['burned_before'])}")
    if e.get("demo"):
        notes.append(word("console.demo_short", language))
    if e.get("irregularities"):
        notes.append(word("run.corrected", language, kinds=[
            {"code": f"kind.{k}"} for k in e["irregularities"]]))
    tag = f"#{number(e.get('round', '?'), language) if isinstance(e.get('round'), int) else '?'}"
    return f"{tag:<4} " + "   ".join(parts + [outcome]) + (
        f"   [{'; '.join(notes)}]" if notes else "")


class TextFeed:
    """Readable lines for the people at the table PC: the shoe, its burn, each round,
    irregularities, holds (one line each), the table going on, overrides and alarms, and the
    prompts; every word in `language` (the table's, `[table] language`) from the catalogue.
    The `--json` feed is the language-neutral one.

    A hold comes with the irregularity that caused it: the two are one line, the hold's. An
    irregularity is held back until the next event (or the table's next status) says whether
    a hold follows it."""

    def __init__(self, stream: IO[str] | None = None, verbose: bool = False,
                 language: str = "en"):
        self.stream = stream or sys.stdout
        self.verbose = verbose
        self.language = language
        self._pending: tuple[str, str] | None = None     # (kind, line) of an irregularity

    def words(self, words: Words | Mapping[str, Any]) -> str:
        from controller.words import render
        return render(words, self.language)

    def say(self, code: str, **fields: object) -> str:
        return self.words({"code": code, "fields": fields})

    def problem(self, e: dict, kind: str) -> str:
        from controller.words.problems import problem_words
        return self.words(problem_words({**e, "kind": kind}))

    def line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def flush(self) -> None:
        if self._pending is not None:
            line, self._pending = self._pending[1], None
            self.line(line)

    def on_status(self, e: dict) -> None:
        """A subscriber: the table's status after every input; what was held back is said."""
        if e.get("event") == "status":
            self.flush()

    def publish(self, e: dict) -> None:
        kind = e["event"]
        if kind == "hold" and self._pending is not None and \
                self._pending[0] == str(e.get("reason")):
            self._pending = None                 # the hold says it: one line
        self.flush()
        if kind == "round_result":
            self.line(format_round(e, self.language))
        elif kind == "shoe_started":
            cut = e.get("cut_card_position")
            fields = dict(shoe=e["shoe"], profile=e.get("profile", ""), n=e.get("decks"),
                          cards=e.get("cards"))
            self.line(self.say("run.shoe_started", cut=cut, **fields) if cut is not None
                      else self.say("run.shoe_started_continuous", **fields))
        elif kind == "burn":
            self.line(self.say("run.burn", shown=_hand(e["cards"])))
        elif kind == "shoe_ended":
            self.line(self.say("run.shoe_ended", shoe=e["shoe"], n=e.get("rounds", 0),
                               reason={"code": f"end.{e.get('reason')}"}))
        elif kind == "irregularity":
            self._pending = (str(e["kind"]), f"!! {self.problem(e, e['kind'])}")
        elif kind == "hold":
            self.line(f"!! {self.say('prompt.hold', problem=self._problem_words(e))}")
        elif kind == "resume":
            self.line(self.say("run.resumed"))
        elif kind == "override":
            self.line(self.say("run.override", action=e.get("action"), user=e.get("user", ""),
                               role=e.get("role"), reason=e.get("reason", "")))
        elif kind == "alarm" and e.get("severity") != "info":
            from controller.words.problems import alarm_words
            self.line(f"!! {self.words(alarm_words(e))}")
        elif kind == "prompt" and self.verbose:
            words = e.get("words")
            code = words.get("code") if isinstance(words, dict) else None
            if code in ("prompt.hold", "prompt.hold_plain"):
                return                           # the hold's own line has said it
            said = self.words(words) if words else e["text"]
            if words and e.get("simulator"):
                said = f"{self.say('console.simulator')}: {said}"
            self.line(f"   > {said}")

    def _problem_words(self, e: dict) -> object:
        from controller.words.problems import problem_words
        return problem_words({**e, "kind": e.get("reason")})
