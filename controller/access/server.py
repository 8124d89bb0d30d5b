"""The control API: authenticated commands to the running controller over a Unix socket.

One JSON object per line each way. Request:
    {"id": 7, "user": "ann", "pin": "…", "action": "hold", "args": {}, "reason": "…",
     "expect": {"shoe": 3, "round": 41}}
(`expect`, optional: where the person saw the table; a table command is refused, `wrong_state`,
when the table is no longer there, rather than done to a round the person never saw).
Response:
    {"id": 7, "ok": true, "result": …}
    {"id": 7, "ok": false, "error": CODE, "message": …}

The server checks, in order: the line (malformed), the action (unknown_action), the person
(auth_failed, disabled, locked), the role (forbidden), the reason of an override
(reason_required) and the arguments (invalid_args); then it hands a Command to the
application's `submit`, which queues it for the table's single event loop and later settles
`Command.reply`. A refusal from the table (CommandRefused) answers wrong_state, or the code the
exception carries in `.code`; an InputError answers invalid_args. No answer within the reply
timeout answers `timeout`; an unexpected failure answers `internal`.

Each connection has its own thread and reads lines of at most `max_line` bytes, so one client's
bad bytes never stop another. The socket is created with mode 0660 (and the configured group)
before it listens, so nobody outside the group can ever connect.

Under a flood (docs/security.md): at most `max_connections` connections are served at once
(one more is answered `busy` and closed), a connection silent for `idle_timeout_s` is closed,
and the listen backlog holds BACKLOG connections. A sign-in with a PIN first takes a token from
its peer's bucket (the peer: the client process, uid and pid) and from the bucket of its account
*for that peer*; a failure keeps them, a success gives them back, and an empty bucket answers
`rate_limited` before any check. So a peer flooding wrong PINs spends only its own budgets: the
account's owner signing in from another process is never held up by them, and one peer alone
cannot spend the five failures that lock an account (ACCOUNT_LIMIT is below them). The account
store then checks attempts on one account in turn and runs at most a few scrypt computations at
once (`busy` beyond them).
"""
from __future__ import annotations

import concurrent.futures
import dataclasses
import errno
import grp
import math
import os
import secrets
import socket
import socketserver
import stat
import struct
import threading
import time
from pathlib import Path
from typing import Any, Callable

from controller.access import roles
from controller.access.accounts import NAME_RE, AccountStore, AuthResult
from controller.access.signin import RateLimit
# the line format lives in wire.py; its names are the control API's, importable from here too
from controller.access.wire import (ERROR_CODES, MAX_DEPTH, MAX_LINE, REQUEST_KEYS, Command,
                                    Refusal, encode, parse_request, refused)
from controller.errors import CommandRefused, InputError
from controller.logsetup import get_logger
from controller.logsetup import secret as keep_out_of_logs
from controller.words import Words, words_of

__all__ = ["ControlServer", "ControlError", "Command", "refused", "encode", "parse_request",
           "ERROR_CODES", "MAX_DEPTH", "MAX_LINE", "REQUEST_KEYS"]

log = get_logger("control_api")

VIEW_TTL_S = 8 * 3600.0     # a console's read-only view session: one shift
SOCKET_MODE = 0o660
MAX_CONNECTIONS = 32        # a console and a few scripts need a handful
IDLE_TIMEOUT_S = 60.0       # a client sends its line at once; one that stays silent is gone
BACKLOG = 128               # connections the kernel holds until they are accepted
#: the same refusal logged at most this often a minute (the next line says how many were not)
REFUSALS_LOGGED_A_MINUTE = 20
#: how long the accepting thread waits when the process has no descriptor left for a client
ACCEPT_RETRY_S = 0.5
#: failed PIN sign-ins allowed at once, and their refill a minute: per peer (a client process),
#: and per account and peer (fewer than the failures that lock an account, accounts.MAX_FAILURES)
PEER_LIMIT = (10, 10.0)
ACCOUNT_LIMIT = (3, 1.0)
_AUTH_ERRORS = {"unknown_user": "auth_failed", "wrong_pin": "auth_failed",
                "disabled": "disabled", "locked": "locked", "busy": "busy"}


class ControlError(InputError):
    """The control socket cannot be set up: one line naming the path and the fix."""


