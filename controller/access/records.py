"""What the account store answers: one sign-in attempt's outcome (AuthResult) and an account
as a manager lists it (UserInfo), each with a JSON-ready record that never holds a secret.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from typing import Any


@dataclass(frozen=True)
class AuthResult:
    """One sign-in attempt's outcome; code: ok | unknown_user | wrong_pin | disabled | locked |
    busy (not checked: too many sign-ins at once) | rate_limited (refused before any check)."""
    ok: bool
    user: str
    code: str
    message: str
    role: str | None = None
    context: str = ""
    at: float = 0.0
    failures: int = 0
    locked_minutes: int | None = None
    locked_now: bool = False            # this attempt locked the account
    unlocked_at: float | None = None    # a lock that had run out, noticed by this attempt
    peer: str = ""                      # who asked on the control socket (uid and pid)
    #: signed in, but the request was refused before the table: forbidden (the role),
    #: reason_required, invalid_args; `why` the refusal's words
    refused: str | None = None
    why: str = ""

    def record(self) -> dict[str, Any]:
        """JSON-ready journal record (never holds the secret)."""
        rec: dict[str, Any] = {"event": "auth", "user": self.user, "ok": self.ok,
                               "code": self.code, "role": self.role, "context": self.context,
                               "at": iso_utc(self.at), "failures": self.failures}
        if self.locked_minutes is not None:
            rec["locked_minutes"] = self.locked_minutes
        if self.refused is not None:
            rec.update(refused=self.refused, why=self.why, peer=self.peer)
        return rec


@dataclass(frozen=True)
class UserInfo:
    name: str
    role: str
    disabled: bool
    failures: int
    locked_until: float | None
    created: str
    changed: str

    def record(self, now: float) -> dict[str, Any]:
        rec = asdict(self)
        rec["locked"] = self.locked_until is not None and self.locked_until > now
        rec["locked_until"] = iso_utc(self.locked_until) if self.locked_until else None
        return rec


def iso_utc(epoch: float | None) -> str | None:
    """Epoch seconds as UTC ISO 8601 to the second (None stays None)."""
    if epoch is None:
        return None
    return datetime.fromtimestamp(epoch, timezone.utc).isoformat(timespec="seconds")
