"""Game recall: the story of the last rounds, rebuilt from the journal, for a supervisor.

A round is identified by (shoe, round) in its records' data. Its story holds the shoe, round,
demo/void flags, every card in order with its slot (burns dealt before it first), totals,
winner, bets, irregularities, holds, supervisor overrides (user, role, reason, before/after),
commands entered (refused ones too), alarms, other device events and inputs seen while it was
open, and timestamps. Rounds are listed oldest
first, in their original sequence; a round still being dealt is included, marked in progress.
"""
from __future__ import annotations

import json
from typing import Any, Iterable

from controller.journal import Journal, Record

#: Result fields that are bookkeeping, not the game's outcome.
_NOT_OUTCOME = frozenset({"event", "shoe", "round", "game", "bets", "demo", "void", "reason",
                          "burned_before", "corrected", "reveal"})
#: The events that make up a round's own timeline; others (override, hold, …) may come late.
_TIMELINE = frozenset({"round_started", "card", "round_result"})


def round_key(record: Record) -> tuple | None:
    """(shoe, round) for a record of a round (round >= 1), else None (shoe level, device)."""
    if record.kind in ("device", "input"):
        return None
    rnd = record.data.get("round")
    if not isinstance(rnd, int) or isinstance(rnd, bool) or rnd < 1:
        return None
    return (record.data.get("shoe"), rnd)


def window(journal: Journal, last: int) -> tuple[list[tuple], list[Record]]:
    """The keys of the newest `last` rounds and the records that can concern them, in seq order.

    Reads backward from the newest record. A round is chosen by its own timeline (start, cards,
    result); the first timeline record of an older round ends the scan. Overrides and other
    notes can be journaled after their round is over, so they are kept and sorted out by key.
    """
    selected: list[tuple] = []
    chosen: set[tuple] = set()
    kept: list[Record] = []
    for rec in journal.records_backward():
        key = round_key(rec)
        if key is not None and key not in chosen and rec.kind in _TIMELINE:
            if len(selected) == last:
                break
            selected.append(key)
            chosen.add(key)
        kept.append(rec)
    kept.reverse()
    return selected, kept


def last_rounds(journal: Journal, last: int = 10) -> list[dict]:
    """The stories of the newest `last` rounds, oldest first."""
    selected, records = window(journal, last)
    return build_rounds(records, set(selected))


def _new_story(key: tuple, pending: dict) -> dict:
    """An empty story; what was pending since the previous round (shoe start, burns, notes)."""
    story = {"shoe": key[0], "round": key[1], "game": None, "demo": False, "void": False,
             "reason": None, "complete": False, "corrected": False,
             "started_utc": None, "ended_utc": None, "revealed_utc": None,
             "first_seq": None, "last_seq": None,
             "shoe_started": pending.pop("shoe_started", None),
             "burns_before": pending.pop("burns", []), "cards": [],
             "hands": {}, "totals": {}, "winner": None, "outcome": {}, "bets": {},
             "results": []}
    for name in ("irregularities", "holds", "overrides", "commands", "alarms", "device",
                 "house_burns"):
        story[name] = pending.pop(name, [])
    story["shoe_ended"] = None
    return story


def _card(rec: Record) -> dict:
    d = rec.data
    return {"seq": rec.seq, "utc": rec.utc, "n": d.get("n"), "code": d.get("code"),
            "slot": d.get("slot"), "flags": list(d.get("flags") or [])}


def _stamp(rec: Record, fields: Iterable[str]) -> dict:
    out = {"seq": rec.seq, "utc": rec.utc}
    for name in fields:
        out[name] = rec.data.get(name)
    return out


def _input_note(rec: Record) -> tuple[str, dict] | None:
    """An "input" record (what reached the table): commands, and device inputs other than cards."""
    d = rec.data
    kind = d.get("type")
    if kind == "card":
        return None
    if kind == "command":
        return "commands", {"seq": rec.seq, "utc": rec.utc, "action": d.get("action"),
                            "user": d.get("user"), "role": d.get("role"),
                            "reason": d.get("reason"), "args": d.get("args") or {},
                            "refused": d.get("refused")}
    fields = {k: v for k, v in d.items() if k not in ("type", "t", "raw")}
    return "device", {"seq": rec.seq, "utc": rec.utc, "type": kind, "fields": fields,
                      "raw": d.get("raw")}


