"""Publishers of domain events: JSON Lines for programs, one readable line a round for people."""
from __future__ import annotations

import json
import sys
from typing import IO, Iterable

from controller.schema import stamped


class JsonFeed:
    """One JSON object per event (the README's `--json` contract), each with the contract's
    version (controller.schema)."""

    def __init__(self, stream: IO[str] | None = None, kinds: Iterable[str] | None = None):
        self.stream = stream or sys.stdout
        self.kinds = set(kinds) if kinds else None

    def publish(self, event: dict) -> None:
        if self.kinds is None or event["event"] in self.kinds:
            self.stream.write(json.dumps(stamped(event), separators=(",", ":")) + "\n")

    def flush(self) -> None:
        """The lines given so far, out (the loop calls it once its events are announced)."""
        self.stream.flush()


def _hand(cards: list[str]) -> str:
    return " ".join(cards)


def format_round(e: dict) -> str:
    """`#12  P 9H 5C KD = 4   B 2S 3D = 5   BANKER` (and the Andar Bahar / two-hand forms)."""
    tag = f"#{e['round']:<3}"
    if "game_card" in e:
        body = (f"GAME {e['game_card']}   A {_hand(e['andar'])}   B {_hand(e['bahar'])}   "
                f"{str(e.get('winner', '')).upper()} ({e.get('cards_dealt', 0)} cards)")
    elif "player" in e and "player_total" in e:
        body = (f"P {_hand(e['player'])} = {e['player_total']}   "
                f"B {_hand(e['banker'])} = {e['banker_total']}   {e['winner'].upper()}")
    else:
        hands = [(k, v) for k, v in e.items() if isinstance(v, list) and k not in
                 ("burned_before", "irregularities")]
        body = "   ".join(f"{k} {_hand(v)}" for k, v in hands)
        if "winner" in e:
            body += f"   {str(e['winner']).upper()}"
    notes = []
    if e.get("burned_before"):
        notes.append("burn " + _hand(e["burned_before"]))
    if e.get("demo"):
        notes.append("DEMO")
    if e.get("void"):
        notes.append(f"VOID ({e.get('reason', '')})")
    if e.get("irregularities"):
        notes.append("corrected: " + ", ".join(e["irregularities"]))
    return f"{tag} {body}" + (f"   [{'; '.join(notes)}]" if notes else "")


class TextFeed:
    """Readable lines: the shoe, its burn, each round, irregularities, holds and overrides; the
    prompts, holds and irregularities in `language` (the table's, `[table] language`)."""

    def __init__(self, stream: IO[str] | None = None, verbose: bool = False,
                 language: str = "en"):
        self.stream = stream or sys.stdout
        self.verbose = verbose
        self.language = language

    def words(self, words: object) -> str:
        from controller.words import render
        return render(words, self.language)     # type: ignore[arg-type]

    def problem(self, e: dict, kind: str) -> str:
        from controller.words.problems import problem_words
        return self.words(problem_words({**e, "kind": kind}))

    def flush(self) -> None:
        self.stream.flush()

    def line(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()

    def publish(self, e: dict) -> None:
        kind = e["event"]
        if kind == "round_result":
            self.line(format_round(e))
        elif kind == "shoe_started":
            cut = e.get("cut_card_position")
            self.line(f"== shoe {e['shoe']}: {e['profile']}, {e['decks']} deck(s), {e['cards']} "
                      f"cards" + (f", cut card after card {cut}" if cut is not None else ""))
        elif kind == "burn":
            self.line(f"   burn {_hand(e['cards'])}")
        elif kind == "shoe_ended":
            self.line(f"== shoe {e['shoe']} ended after {e['rounds']} round(s): {e['reason']}")
        elif kind == "irregularity":
            self.line(f"!! {self.problem(e, e['kind'])}")
        elif kind == "hold":
            held = self.words({"code": "prompt.hold_plain"})
            self.line(f"!! {held}: {self.problem(e, e['reason'])}")
        elif kind == "resume":
            self.line("   table resumed")
        elif kind == "override":
            self.line(f"   override {e['action']} by {e['user']} ({e['role']}): {e['reason']}")
        elif kind == "alarm" and e.get("severity") != "info":
            self.line(f"!! {e['source']} {e['code']}: {e['text']}")
        elif kind == "prompt" and self.verbose:
            said = e["text"]
            if e.get("words"):
                said = self.words(e["words"])
                if e.get("simulator"):
                    said = f"{self.words({'code': 'console.simulator'})}: {said}"
            self.line(f"   > {said}")
