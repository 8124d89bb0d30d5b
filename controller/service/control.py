"""The control socket's side of the service: commands go through the loop like any input;
reads are answered off the loop's thread, so a console never holds up a card (measured by
bench/flood.py: the pace holds under a flood; a large recall still delays single cards by tens
of milliseconds through Python's interpreter lock, hence its cap, `roles.READ_LIMIT`).

- `state`: a read-only query run between two inputs (microseconds) plus the recent rounds,
  alarms and overrides the `Memory` publisher kept;
- `recall`, `audit`: read from the journal on the connection's own thread (a read-only
  connection), never on the table's;
- `users`: the account store, on the connection's thread; the change is journaled as a note;
- sign-ins are checked (scrypt) on the connection's thread; failures are journaled as a
  summary per account and minute, locks and unlocks in full (`signins.SignInJournal`).
"""
from __future__ import annotations

import concurrent.futures
import threading
from collections import deque
from pathlib import Path
from typing import Any, Callable

from controller.errors import CommandRefused, InputError
from controller.journal import Journal
from controller.settings.profile import resolve
from controller.journal.recall import last_rounds, overrides
from controller.roads import ShoeRoads
from controller.service.inputs import Note, Query, Submitted
from controller.service.loop import TableService
from controller.service.signins import MINUTE, SignInJournal
from controller.table import Table
from controller.table.inputs import Command as TableCommand

READ_ACTIONS = ("state", "recall", "audit")


class Memory:
    """A publisher that keeps the last rounds, alarms and overrides for `state` requests."""
    #: what it keeps (the roads, the last rounds, alarms, overrides): no call for the rest,
    #: prompts among them (the state request asks the prompter itself)
    takes = frozenset({"shoe_started", "round_result", "alarm", "override"})

    def __init__(self, keep: int = 10):
        self.rounds: deque[dict] = deque(maxlen=keep)
        self.alarms: deque[dict] = deque(maxlen=20)
        self.overrides: deque[dict] = deque(maxlen=200)
        # the supervisor sees every result at once, revealed to the table or not
        self.roads = ShoeRoads()
        self._roads_json: dict | None = None

    def roads_view(self) -> dict:
        """The bead plate, big road and counts of the current shoe (made once per change)."""
        if self._roads_json is None:
            full = self.roads.to_json()
            self._roads_json = {k: full[k] for k in ("shoe", "game", "bead_plate", "big_road",
                                                     "counts") if k in full}
        return self._roads_json

    def publish(self, event: dict) -> None:
        if self.roads.publish(event):
            self._roads_json = None
        kind = event["event"]
        if kind == "round_result":
            self.rounds.append(event)
        elif kind == "alarm" and event.get("severity") != "info":
            self.alarms.append({k: event.get(k) for k in ("source", "code", "text", "severity")})
        elif kind == "override":
            self.overrides.append(event)