def _device_note(rec: Record) -> dict | None:
    """Device events other than card reads (those are told by the card events)."""
    kind = rec.data.get("type")
    if kind == "CardRead":
        return None
    fields = {k: v for k, v in rec.data.items() if k not in ("type", "t", "raw")}
    return {"seq": rec.seq, "utc": rec.utc, "type": kind, "fields": fields,
            "raw": rec.data.get("raw")}


_ROUND_LISTS = {
    "irregularity": lambda r: ("irregularities", {"seq": r.seq, "utc": r.utc, **{
        k: v for k, v in r.data.items() if k not in ("event", "shoe", "round")}}),
    "hold": lambda r: ("holds", {**_stamp(r, ("reason",)), "event": "hold"}),
    "resume": lambda r: ("holds", {**_stamp(r, ("reason",)), "event": "resume"}),
    "override": lambda r: ("overrides",
                           _stamp(r, ("user", "role", "action", "reason", "before", "after"))),
    "alarm": lambda r: ("alarms", _stamp(r, ("source", "code", "text"))),
    "house_burn": lambda r: ("house_burns", _stamp(r, ("stage", "code", "announced_by",
                                                        "confirmed_by"))),
}


def _shoe_level(rec: Record, pending: dict, stories: dict, open_key: tuple | None) -> None:
    d = rec.data
    if rec.kind == "shoe_started":
        pending["shoe_started"] = {"seq": rec.seq, "utc": rec.utc, **d}
        pending["burns"] = []
        pending.setdefault("games", {})[d.get("shoe")] = d.get("game")
    elif rec.kind == "card":
        pending.setdefault("burns", []).append(_card(rec))
    elif rec.kind == "burn":
        # The burn event lists the shoe-start burn; cards journaled one by one take precedence.
        if not pending.get("burns"):
            pending["burns"] = [{"seq": rec.seq, "utc": rec.utc, "n": None, "code": c,
                                 "slot": "burn", "flags": []} for c in d.get("cards", [])]
    elif rec.kind == "shoe_ended":
        mine = [s for s in stories.values() if s["shoe"] == d.get("shoe")]
        if mine:
            mine[-1]["shoe_ended"] = {"seq": rec.seq, "utc": rec.utc, **d}
    elif rec.kind in _ROUND_LISTS:
        # Round 0: before the shoe's first round. Told with the shoe's latest round in view,
        # else with the next round.
        name, entry = _ROUND_LISTS[rec.kind](rec)
        mine = [s for s in stories.values() if s["shoe"] == d.get("shoe")]
        (mine[-1][name] if mine else pending.setdefault(name, [])).append(entry)
    elif rec.kind in ("device", "input"):
        # Told with the round being dealt when they came, else with the next round.
        if rec.kind == "device":
            note = _device_note(rec)
            found = ("device", note) if note is not None else None
        else:
            found = _input_note(rec)
        if found is not None:
            name, entry = found
            (stories[open_key][name] if open_key else pending.setdefault(name, [])).append(entry)


def build_rounds(records: Iterable[Record], keys: set[tuple] | None = None) -> list[dict]:
    """Round stories from records in seq order (only the rounds in `keys`, when given)."""
    stories: dict[tuple, dict] = {}
    pending: dict = {}
    open_key: tuple | None = None
    for rec in records:
        key = round_key(rec)
        if key is None:
            _shoe_level(rec, pending, stories, open_key)
            continue
        if keys is not None and key not in keys:
            continue
        story = stories.get(key)
        if story is None:
            story = stories[key] = _new_story(key, pending)
            story["game"] = pending.get("games", {}).get(key[0])
            story["first_seq"] = rec.seq
        story["last_seq"] = rec.seq
        d, kind = rec.data, rec.kind
        if kind == "round_started":
            story["started_utc"] = story["started_utc"] or rec.utc
            story["demo"] = bool(d.get("demo")) or story["demo"]
        elif kind == "card":
            story["cards"].append(_card(rec))
        elif kind == "round_result":
            story["results"].append({"seq": rec.seq, "utc": rec.utc, **d})
            story["ended_utc"] = rec.utc
            story["complete"] = True
        elif kind == "reveal":          # shown to the table later than read (on_reveal)
            story["revealed_utc"] = rec.utc
        elif kind == "round_voided":    # settled earlier, void since (its shoe was invalid)
            story["voided"] = {"seq": rec.seq, "utc": rec.utc, "reason": d.get("reason")}
        elif kind in _ROUND_LISTS:
            name, entry = _ROUND_LISTS[kind](rec)
            story[name].append(entry)
        if story["started_utc"] is None:
            story["started_utc"] = rec.utc
        if kind in ("round_started", "card") and not story["complete"]:
            open_key = key
        elif kind == "round_result" and open_key == key:
            open_key = None
    return [_finish(s) for s in stories.values()]