class LogRepeats:
    """At most `per_minute` log lines a minute for each kind of line: a client looping on a
    bad request is answered every time, but logged a few times a minute, each line after
    some were held back saying how many (`not_logged`). Without it one client's 10,000
    malformed lines a second were 10,000 log lines a second (2.5 MB), on the journal's disk."""

    def __init__(self, per_minute: int = REFUSALS_LOGGED_A_MINUTE,
                 clock: Callable[[], float] = time.monotonic):
        self.per_minute, self.clock = per_minute, clock
        self._lock = threading.Lock()
        self._kinds: dict[str, list[float]] = {}       # kind → [minute's start, logged, held]

    def let(self, kind: str) -> int | None:
        """None: hold this line back; else log it, with this many held back before it."""
        now = self.clock()
        with self._lock:
            seen = self._kinds.get(kind)
            held = 0
            if seen is None or now - seen[0] >= 60.0:
                held = int(seen[2]) if seen is not None else 0
                if len(self._kinds) > 256:
                    self._kinds.clear()
                seen = self._kinds[kind] = [now, 0.0, 0.0]
            if seen[1] >= self.per_minute:
                seen[2] += 1
                return None
            seen[1] += 1
            return held


def _not_logged(held: int) -> dict[str, int]:
    return {"not_logged": held} if held else {}


