"""The console's link to the controller: one request at a time over the control socket.

Every request the controller answers is authenticated, reads included. The console signs in
once to view the table; the controller answers that first read with a read-only view token,
and the console polls with the token and forgets the PIN. Every override takes the name and
PIN typed for it and keeps neither. No PIN is ever logged.

Calls block; the app runs them in a worker thread. They never raise for a missing or broken
controller or a refusal: they return an Outcome that says what happened in plain words.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from controller.access.client import ControllerUnavailable, request
from controller.logsetup import secret

#: the Outcome.error of a controller that does not answer (not a control API code)
UNAVAILABLE = "unavailable"
#: refusals that mean the person (not the table) must change something before trying again
AUTH_ERRORS = frozenset({"auth_failed", "locked", "disabled", "forbidden"})

ERROR_WORDS: Mapping[str, str] = {
    "auth_failed": "Name or PIN not accepted",
    "locked": "This account is locked",
    "disabled": "This account is disabled",
    "forbidden": "Your role may not do this",
    "reason_required": "A reason is required",
    "wrong_state": "The table cannot do that now",
    "invalid_args": "A value is not right",
    "timeout": "The table did not answer in time (check the state before trying again)",
    "internal": "The controller failed on this request (tell the technician)",
    "malformed": "The controller could not read the request",
    "unknown_action": "The controller does not know this action",
    "busy": "The controller is busy (try again in a moment)",
    "rate_limited": "Too many failed sign-ins (wait before trying again)",
    UNAVAILABLE: "No controller answers",
}

Requester = Callable[..., dict]


@dataclass(frozen=True)
class Credentials:
    """Who asks: a user name and PIN, or a read-only view token (neither appears in repr)."""
    user: str
    pin: str = field(repr=False)
    token: str = field(default="", repr=False)

    def __post_init__(self) -> None:
        for value in (self.pin, self.token):
            secret(value)               # typed into a dialog: never in a log line

    def viewing(self, token: str) -> "Credentials":
        """The same viewer, signed in by a view token instead of the PIN."""
        return Credentials(self.user, "", token)


@dataclass(frozen=True)
class Outcome:
    """The answer to one request: a result, a refusal (error code and message), or no answer."""
    ok: bool
    result: Any = None
    error: str | None = None
    message: str = ""
    view_token: str = field(default="", repr=False)
    words: Any = None               # the refusal in plain words ({"code", "fields"}), if given

    @property
    def unavailable(self) -> bool:
        return self.error == UNAVAILABLE

    @property
    def auth_problem(self) -> bool:
        """The refusal is about the person (name, PIN, lockout, role)."""
        return self.error in AUTH_ERRORS

    def plain(self, language: str = "en") -> str:
        """One line for the person, in `language`: the kind of refusal, then the table's
        words for it (the controller's own message where it sent none)."""
        if self.ok:
            return "Done."
        return explain(self.error, self.message, self.words, language)


def explain(error: str | None, message: str, words: Any = None, language: str = "en") -> str:
    """A refusal in plain words: what kind of problem, then why (the table's words when the
    controller gave them, else its own line)."""
    from controller.words import Words, render
    from controller.words.catalogue import ERRORS
    from controller.words.fields import word
    kind = word(f"error.{error}" if f"error.{error}" in ERRORS else "error.unknown", language)
    said = Words.of(words)
    why = render(said, language) if said is not None else message
    return f"{kind}: {why}" if why else kind


class ConsoleClient:
    """Sends requests to the controller on `socket_path` (one connection per request)."""

    def __init__(self, socket_path: str | os.PathLike[str], *, poll_timeout_s: float = 5.0,
                 send_timeout_s: float = 15.0, requester: Requester = request):
        self.socket_path = str(socket_path)
        self.poll_timeout_s = poll_timeout_s
        self.send_timeout_s = send_timeout_s
        self._request = requester

    def call(self, action: str, credentials: Credentials, *, args: Mapping[str, Any] | None = None,
             reason: str = "", timeout: float | None = None,
             expect: Mapping[str, Any] | None = None) -> Outcome:
        """One request; never raises for the controller's absence or its refusal. `expect`:
        the shoe and round the person saw (the table refuses the command if it moved on)."""
        secret = ({"token": credentials.token} if credentials.token and not credentials.pin
                  else {"pin": credentials.pin})
        payload = {"user": credentials.user, **secret, "action": action,
                   "args": dict(args or {}), "reason": reason}
        if expect is not None:
            payload["expect"] = dict(expect)
        try:
            response = self._request(self.socket_path, payload,
                                     timeout=timeout or self.send_timeout_s)
        except ControllerUnavailable as err:
            return Outcome(False, error=UNAVAILABLE, message=str(err))
        finally:
            # the PIN goes no further than this request
            payload.clear()
        if response.get("ok"):
            return Outcome(True, result=response.get("result"),
                           view_token=str(response.get("view_token") or ""))
        error = response.get("error")
        return Outcome(False, error=str(error) if error else "internal",
                       message=str(response.get("message") or ""),
                       words=response.get("words"))

    def fetch_state(self, credentials: Credentials) -> Outcome:
        """The table's state; a result that is not an object counts as a controller fault."""
        outcome = self.call("state", credentials, timeout=self.poll_timeout_s)
        if outcome.ok and not isinstance(outcome.result, dict):
            return Outcome(False, error="internal", message="the state is not a JSON object "
                           f"({type(outcome.result).__name__})")
        return outcome

    def send(self, action: str, credentials: Credentials, *, args: Mapping[str, Any],
             reason: str, expect: Mapping[str, Any] | None = None) -> Outcome:
        """One override (or any other action) with its arguments and reason, for the shoe
        and round the person saw (`expect`)."""
        return self.call(action, credentials, args=args, reason=reason, expect=expect)
