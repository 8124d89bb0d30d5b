"""What the events topic sends of each journal record: result at reveal (controller.reveal).

The feed reads the journal in seq order, so it applies the reveal rule as the journal goes:
under `[display] reveal = "on_reveal"` a round's cards are sent face down until the dealer's
`reveal`, its pending result as `{shoe, round, reveal: "pending"}` only, and the `reveal`
event carries the round's whole result (`result`). Every seq is still sent, in order.
"""
from __future__ import annotations

from typing import Any

from controller.journal import Journal
from controller.reveal import RevealMask


class PublicRecords:
    """The events topic's view of the journal from one position on (one per connection)."""

    def __init__(self, journal: Journal, after_seq: int):
        self.journal = journal
        self.mask = mask_at(journal, after_seq)

    def public(self, seq: int, data: dict[str, Any]) -> dict[str, Any]:
        self.mask.note(data)
        if data.get("event") == "reveal":
            result = result_of(self.journal, seq, data)
            if result is not None:
                return {**data, "result": {k: v for k, v in result.items() if k != "reveal"}}
        return self.mask.mask(data)


def mask_at(journal: Journal, after_seq: int) -> RevealMask:
    """The mask as it stood once the record `after_seq` was sent: the current shoe's reveal
    mode, and whether a round of it is still face down (the journal read back to the shoe's
    start, newest first)."""
    mask, open_round = RevealMask(), None
    for r in journal.records_backward(before_seq=after_seq + 1):
        kind = r.data.get("event")
        if open_round is None:
            if kind in ("reveal", "shoe_ended") or \
                    kind == "round_result" and r.data.get("reveal") != "pending":
                open_round = False
            elif kind == "round_started":
                open_round = True
        if kind == "shoe_started":
            mask.note(r.data)
            mask.hidden = bool(open_round) and mask.mode == "on_reveal"
            break
    return mask


def result_of(journal: Journal, seq: int, reveal: dict[str, Any]) -> dict[str, Any] | None:
    """The pending result a `reveal` event (at `seq`) turns over, from the journal."""
    key = (reveal.get("shoe"), reveal.get("round"))
    for r in journal.records_backward(before_seq=seq):
        kind = r.data.get("event")
        if kind == "round_result" and (r.data.get("shoe"), r.data.get("round")) == key:
            return r.data
        if kind == "shoe_started":
            return None
    return None