def _finish(story: dict) -> dict:
    """Fill outcome fields from the round's last result (a correction supersedes the first)."""
    if story["results"]:
        final = story["results"][-1]
        story["game"] = final.get("game") or story["game"]
        story["demo"] = story["demo"] or bool(final.get("demo"))
        story["void"] = bool(final.get("void"))
        story["reason"] = final.get("reason")
        story["bets"] = dict(final.get("bets") or {})
        outcome = {k: v for k, v in final.items() if k not in _NOT_OUTCOME
                   and k not in ("seq", "utc")}
        story["outcome"] = outcome
        story["hands"] = {k: v for k, v in outcome.items() if isinstance(v, list)}
        story["totals"] = {k[:-len("_total")]: v for k, v in outcome.items()
                           if k.endswith("_total")}
        story["winner"] = outcome.get("winner")
    voided = story.get("voided")
    if voided:
        story["void"], story["reason"] = True, voided.get("reason")
        story["bets"] = {bet: 0 for bet in story["bets"]}
    story["corrected"] = bool(story["overrides"]) or len(story["results"]) > 1 \
        or any(bool(r.get("corrected")) for r in story["results"]) or bool(voided)
    return story


def format_story(story: dict, language: str = "en") -> str:
    """One round told for a supervisor (controller.journal.recall_text says it)."""
    from controller.journal.recall_text import format_story as tell
    return tell(story, language)


def format_text(stories: list[dict], *, source: str = "", asked: int | None = None,
                language: str = "en") -> str:
    """The recall screen (controller.journal.recall_text says it)."""
    from controller.journal.recall_text import format_text as tell
    return tell(stories, source=source, asked=asked, language=language)


def format_json_lines(stories: list[dict]) -> str:
    """One JSON object per round, oldest first."""
    return "\n".join(json.dumps(s, ensure_ascii=False) for s in stories)


#: the fields of an override shown in the audit trail
FIELDS = ("shoe", "round", "user", "role", "action", "args", "reason", "before", "after")


def overrides(journal: Any, *, user: str | None = None, last: int | None = None) -> list[dict]:
    """The override records of `journal` (seq, utc and their fields), oldest first."""
    found = []
    for rec in journal.records(kinds=("override",)):
        if user is not None and rec.data.get("user") != user:
            continue
        entry = {"seq": rec.seq, "utc": rec.utc}
        entry.update({name: rec.data.get(name) for name in FIELDS})
        found.append(entry)
    return found[-last:] if last else found


def _when(utc: str) -> Any:
    from datetime import datetime
    return datetime.fromisoformat(utc.replace("Z", "+00:00"))


def select_rounds(journal: Any, *, last: int | None = None, start: Any = None, end: Any = None,
                  user: str | None = None) -> list[dict]:
    """The rounds a recall asks for, oldest first: the newest `last` (default 10); with a
    period (`start`, `end`: aware datetimes) the rounds of the records journaled in it (the
    newest `last` of them when given); with `user` only the rounds in which that user made an
    override or entered a command."""
    if start is None and end is None and user is None:
        return last_rounds(journal, last or 10)
    records: Iterable[Record] = journal.records()
    if start is not None or end is not None:
        records = (r for r in records if (start is None or _when(r.utc) >= start)
                   and (end is None or _when(r.utc) < end))
    stories = build_rounds(records)
    if user is not None:
        stories = [s for s in stories if any(x.get("user") == user
                                             for x in s["overrides"] + s["commands"])]
    if last is None and start is None and end is None:
        last = 10
    return stories[-last:] if last else stories
