"""Signing the journal's head (with an anchor key): every `every` records, at every shoe's end
and snapshot, and at a clean stop; never while the older part of the journal is unproven."""
from __future__ import annotations

from controller.errors import TableStopped
from controller.journal import Journal, JournalError
from controller.journal.anchor import AnchorKey, Anchoring

ANCHOR_EVERY = 600         # records between two anchors (with an anchor key): ≈ 330 inputs


class Anchors:
    def __init__(self, journal: Journal, key: AnchorKey | None, every: int = ANCHOR_EVERY):
        self.signer = Anchoring(journal, key) if key is not None else None
        self.every = every
        # while the older part of the journal is still being checked nothing signs it, and a
        # stop leaves it as it is
        self._unproven = True

    @property
    def unproven(self) -> bool:
        return self._unproven

    @unproven.setter
    def unproven(self, value: bool) -> None:
        self._unproven = value
        if not value and self.signer is not None:
            # the whole chain is proven: what is signed from now on is a checkpoint a
            # restart may start its check from
            self.signer.proven = True

    @property
    def due(self) -> bool:
        return self.signer is not None and self.signer.unanchored >= self.every

    @property
    def since_last(self) -> int | None:
        return self.signer.unanchored if self.signer is not None else None

    def sign(self, reason: str) -> dict | None:
        """Sign the head now; the anchor event, or None (no key, or unproven)."""
        if self.signer is None or self.unproven:
            return None
        try:
            return self.signer.sign(reason)
        except (JournalError, ValueError) as err:
            raise TableStopped(f"the journal cannot be written: {err}") from err

    def if_due(self) -> dict | None:
        return self.sign("records") if self.due else None
