"""A shoe's published events read back from the journal, for `tablectl roads` and for the
display of a table that starts again mid-shoe (the same events, in the same order, that the
table published while it dealt them)."""
from __future__ import annotations

from typing import Any, Iterator

from controller.errors import InputError
from controller.journal import Journal
from controller.roads import ANDAR_BAHAR_COLUMNS, ROWS

#: what the displays and the roads are made of
DISPLAY_KINDS = ("shoe_started", "shoe_ended", "round_started", "card", "round_result",
                 "reveal")
ROAD_KINDS = ("shoe_started", "shoe_ended", "round_result", "reveal")


def shoe_events(journal: Journal, shoe: int | None = None,
                kinds: tuple[str, ...] = ROAD_KINDS) -> tuple[int | None, Iterator[dict]]:
    """(shoe number, its events with their seq) for shoe `shoe` or, by default, the latest.
    Andar Bahar's plate runs across its one-deck shoes, so its events start that many decks
    earlier. InputError when the journal has no such shoe."""
    starts = [(r.seq, r.data.get("shoe"), r.data.get("game"))
              for r in journal.records(kinds=["shoe_started"])]
    if not starts:
        if shoe is not None:
            raise InputError(f"journal {journal.path}: no shoe has started in it")
        return None, iter(())
    if shoe is None:
        at = len(starts) - 1
    else:
        found = [i for i, (_, number, _) in enumerate(starts) if number == shoe]
        if not found:
            raise InputError(f"journal {journal.path}: no shoe {shoe} (shoes "
                             f"{starts[0][1]}–{starts[-1][1]}); give --shoe with one of them")
        at = found[-1]
    first = at
    if starts[at][2] == "andar_bahar":
        while first > 0 and starts[first - 1][2] == "andar_bahar" \
                and at - first < ANDAR_BAHAR_COLUMNS * ROWS:
            first -= 1
    end = starts[at + 1][0] if at + 1 < len(starts) else None
    return starts[at][1], _read(journal, starts[first][0] - 1, end, kinds)


def _read(journal: Journal, after: int, end: int | None, kinds: tuple[str, ...]
          ) -> Iterator[dict[str, Any]]:
    for rec in journal.records(after_seq=after, kinds=kinds):
        if end is not None and rec.seq >= end:
            return
        yield {**rec.data, "seq": rec.seq}