class ControlAdapter:
    """What the control server calls (from its connection threads) for each command."""

    def __init__(self, service: TableService, journal_path: str, memory: Memory, *,
                 name: str = "T1", store: Any = None):
        self.service, self.journal_path, self.memory = service, journal_path, memory
        self.name = name
        self.store = store
        # set by whoever builds the table PC's parts: the health view (run on the loop's
        # thread) and the software SHA-256 a manager's accept_software names
        self.health: Callable[[Table], dict] | None = None
        self.software = ""
        self.signins = SignInJournal(lambda data, durable: service.submit(
            Note("auth", data, durable=durable)))
        self._flush_lock = threading.Lock()
        self._flush_set = False

    def submit(self, cmd: Any) -> None:
        """A `control_api.Command`: settle `cmd.reply` with the answer or the refusal."""
        try:
            if cmd.action == "state":
                self._chain(Query(lambda table: self._state(table, cmd)), cmd.reply)
            elif cmd.action == "health":
                if self.health is None:
                    raise CommandRefused("this table keeps no health view")
                self._chain(Query(self.health), cmd.reply)
            elif cmd.action in ("recall", "audit"):
                cmd.reply.set_result(self._read(cmd.action, dict(cmd.args)))
            elif cmd.action == "users":
                cmd.reply.set_result(self._users(cmd))
            else:
                self._chain(Submitted(self._table_command(cmd)), cmd.reply)
        except (CommandRefused, InputError) as err:
            cmd.reply.set_exception(err)

    def on_auth(self, result: Any) -> None:
        """Every sign-in attempt, for the journal (queued as notes, never on the table's
        thread): failures summarised a minute at a time, whose summary the loop writes once
        the minute is over."""
        self.signins.record(result)
        if result.ok:
            return
        with self._flush_lock:
            if self._flush_set:
                return
            self._flush_set = True
        self.service.submit(lambda: self.service.call_later(MINUTE + 1.0, self._flush))

    def _flush(self) -> None:
        """On the loop's thread: the minutes that are over; again later while any is open."""
        with self._flush_lock:
            self._flush_set = False
        self.signins.flush()
        if self.signins.pending():
            with self._flush_lock:
                self._flush_set = True
            self.service.call_later(MINUTE, self._flush)

    # ------------------------------------------------------------------ each kind
    def _chain(self, item: Query | Submitted, reply: concurrent.futures.Future) -> None:
        def done(f: concurrent.futures.Future) -> None:
            err = f.exception()
            if err is not None:
                reply.set_exception(err)
            else:
                reply.set_result(f.result())
        item.reply.add_done_callback(done)
        self.service.submit(item)

    def _state(self, table: Table, cmd: Any = None) -> dict:
        view = table.view()
        if cmd is not None:
            # who reads: a console offers each person only the actions their role may take
            view["viewer"] = {"user": cmd.user, "role": cmd.role}
        view.update(table=self.name, alarms=list(self.memory.alarms),
                    last_rounds=list(self.memory.rounds), roads=self.memory.roads_view())
        view.update(self.service.reports)        # e.g. "feed": connected, behind, problem
        # what the people at the table are told, service conditions (no shoe, software held)
        # and SIMULATOR included
        prompt = self.service.prompt
        words = prompt.words()
        view.update(prompt=prompt.text(), simulator=prompt.simulated,
                    conditions=dict(self.service.conditions.active),
                    prompt_words=words.as_dict() if words is not None else None)
        if self.health is not None:
            view["health"] = self.health(table)
        return view

    def _table_command(self, cmd: Any) -> TableCommand:
        args = dict(cmd.args)
        if cmd.action == "change_profile":
            # the journal keeps the profile exactly as loaded, so a replay never reads a file
            try:
                path = resolve(str(args.get("profile", "")))
                args["text"] = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as err:
                raise CommandRefused(f"profile {args.get('profile')!r} cannot be read: {err}",
                                     code="invalid_args") from err
            except InputError as err:
                raise CommandRefused(str(err), code="invalid_args") from err
        if cmd.action == "accept_software":
            gate = self.service.conditions.gate
            if gate is None or gate.opens_on != "accept_software" or not self.software:
                raise CommandRefused("no software waits to be accepted: the table is not held "
                                     "for it")
            args["software"] = self.software     # the journal names what was accepted
        expect = getattr(cmd, "expect", None)
        return TableCommand(action=cmd.action, args=args, user=cmd.user, role=cmd.role,
                            reason=cmd.reason, expect=dict(expect) if expect else None)

    def _read(self, action: str, args: dict) -> dict:
        last = int(args.get("count") or args.get("limit") or 10)
        journal = Journal.open_readonly(self.journal_path)
        try:
            if action == "audit":
                return {"overrides": overrides(journal, last=last)}
            return {"rounds": last_rounds(journal, last)}
        finally:
            journal.close()

    def _users(self, cmd: Any) -> Any:
        from controller.access.accounts import users_action
        result = users_action(self.store, dict(cmd.args), by=cmd.user)
        self.service.submit(Note("account", {"user": cmd.user, "reason": cmd.reason,
                                             **dict(cmd.args)}, durable=True))
        return result