class ControlServer:
    """Listens on a Unix socket and turns request lines into Commands for `submit`."""

    def __init__(self, socket_path: str | os.PathLike[str], store: AccountStore,
                 submit: Callable[[Command], None], *, group: str | None = None,
                 reply_timeout_s: float = 10.0, idle_timeout_s: float = IDLE_TIMEOUT_S,
                 max_line: int = MAX_LINE, on_auth: Callable[[AuthResult], None] | None = None,
                 max_connections: int = MAX_CONNECTIONS,
                 peer_limit: tuple[int, float] = PEER_LIMIT,
                 account_limit: tuple[int, float] = ACCOUNT_LIMIT):
        self.path = Path(socket_path)
        self.store = store
        self.submit = submit
        self.group = group or None
        self.reply_timeout_s = reply_timeout_s
        self.idle_timeout_s = idle_timeout_s
        self.max_line = max_line
        self.on_auth = on_auth
        self.max_connections = max_connections
        self.peer_limit = RateLimit(*peer_limit)
        self.account_limit = RateLimit(*account_limit)
        self._active = 0                # connections being served (under _conns_lock)
        self.turned_away = 0            # connections answered busy at the cap
        self._server: socketserver.ThreadingUnixStreamServer | None = None
        self._thread: threading.Thread | None = None
        self._inode: tuple[int, int] | None = None
        self._conns: set[socket.socket] = set()
        self._conns_lock = threading.Lock()
        # read-only view sessions: token → (user, role, expiry); kept in memory only, so a
        # restart of the controller signs every console out
        self._views: dict[str, tuple[str, str, float]] = {}
        self._views_lock = threading.Lock()
        self.view_ttl_s = VIEW_TTL_S
        self.log_repeats = LogRepeats()
        self.out_of_descriptors = 0     # accepts that found no file descriptor left

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self) -> "ControlServer":
        self._clear_stale()
        gid = self._group_id()
        owner = self

        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                owner._serve_connection(self.connection, self.rfile, self.wfile)

        class Server(socketserver.ThreadingUnixStreamServer):
            daemon_threads = True
            request_queue_size = BACKLOG

            def process_request(self, request: Any, client_address: Any) -> None:
                # decided on the accepting thread: a connection over the cap never gets one
                if not owner._admit():
                    owner._turn_away(request)
                    self.shutdown_request(request)
                    return
                try:
                    super().process_request(request, client_address)
                except BaseException:
                    owner._leave()
                    raise

            def get_request(self) -> Any:
                try:
                    return super().get_request()
                except OSError as err:
                    if err.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                        # the connection waits in the backlog, and the socket stays readable:
                        # retried at once, this thread would spin on it and take the
                        # interpreter from the table's loop; wait a little instead
                        owner._no_descriptor(err)
                    raise

            def process_request_thread(self, request: Any, client_address: Any) -> None:
                try:
                    super().process_request_thread(request, client_address)
                finally:
                    owner._leave()

            def server_bind(self) -> None:
                super().server_bind()
                # permissions before listen(): until then every connect is refused
                os.chmod(owner.path, SOCKET_MODE)
                if gid is not None:
                    try:
                        os.chown(owner.path, -1, gid)
                    except PermissionError as err:
                        raise ControlError(f"{owner.path}: cannot give the socket to group "
                                           f"{owner.group!r} ({err.strerror}); run the "
                                           "controller as a member of that group") from err

        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._server = Server(str(self.path), Handler)
        except ControlError:
            self.path.unlink(missing_ok=True)
            raise
        except OSError as err:
            raise ControlError(f"{self.path}: cannot listen ({err.strerror or err}); "
                               "check [console] socket in config/table.toml") from err
        st = os.stat(self.path)
        self._inode = (st.st_dev, st.st_ino)
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        name="control-api", daemon=True)
        self._thread.start()
        log.info("control socket listening", socket=str(self.path), group=self.group)
        return self

    def close(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        with self._conns_lock:
            # hang up on open connections too: no command may arrive after close()
            for conn in self._conns:
                try:
                    conn.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
        if self._thread is not None:
            self._thread.join()
        try:
            st = os.stat(self.path)
            if (st.st_dev, st.st_ino) == self._inode:
                self.path.unlink()
        except FileNotFoundError:
            pass
        self._server = None
        log.info("control socket closed", socket=str(self.path))

    def __enter__(self) -> "ControlServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _group_id(self) -> int | None:
        if self.group is None:
            return None
        try:
            return grp.getgrnam(self.group).gr_gid
        except KeyError:
            raise ControlError(f"console group {self.group!r} does not exist; create it "
                               "(groupadd) or fix [console] group in config/table.toml") from None

    def _clear_stale(self) -> None:
        """Remove a socket left by a controller that died; refuse a live one or a non-socket."""
        try:
            st = os.lstat(self.path)
        except FileNotFoundError:
            return
        if not stat.S_ISSOCK(st.st_mode):
            raise ControlError(f"{self.path} exists and is not a socket; remove it or choose "
                               "another [console] socket path")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(1.0)
        try:
            probe.connect(str(self.path))
        except OSError as err:
            if err.errno in (errno.ECONNREFUSED, errno.ENOENT):
                self.path.unlink(missing_ok=True)
                log.warning("stale control socket removed", socket=str(self.path))
                return
            raise ControlError(f"{self.path}: cannot check the existing socket "
                               f"({err.strerror or err})") from err
        finally:
            probe.close()
        raise ControlError(f"{self.path}: another controller is listening there; stop it or "
                           "choose another [console] socket path")

    # -- one connection ------------------------------------------------------------------------

    def _admit(self) -> bool:
        with self._conns_lock:
            if self._active >= self.max_connections:
                self.turned_away += 1
                return False
            self._active += 1
            return True

    def _no_descriptor(self, err: OSError) -> None:
        """On the accepting thread: no descriptor for a new connection; one line, a pause."""
        self.out_of_descriptors += 1
        held = self.log_repeats.let("no_descriptor")
        if held is not None:
            log.error("control socket cannot take a connection: the process has no file "
                      "descriptor left; the console waits until some are closed",
                      error=err.strerror or str(err), times=self.out_of_descriptors,
                      **_not_logged(held))
        time.sleep(ACCEPT_RETRY_S)

    def _leave(self) -> None:
        with self._conns_lock:
            self._active -= 1

    @staticmethod
    def _tell(conn: socket.socket, answer: dict[str, Any]) -> None:
        """One last line to a client, if its buffer takes it now (never waits)."""
        try:
            conn.setblocking(False)
            conn.send(encode(answer))
        except OSError:
            pass

    def _turn_away(self, conn: socket.socket) -> None:
        if self.turned_away == 1 or self.turned_away % 1000 == 0:
            log.warning("control connections at the cap; turning new ones away",
                        limit=self.max_connections, turned_away=self.turned_away)
        try:
            conn.setblocking(False)     # a fresh socket's buffer takes one line; never wait
            conn.send(encode(self._error(None, "busy", f"the controller serves at most "
                                         f"{self.max_connections} connections at once; "
                                         "try again in a moment")))
        except OSError:
            pass

    @staticmethod
    def _peer(conn: socket.socket) -> str:
        """Who is at the other end of a Unix socket: the client process (its uid and pid, as
        the kernel tells them), so that two consoles of one user id are two peers."""
        try:
            raw = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            pid, uid, _ = struct.unpack("3i", raw)
            return f"uid:{uid} pid:{pid}"
        except (OSError, AttributeError, struct.error):
            return "uid:?"

    def _serve_connection(self, conn: socket.socket, rfile: Any, wfile: Any) -> None:
        conn.settimeout(self.idle_timeout_s)
        peer = self._peer(conn)
        with self._conns_lock:
            if self._server is None:
                return
            self._conns.add(conn)
        reading = True
        try:
            while True:
                line = rfile.readline(self.max_line + 1)
                if not line:
                    return
                if len(line) > self.max_line:
                    # the framing is lost: answer, then hang up rather than guess
                    wfile.write(encode(self._error(None, "malformed", "request line longer "
                                                   f"than {self.max_line} bytes")))
                    held = self.log_repeats.let("too_long")
                    if held is not None:
                        log.warning("control request too long", limit=self.max_line,
                                    peer=peer, **_not_logged(held))
                    return
                if not line.strip():
                    continue
                answer = self._encoded(self.handle_line(line, peer=peer))
                reading = False
                wfile.write(answer)
                wfile.flush()
                reading = True
        except TimeoutError:
            if not reading:
                # its answers pile up unread (a client that only sends): nothing more can
                # reach it; the command it sent last was done all the same
                held = self.log_repeats.let("not_reading")
                if held is not None:
                    log.warning("control client does not read its answers; closed", peer=peer,
                                timeout_s=self.idle_timeout_s, **_not_logged(held))
                return
            # silent for the whole timeout, or half a line and then nothing: say so to the
            # client (if it can take one more line) and in the log, then hang up
            held = self.log_repeats.let("idle")
            if held is not None:
                log.warning("control connection silent; closed", peer=peer,
                            timeout_s=self.idle_timeout_s, **_not_logged(held))
            self._tell(conn, self._error(None, "timeout", "no whole request line within "
                                         f"{self.idle_timeout_s:g} s; the connection is "
                                         "closed (send each request as one line, ending "
                                         "with a newline)"))
            return
        except OSError:
            return
        finally:
            with self._conns_lock:
                self._conns.discard(conn)

    def _open_view(self, user: str, role: str) -> str:
        """A read-only session after a PIN sign-in, so a console need not keep the PIN."""
        token = keep_out_of_logs(secrets.token_urlsafe(24))
        now = time.monotonic()
        with self._views_lock:
            self._views = {t: v for t, v in self._views.items() if v[2] > now}
            self._views[token] = (user, role, now + self.view_ttl_s)
        return token

    def _view_role(self, user: str, token: str, action: str) -> str:
        if action not in roles.READ_ACTIONS:
            raise Refusal("auth_failed", f"a view session only reads; {action} needs "
                           "your name and PIN")
        with self._views_lock:
            view = self._views.get(token)
        if view is None or view[0] != user or view[2] <= time.monotonic():
            raise Refusal("auth_failed", "the view session is unknown or has expired; "
                           "sign in again")
        if self.store.is_disabled(user):
            raise Refusal("disabled", f"{user!r} has been disabled")
        return view[1]

    def _encoded(self, answer: dict[str, Any]) -> bytes:
        """The answer's line; one that cannot be written as JSON (a value no JSON holds)
        is answered `internal`, never left unanswered with the connection dropped."""
        try:
            return encode(answer)
        except (TypeError, ValueError) as err:
            log.error("control answer cannot be encoded", id=answer.get("id"),
                      error=f"{type(err).__name__}: {err}")
            rid = answer.get("id")
            return encode(self._error(rid if isinstance(rid, (str, int)) else None, "internal",
                                      f"internal error: the answer cannot be written as JSON "
                                      f"({type(err).__name__}); check `state`, the log has "
                                      "the detail"))

    @staticmethod
    def _error(rid: Any, code: str, message: str) -> dict[str, Any]:
        return {"id": rid, "ok": False, "error": code, "message": message}

    def handle_line(self, line: bytes, *, peer: str = "uid:?") -> dict[str, Any]:
        """Answer one request line (never raises)."""
        rid = None
        try:
            req = parse_request(line)
            rid = req.get("id")
            result = self._handle(req, peer)
        except Refusal as ref:
            rid = rid if rid is not None else ref.rid
            held = self.log_repeats.let(ref.code)
            if held is not None:
                log.warning("control request refused", id=rid, error=ref.code,
                            message=ref.message, peer=peer, **_not_logged(held))
            answer = self._error(rid, ref.code, ref.message)
            if ref.words is not None:
                answer["words"] = ref.words.as_dict()
            return answer
        except Exception as err:  # one bad request must never stop the server
            log.exception("control request failed", id=rid)
            return self._error(rid, "internal", f"internal error: {type(err).__name__}: {err}")
        answer = {"id": rid, "ok": True, "result": result}
        if req.get("_view_token"):
            answer["view_token"] = req["_view_token"]
        return answer

    def _sign_in(self, user: str, pin: str, action: str, peer: str) -> AuthResult:
        """A PIN sign-in within the peer's and the account's budgets of failures."""
        account = user if isinstance(user, str) and NAME_RE.match(user) else "?"
        mine = f"{account}\0{peer}"             # this account's budget for this peer alone
        wait = self.peer_limit.take(peer)
        if wait == 0.0:
            wait = self.account_limit.take(mine)
            if wait:
                self.peer_limit.give_back(peer)
                who = f"for {account!r} " if account != "?" else "for invalid names "
        else:
            who = ""
        if wait:
            return AuthResult(False, account, "rate_limited", f"too many failed sign-ins {who}"
                              f"from this console or program; try again in {math.ceil(wait)} s",
                              context=action, at=self.store.clock(), peer=peer)
        auth = self.store.authenticate(user, pin, context=action)
        if auth.ok or auth.code == "busy":      # only failures spend the budgets
            self.peer_limit.give_back(peer)
            self.account_limit.give_back(mine)
        return dataclasses.replace(auth, peer=peer)

    def _handle(self, req: dict[str, Any], peer: str = "uid:?") -> Any:
        user, action, args = req["user"], req["action"], req["args"]
        reason = req["reason"].strip()
        if action not in roles.ACTIONS:
            raise Refusal("unknown_action", f"unknown action {action!r}; actions: "
                           f"{', '.join(roles.ACTIONS)}")
        if "token" in req and "pin" not in req:
            role = self._view_role(user, req["token"], action)
            self._authorise(user, role, action, args, reason)
        else:
            auth = self._sign_in(user, req["pin"], action, peer)
            if not auth.ok:
                if self.on_auth is not None:
                    self.on_auth(auth)
                # a lock says how it ends: by itself in so many minutes, or by a manager now
                words = Words("refuse.locked", {"user": user, "n": auth.locked_minutes}) \
                    if auth.locked_minutes and (auth.code == "locked" or auth.locked_now) \
                    else None
                raise Refusal(_AUTH_ERRORS.get(auth.code, auth.code if auth.code in ERROR_CODES
                                                else "auth_failed"), auth.message, words=words)
            role = auth.role or ""
            try:
                self._authorise(user, role, action, args, reason)
            except Refusal as ref:
                # signed in, and refused before the table: the sign-in's record says so (a
                # dealer's void_round, an override without its reason), so the journal
                # has the attempt as it has a command the table refused
                if self.on_auth is not None:
                    self.on_auth(dataclasses.replace(auth, refused=ref.code, why=ref.message))
                raise
            if self.on_auth is not None:
                self.on_auth(auth)
            if action in roles.READ_ACTIONS:
                req["_view_token"] = self._open_view(user, role)
        command = Command(user, role, action, dict(args), reason, req.get("expect"))
        log.info("control command", id=req.get("id"), user=user, role=role, action=action,
                 args=args, reason=reason)
        try:
            self.submit(command)
            return command.reply.result(timeout=self.reply_timeout_s)
        except concurrent.futures.TimeoutError:
            raise Refusal("timeout", f"the table did not answer {action} within "
                           f"{self.reply_timeout_s:g} s; check `state`") from None
        except CommandRefused as err:
            code = getattr(err, "code", "wrong_state")
            raise Refusal(code if code in ERROR_CODES else "wrong_state", str(err),
                           words=words_of(err)) from None
        except InputError as err:
            raise Refusal("invalid_args", str(err)) from None

    @staticmethod
    def _authorise(user: str, role: str, action: str, args: Any, reason: str) -> None:
        """The role, the reason and the arguments of a signed-in person's request."""
        if not roles.allowed(role, action):
            needs = roles.roles_for(action)
            raise Refusal("forbidden", f"{user!r} has the role {role}; {action} needs the role "
                           f"{' or '.join(needs)}", words=Words("refuse.forbidden", {
                               "user": user, "role": role, "roles": needs}))
        if roles.needs_reason(action) and not reason:
            raise Refusal("reason_required", f"{action} is an override; give a reason",
                           words=Words("refuse.reason_required"))
        if len(reason) > roles.REASON_MAX_CHARS:
            raise Refusal("invalid_args", f"reason is longer than {roles.REASON_MAX_CHARS} "
                           "characters")
        problem = roles.check_args(action, args)
        if problem:
            raise Refusal("invalid_args", problem)
