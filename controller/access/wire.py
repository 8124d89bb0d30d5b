"""The control socket's line format: one JSON object per line each way (server.py's docstring
shows both), the shape a request must have, and the Command an accepted one becomes.

Nothing here touches a socket or an account: `parse_request` checks a line's shape (refusing
it as `malformed`), `encode` writes an answer, so the same rules hold for every connection.
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import json
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping

from controller.errors import CommandRefused
from controller.logsetup import secret as keep_out_of_logs

ERROR_CODES = ("malformed", "unknown_action", "auth_failed", "locked", "disabled", "forbidden",
               "reason_required", "wrong_state", "invalid_args", "timeout", "internal", "busy",
               "rate_limited")
REQUEST_KEYS = frozenset({"id", "user", "pin", "token", "action", "args", "reason", "expect"})
#: what `expect` may name: where the person saw the table (a number, or null for none)
EXPECT_KEYS = ("shoe", "round")
MAX_LINE = 64 * 1024
MAX_DEPTH = 8               # a request's args nest two or three levels; deeper is not a request
#: a JSON escape that can decode to half of a UTF-16 pair (\ud800-\udfff): the line is UTF-8,
#: so only such an escape can put a lone surrogate, which is no text, into a request
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Command:
    """An authenticated, authorised command for the table's event loop; settle `reply`."""
    user: str
    role: str
    action: str
    args: Mapping[str, Any]
    reason: str
    #: the shoe and round the person saw when they chose it (None: not said); the table
    #: refuses the command when it is no longer there
    expect: Mapping[str, Any] | None = None
    reply: concurrent.futures.Future = dataclasses.field(
        default_factory=concurrent.futures.Future, compare=False, repr=False)


def refused(message: str, code: str = "wrong_state") -> CommandRefused:
    """A CommandRefused that answers the client with `code` (one of ERROR_CODES)."""
    return CommandRefused(message, code=code)


class Refusal(Exception):
    """A request answered with an error `code` (one of ERROR_CODES) and its message."""

    def __init__(self, code: str, message: str, rid: Any = None, words: Any = None):
        super().__init__(message)
        self.code, self.message, self.rid = code, message, rid
        self.words = words          # the refusal in plain words, for each reader's language


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not allowed")


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, Fraction):
        return float(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    return str(value)


def encode(message: Mapping[str, Any]) -> bytes:
    """One response or request line (UTF-8 JSON and a newline). Never fails on text that is
    not Unicode (a lone surrogate in an old journal's record, a file name's undecodable
    byte): such a character is written as its JSON escape (`\\udcff`), which is what
    backslashreplace makes of it inside a JSON string, the only place one can be."""
    return (json.dumps(message, default=_jsonable, ensure_ascii=False, allow_nan=False)
            + "\n").encode("utf-8", "backslashreplace")


def _depth(value: Any) -> int:
    """How deep lists and objects nest in a decoded request (without recursion)."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        if isinstance(item, (dict, list)):
            deepest = max(deepest, level)
            if level > MAX_DEPTH:
                return level
            todo.extend((v, level + 1) for v in (item.values() if isinstance(item, dict)
                                                  else item))
    return deepest


def _lone_surrogate(value: Any) -> str | None:
    """The first lone surrogate in a decoded request's keys and strings, or None."""
    todo = [value]
    while todo:
        item = todo.pop()
        if isinstance(item, str):
            found = None if item.isascii() else _SURROGATE.search(item)
            if found:
                return found.group()
        elif isinstance(item, dict):
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, list):
            todo.extend(item)
    return None


def parse_request(line: bytes) -> dict[str, Any]:
    """Decode and shape-check one request line; raises Refusal("malformed", …)."""
    try:
        req = json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
    except UnicodeDecodeError as err:
        raise Refusal("malformed", f"request is not UTF-8 (byte {err.start})") from None
    except ValueError as err:
        raise Refusal("malformed", f"request is not JSON: {err}") from None
    except RecursionError:
        raise Refusal("malformed", f"request nests deeper than {MAX_DEPTH} levels") from None
    if _depth(req) > MAX_DEPTH:
        raise Refusal("malformed", f"request nests deeper than {MAX_DEPTH} levels")
    if not isinstance(req, dict):
        raise Refusal("malformed", "request must be a JSON object with user, pin, action")
    for key in ("pin", "token"):
        keep_out_of_logs(req.get(key))  # never in a log line from here on
    rid = req.get("id")
    extra = sorted(set(req) - REQUEST_KEYS)
    if extra:
        raise Refusal("malformed", f"unknown request key(s) {', '.join(extra)}; allowed: "
                       f"{', '.join(sorted(REQUEST_KEYS))}",
                       rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None)
    if isinstance(rid, bool) or not isinstance(rid, (str, int, type(None))):
        raise Refusal("malformed", "id must be a string, a whole number or null")
    # an escape such as \ud800 decodes to half a character: it could not be answered (UTF-8
    # has no such thing), nor journaled as text that audit, recall and the feed can print
    lone = _lone_surrogate(req) if _SURROGATE_ESCAPE.search(line) else None
    if lone is not None:
        raise Refusal("malformed", f"request holds \\u{ord(lone):04x}, half of a UTF-16 "
                       "surrogate pair, which is no character; send text as UTF-8",
                       None if _lone_surrogate(rid) else rid)
    for key in ("user", "action"):
        if not isinstance(req.get(key), str) or not req[key]:
            raise Refusal("malformed", f"{key} must be a non-empty string", rid)
    secret = "token" if "token" in req and "pin" not in req else "pin"
    if not isinstance(req.get(secret), str) or not req[secret]:
        raise Refusal("malformed", f"{secret} must be a non-empty string", rid)
    if not isinstance(req.setdefault("args", {}), dict):
        raise Refusal("malformed", "args must be a JSON object", rid)
    if not isinstance(req.setdefault("reason", ""), str):
        raise Refusal("malformed", "reason must be a string", rid)
    expect = req.setdefault("expect", None)
    if expect is not None and not (
            isinstance(expect, dict) and expect and set(expect) <= set(EXPECT_KEYS)
            and all(v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 0)
                    for v in expect.values())):
        raise Refusal("malformed", "expect must be an object naming the shoe and the round "
                       'the table was at, e.g. {"shoe": 3, "round": 41} (null for none)', rid)
    return req
