"""Game recall told for a supervisor who was not at the table (`tablectl recall`): each round's
cards in the order they left the shoe, where each went, the hands, the winner, the bets, what
went wrong and what was done about it; every word in the reader's language from the message
catalogue, never a state, slot, kind or action as the program spells it (controller.journal.recall
rebuilds the rounds; its `--json` keeps the codes)."""
from __future__ import annotations

from typing import Any, Iterable

from rich.cells import cell_len

from controller.words import record
from controller.words.catalogue import MESSAGES
from controller.words.fields import card, number, word
from controller.words.problems import alarm_words, problem_words
from controller.words.record import house_burn_words, invalid_words


def _clock(utc: Any) -> str:
    """HH:MM:SS.mmm of an ISO UTC time (the date is in the round header)."""
    return utc[11:23] if isinstance(utc, str) and len(utc) >= 23 else str(utc or "")


def _when(utc: Any) -> str:
    if not isinstance(utc, str) or len(utc) < 19:
        return "?"
    return f"{utc[:10]} {utc[11:23]} UTC"


def _signed(value: object, language: str) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return ("+" if value > 0 else "") + number(value, language)
    return str(value)


class Teller:
    """Says one recall in one language."""

    def __init__(self, language: str = "en") -> None:
        self.lang = language
        from controller.report.language import Speaker
        self.speaker = Speaker(language)

    def say(self, code: str, **fields: Any) -> str:
        return word(code, self.lang, **fields)

    def num(self, value: Any) -> str:
        return number(value, self.lang) if isinstance(value, (int, float)) and \
            not isinstance(value, bool) else str(value if value is not None else "?")

    # ------------------------------------------------------------------ a round's parts
    def status(self, story: dict) -> str:
        parts = []
        if story["demo"]:
            parts.append(self.say("recall.demo"))
        if story["void"]:
            parts.append(self.say("recall.void", reason={"code": f"void.{story['reason']}"})
                         if story["reason"] else word("console.void", self.lang))
        if story["corrected"]:
            parts.append(self.say("recall.corrected"))
        parts.append(self.say("recall.complete" if story["complete"] else "recall.in_progress"))
        return ", ".join(parts)

    def shoe_lines(self, info: dict) -> list[str]:
        sha = str(info.get("profile_sha256") or "")[:12]
        fields = dict(shoe=info.get("shoe"), time=_when(info.get("utc")), n=info.get("decks"),
                      cards=info.get("cards"), profile=info.get("profile", "?"), sha=sha or "?")
        cut = info.get("cut_card_position")
        if cut is None:
            return [self.say("recall.shoe_continuous", **fields)]
        return [self.say("recall.shoe", cut=cut, **fields)]

    def card_lines(self, story: dict) -> list[str]:
        rows = [(c, word("recall.burned_before", self.lang) if c["slot"] == "burn" else
                 record.slot(c["slot"], self.lang, story["game"])) for c in story["burns_before"]]
        rows += [(c, record.slot(c["slot"], self.lang, story["game"])) for c in story["cards"]]
        if not rows:
            return ["  " + self.say("recall.no_cards")]
        table = [[self.say("recall.col.n"), self.say("recall.col.card"),
                  self.say("recall.col.slot"), self.say("recall.col.flags"),
                  self.say("recall.col.time")]]
        for c, where in rows:
            flags = ", ".join(self.say(f"recall.flag.{f}" if f"recall.flag.{f}" in MESSAGES
                                       else "recall.flag.unknown") for f in c["flags"]) or "–"
            table.append(["" if c["n"] is None else self.num(c["n"]),
                          card(c["code"], self.lang) if c["code"] else "?", where, flags,
                          _clock(c["utc"])])
        return ["  " + self.say("recall.cards")] + columns(table, "    ")

    def outcome_lines(self, story: dict) -> list[str]:
        if not story["results"]:
            return ["  " + self.say("recall.no_result")]
        lines = []
        for hand, cards in story["hands"].items():
            if hand in ("irregularities", "naturals", "burned_before"):
                continue
            total = story["totals"].get(hand)
            shown = ", ".join(card(c, self.lang) for c in cards) or "–"
            lines.append(f"  {word(f'console.hand.{hand}', self.lang)}: {shown}"
                         + ("" if total is None else f" = {self.num(total)}"))
        if story["winner"] is not None:
            lines.append("  " + self.say("recall.winner", winner=word(
                f"console.winner.{story['winner']}", self.lang)))
        rest = {k: v for k, v in story["outcome"].items()
                if k not in story["hands"] and not k.endswith("_total") and k != "winner"}
        for name, value in rest.items():
            said = record.label(name, self.lang) if f"record.field.{name}" in MESSAGES \
                else self.speaker.bet(name)
            lines.append(f"  {said}: {record.value(name, value, self.lang)}")
        kinds = story["outcome"].get("irregularities") or []
        if kinds:
            lines.append("  " + self.say("run.corrected", kinds=[
                {"code": f"kind.{k}"} for k in kinds]))
        if story["bets"]:
            lines.append("  " + self.say("recall.bets", bets=", ".join(
                f"{self.speaker.bet(b)} {_signed(v, self.lang)}" for b, v in story["bets"].items())))
        for old in story["results"][:-1]:
            lines.append("  " + self.say(
                "recall.superseded", time=_clock(old["utc"]), seq=str(old["seq"]),
                winner=word(f"console.winner.{old.get('winner')}", self.lang)))
        return lines

    def event_lines(self, story: dict) -> list[str]:
        lines = []
        burns = [b for b in story.get("house_burns", ()) if b.get("stage") == "burned"]
        if burns:
            lines.append("  " + self.say("recall.house_burns"))
            lines += [f"    {_clock(b['utc'])}  {word_of(house_burn_words(b), self.lang)}"
                      for b in burns]
        if story["irregularities"]:
            lines.append("  " + self.say("recall.irregularities"))
            lines += [f"    {_clock(i['utc'])}  {record_words(i, self.lang)}"
                      for i in story["irregularities"]]
        if story["holds"]:
            lines.append("  " + self.say("recall.holds"))
            lines += [f"    {_clock(h['utc'])}  " + (
                self.say("recall.held", kind=h["reason"]) if h["event"] == "hold" and h["reason"]
                else self.say("recall.held_plain") if h["event"] == "hold"
                else self.say("recall.resumed")) for h in story["holds"]]
        if story["overrides"]:
            lines.append("  " + self.say("recall.overrides"))
            for o in story["overrides"]:
                lines.append(f"    {_clock(o['utc'])}  " + self.say(
                    "recall.who", user=o["user"], role=record.role(o["role"], self.lang),
                    what=record.action(o["action"], self.lang)))
                lines.append("      " + self.say("recall.reason", reason=o["reason"]))
                lines.append("      " + record.change(o["before"], o["after"], self.lang,
                                                      story["game"]))
        if story["commands"]:
            lines.append("  " + self.say("recall.commands"))
            for c in story["commands"]:
                given = record.args(c["args"], self.lang)
                line = f"    {_clock(c['utc'])}  " + self.say(
                    "recall.who", user=c["user"], role=record.role(c["role"], self.lang),
                    what=record.action(c["action"], self.lang)) + (f" ({given})" if given else "")
                if c["reason"]:
                    line += "; " + self.say("recall.reason", reason=c["reason"])
                if c["refused"]:
                    line += "  " + self.say("recall.refused", why=c["refused"])
                lines.append(line)
        if story["alarms"]:
            lines.append("  " + self.say("recall.alarms"))
            lines += [f"    {_clock(a['utc'])}  {word_of(alarm_words(a), self.lang)}"
                      for a in story["alarms"]]
        if story["device"]:
            lines.append("  " + self.say("recall.device"))
            lines += [f"    {_clock(d['utc'])}  "
                      f"{record.device_event(d['type'], d['fields'], self.lang)}"
                      for d in story["device"]]
        return lines

    # ------------------------------------------------------------------ the whole
    def story(self, story: dict) -> str:
        lines: list[str] = []
        if story["shoe_started"]:
            lines += self.shoe_lines(story["shoe_started"])
        game = word(f"game.{story['game']}", self.lang) if story["game"] else ""
        lines.append(self.say("recall.round_head", shoe=story["shoe"], round=story["round"],
                              status=self.status(story)) + (f" ({game})" if game else ""))
        first, last = str(story["first_seq"]), str(story["last_seq"])
        if story.get("revealed_utc"):
            lines.append("  " + self.say("recall.times_revealed", time=_when(story["started_utc"]),
                                         result=_when(story["ended_utc"]),
                                         revealed=_when(story["revealed_utc"]), first=first,
                                         last=last))
        elif story["ended_utc"]:
            lines.append("  " + self.say("recall.times_result", time=_when(story["started_utc"]),
                                         result=_when(story["ended_utc"]), first=first,
                                         last=last))
        else:
            lines.append("  " + self.say("recall.times", time=_when(story["started_utc"]),
                                         first=first, last=last))
        lines += self.card_lines(story)
        lines += self.outcome_lines(story)
        lines += self.event_lines(story)
        end = story["shoe_ended"]
        if end:
            lines.append(self.say("recall.shoe_ended", shoe=end.get("shoe"),
                                  time=_clock(end["utc"]), n=end.get("rounds", 0),
                                  reason={"code": f"end.{end.get('reason')}"}))
            if end.get("reason") == "invalid" and "results" in end:
                lines.append(word_of(invalid_words(end.get("shoe"), end), self.lang))
        return "\n".join(lines)


