"""Signing the journal's head (with an anchor key): every `every` records, at every shoe's end
and snapshot, and at a clean stop; never while the older part of the journal is unproven."""
from __future__ import annotations

import contextlib
from functools import partial

from controller.errors import TableStopped
from controller.journal import Journal, JournalError
from controller.journal import seal
from controller.journal.anchor import AnchorKey, Anchoring
from controller.logsetup import get_logger

log = get_logger("controller.service")

ANCHOR_EVERY = 600         # records between two anchors (with an anchor key): ≈ 330 inputs


def _seal(path: str, key: AnchorKey, seq: int, head: str, closed: bool) -> None:
    try:
        seal.write(path, key, seq, head, closed)
    except OSError as err:
        # the seal is the older one, which no longer matches the file: the next start checks
        # the whole chain before its first card
        log.warning("journal seal not written", path=path, error=err.strerror or str(err))
        raise


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
            # restart may start its check from, and the journal's file is sealed as the
            # writer leaves it (after each checkpoint, at the close, and now)
            self.signer.proven = True
            journal, key = self.signer.journal, self.signer.key
            if journal.path != ":memory:":
                journal.sealer = partial(_seal, journal.path, key)
                with contextlib.suppress(OSError):
                    journal.seal_now()

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