def word_of(words: Any, language: str) -> str:
    from controller.words import render
    return render(words, language)


def record_words(irregularity: dict, language: str) -> str:
    """An irregularity as the supervisor reads it (the controller's own detail, which names
    cards by their places as the program does, is for the log)."""
    return word_of(problem_words(irregularity), language)


def columns(rows: list[list[str]], indent: str) -> list[str]:
    """Rows of cells in columns as wide as the terminal shows them (the last one unpadded)."""
    widths = [max(cell_len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return [(indent + "  ".join([*(c + " " * (w - cell_len(c)) for c, w in zip(r, widths)),
                                 r[-1]])).rstrip() for r in rows]


def format_story(story: dict, language: str = "en") -> str:
    """One round as text a supervisor who was not at the table can follow."""
    return Teller(language).story(story)


def format_text(stories: Iterable[dict], *, source: str = "", asked: int | None = None,
                language: str = "en") -> str:
    """The recall screen: a header, then each round oldest first."""
    stories = list(stories)
    teller = Teller(language)
    n = len(stories)
    head = teller.say("recall.head_asked", source=source, n=n, asked=asked) \
        if asked is not None else teller.say("recall.head", source=source, n=n)
    if not stories:
        return head + "\n" + teller.say("recall.none")
    return head + "\n\n" + "\n\n".join(teller.story(s) for s in stories)
