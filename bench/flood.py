"""Nothing stalls the loop: a steady shoe through the one table loop while the control socket
is flooded, side by side with the same shoe and no flood, in one run.

The table is `tablectl run`'s (bench/latency.py's LiveTable: the service's builder, the ShoeSource on a
pty speaking Bee-Tek, the TableService loop on the real clock, the journal fsynced for each
card, the publishers, the control socket with its account store). Its journal is first filled
with a few thousand rounds (`tablectl simulate --journal` in a child process; the table then
resumes it as a restart would), so that recall and audit read a day's journal.

A writer thread on the pty master plays the shoe: one card every 1/--rate s on a fixed
schedule (the double-draw window is `run`'s 0.15 s, unless the reads come faster than twice
that). Two phases of --cards cards each:
- quiet: nothing else happens;
- flood: another process (as consoles are) floods the socket from its threads, each on its own
  connection, one request after the other: `state` (a view session's token; the query runs on
  the loop between two inputs), `recall` of --recall-rounds rounds and `audit` (both read the
  journal on the connection's thread), and sign-ins with a wrong PIN (scrypt on the
  connection's thread; each attempt is journaled as a note through the loop). The account is
  never locked out nor rate limited here (both raised), so every failed sign-in costs a full
  scrypt check: the worst case. The clients decode only short answers (a long recall's head is
  checked): decoding megabytes would only take CPU from the controller on a small machine.

For each phase: the pace (cards decided per second, from the first card's event to the
last's), the controller's added latency per card (decoded CardRead → the card's event
published; p50, p99, max) with its queue and journal parts, the writer's lag behind its
schedule; and the requests served during the flood phase, by kind. Expectation: the pace
holds at --rate and the added latency stays near the quiet one under the flood.

    python bench/flood.py [--cards 60] [--rate 3] [--prefill-shoes 40] [--prefill-cache F]
                          [--recall-rounds 100] [--clients 1] [--kdf production|fast]
                          [--switch-interval S] [--json]

With --json the table goes to stderr and stdout gets one JSON line: pace_quiet, pace_flood,
added_p50_ms_quiet, added_p99_ms_quiet, added_max_ms_quiet (and _flood), requests_served,
requests (by kind), rounds_in_journal and more.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parent))
import latency  # noqa: E402  (the production path and its stamps)

from controller.access.accounts import AccountStore, ScryptParams  # noqa: E402
from controller.settings.config import ShoeCfg  # noqa: E402
from controller.logsetup import configure  # noqa: E402
from controller.access.signin import RateLimit  # noqa: E402
from controller.settings.profile import load_profile  # noqa: E402

KINDS = ("state", "recall", "audit", "signin")
FAST_KDF = ScryptParams(n=2 ** 4, r=1, p=1)
USERS = {"mia": ("manager", "manager-pin-1"), "ann": ("dealer", "dealer-pin-1"),
         "sam": ("supervisor", "supervisor-pin-1")}
WRONG_PIN = "not-the-pin-9"
PACE_SLACK = 0.98           # the pace holds when it is at least this share of --rate


# --------------------------------------------------------------------------- the journal

def prefill(journal: str, shoes: int, seed: int = 7, fsync: bool = False) -> None:
    """`tablectl simulate --journal` on the file: `shoes` whole macau shoes (about 80 rounds
    each) through the same loop on the virtual clock. Not measured: by default the child skips
    the fsync (TABLECTL_STORAGE_FSYNC), which only makes the filling faster."""
    env = dict(os.environ)
    if not fsync:
        env["TABLECTL_STORAGE_FSYNC"] = "false"
    cmd = [sys.executable, "-c", "import sys; from controller.cli import main; "
           "sys.exit(main(sys.argv[1:]))", "simulate", "--profile", "macau", "--seed",
           str(seed), "--shoes", str(shoes), "--journal", journal]
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, cwd=Path(__file__).resolve().parents[1])
    if done.returncode != 0:
        raise RuntimeError(f"prefill: tablectl simulate exited {done.returncode}: "
                           f"{done.stderr.strip()[-500:]}")


def journal_rounds(journal: str) -> tuple[int, int]:
    """(rounds with a result, records) in the journal."""
    conn = sqlite3.connect(f"file:{journal}?mode=ro", uri=True)
    try:
        rounds = conn.execute("SELECT count(*) FROM records WHERE kind = 'round_result'"
                              ).fetchone()[0]
        records = conn.execute("SELECT max(seq) FROM records").fetchone()[0] or 0
        return int(rounds), int(records)
    finally:
        conn.close()


def make_users(path: str, kdf: ScryptParams) -> None:
    store = AccountStore(path, kdf=kdf)
    store.bootstrap("mia", USERS["mia"][1])
    for name, (role, pin) in USERS.items():
        if name != "mia":
            store.add(name, role, pin, by="mia")


# --------------------------------------------------------------------------- the flood (child)

def _request(rfile: Any, sock: socket.socket, message: dict) -> dict:
    """One request; the answer's head only when it is long (a recall of hundreds of rounds):
    decoding it here would only take CPU from the controller on a small machine."""
    sock.sendall((json.dumps(message) + "\n").encode())
    line = rfile.readline()
    if not line:
        raise ConnectionError("the controller closed the connection")
    if len(line) < 65536:
        return json.loads(line)
    head = line[:200]
    return {"ok": b'"ok": true' in head, "error": None if b'"ok": true' in head else "?"}


def worker(socket_path: str, kinds: Sequence[str], clients: int, recall_rounds: int) -> int:
    """The flooding process: threads, each on its own connection, until stdin says
    `stop T0 T1`; then one JSON line: requests answered within [T0, T1] by kind (and in all:
    answered_total)."""
    stop = threading.Event()
    ready = threading.Barrier(len(kinds) * clients + 1)
    lock = threading.Lock()
    done: list[tuple[str, float, float, bool, str]] = []    # kind, sent, answered, ok, error
    failures: list[str] = []

    def flood(kind: str) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.connect(socket_path)
            rfile = sock.makefile("rb")
            user, (_, pin) = "ann", USERS["ann"]
            token = None
            if kind != "signin":        # a console signs in once and reads with its token
                answer = _request(rfile, sock, {"user": user, "pin": pin, "action": "state"})
                token = answer.get("view_token")
                if not answer.get("ok") or not token:
                    raise RuntimeError(f"{kind}: sign-in refused: {answer}")
            message: dict[str, Any] = {"user": user, "token": token, "action": kind}
            if kind == "recall":
                message["args"] = {"count": recall_rounds}
            elif kind == "audit":
                message["args"] = {"limit": 100}
            elif kind == "signin":
                message = {"user": "sam", "pin": WRONG_PIN, "action": "state"}
            ready.wait()
            n = 0
            while not stop.is_set() or n == 0:      # every connection gets one answer at least
                n += 1
                sent = time.monotonic()
                answer = _request(rfile, sock, {"id": n, **message})
                answered = time.monotonic()
                with lock:
                    done.append((kind, sent, answered, bool(answer.get("ok")),
                                 str(answer.get("error") or "")))
        except Exception as err:        # reported in the summary, never silently
            failures.append(f"{kind}: {err!r}")
            try:
                ready.abort()
            except threading.BrokenBarrierError:
                pass
        finally:
            sock.close()

    threads = [threading.Thread(target=flood, args=(kind,), daemon=True, name=f"flood-{kind}")
               for kind in kinds for _ in range(clients)]
    for t in threads:
        t.start()
    try:
        ready.wait()
        print("ready", flush=True)
    except threading.BrokenBarrierError:
        print(json.dumps({"failures": failures}), flush=True)
        return 1
    line = sys.stdin.readline().split()
    stop.set()
    for t in threads:
        t.join(timeout=60)
    t0, t1 = (float(line[1]), float(line[2])) if len(line) == 3 else (0.0, float("inf"))
    summary: dict[str, Any] = {"failures": failures, "kinds": {}}
    for kind in kinds:
        mine = [d for d in done if d[0] == kind and t0 <= d[2] <= t1]
        waits = sorted(d[2] - d[1] for d in mine)
        errors: dict[str, int] = {}
        for d in mine:
            if not d[3]:
                errors[d[4]] = errors.get(d[4], 0) + 1
        summary["kinds"][kind] = {
            "answered": len(mine), "ok": sum(1 for d in mine if d[3]), "errors": errors,
            "answered_total": sum(1 for d in done if d[0] == kind),
            "p50_ms": round(statistics.median(waits) * 1000, 2) if waits else None,
            "max_ms": round(waits[-1] * 1000, 2) if waits else None}
    print(json.dumps(summary), flush=True)
    return 0


class Flood:
    """The flooding process, seen from the bench."""

    def __init__(self, socket_path: str, kinds: Sequence[str], clients: int, recall_rounds: int):
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", socket_path,
               "--kinds", ",".join(kinds), "--clients", str(clients),
               "--recall-rounds", str(recall_rounds)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, cwd=Path(__file__).resolve().parents[1])
        first = self.proc.stdout.readline().strip()
        if first != "ready":
            self.proc.kill()
            raise RuntimeError(f"flood: the clients did not start: {first or 'no answer'}")

    def stop(self, t0: float, t1: float) -> dict:
        out, _ = self.proc.communicate(f"stop {t0!r} {t1!r}\n", timeout=120)
        summary = json.loads(out.strip().splitlines()[-1])
        if summary.get("failures"):
            raise RuntimeError(f"flood: clients failed: {'; '.join(summary['failures'])}")
        return summary["kinds"]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


# --------------------------------------------------------------------------- the shoe

def write_cards(rig: latency.Rig, first: int, last: int, rate: float,
                sent: list[float | None], lag: list[float]) -> None:
    """Cards first..last-1 onto the pty, 1/rate s apart on a fixed schedule."""
    start = time.monotonic()
    for k, i in enumerate(range(first, last)):
        due = start + k / rate
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        rig.send(i)
        sent[i] = time.monotonic()
        lag.append(sent[i] - due)


def phase(table: latency.LiveTable, rig: latency.Rig, first: int, last: int, rate: float,
          sent: list[float | None]) -> tuple[float, float, list[float]]:
    """One phase's cards through the table: (first card sent, last card decided, writer lag)."""
    lag: list[float] = []
    writer = threading.Thread(target=write_cards, args=(rig, first, last, rate, sent, lag),
                              name="shoe-writer", daemon=True)
    writer.start()
    table.wait_decided(last)
    writer.join(timeout=5)
    return sent[first] or 0.0, table.stamps.published[last - 1][0], lag


def figures(res: latency.Result, first: int, last: int, lag: list[float],
            published: Sequence[float]) -> dict:
    added = res.added[first:last]
    times = published[first:last]
    pace = (len(times) - 1) / (times[-1] - times[0]) if len(times) > 1 and \
        times[-1] > times[0] else None
    gaps = [b - a for a, b in zip(times, times[1:])]
    out: dict[str, Any] = {"cards": last - first,
                           "pace": round(pace, 3) if pace is not None else None,
                           "longest_gap_ms": round(max(gaps) * 1000, 1) if gaps else None}
    for name, values in (("added", added), ("queue", res.queue[first:last]),
                         ("apply", res.apply[first:last]),
                         ("journal", res.journal[first:last])):
        out[f"{name}_p50_ms"] = latency.ms(values, None)
        out[f"{name}_p99_ms"] = latency.ms(values, 0.99)
        out[f"{name}_max_ms"] = latency.ms(values, 1.0)
    out["writer_lag_max_ms"] = round(max(lag) * 1000, 2) if lag else None
    return out


def run(cards: int = 60, rate: float = 3.0, prefill_shoes: int = 40,
        prefill_cache: str | None = None, recall_rounds: int = 500, clients: int = 1,
        kdf: str = "production", kinds: Sequence[str] = KINDS) -> dict:
    """The whole bench; a dict of its figures (RuntimeError when a card is not decided or the
    flood's clients fail)."""
    profile = load_profile("macau")
    if 2 * cards > profile.cards:
        raise ValueError(f"2 x --cards must fit one shoe ({profile.cards} cards)")
    # AF_UNIX paths are short: the socket lives in a short /tmp directory
    where = tempfile.mkdtemp(prefix="flood-", dir="/tmp")
    table: latency.LiveTable | None = None
    flood: Flood | None = None
    try:
        journal = os.path.join(where, "journal.db")
        began = time.monotonic()
        if prefill_cache and os.path.exists(prefill_cache):
            shutil.copyfile(prefill_cache, journal)
        else:
            prefill(journal, prefill_shoes)
            if prefill_cache:
                shutil.copyfile(journal, prefill_cache)
        prefill_s = time.monotonic() - began
        rounds, records = journal_rounds(journal)
        users = os.path.join(where, "users.db")
        make_users(users, ScryptParams() if kdf == "production" else FAST_KDF)
        sock = os.path.join(where, "ctl.sock")
        order = latency.shoe_order(profile.decks, 2 * cards)
        rig = latency.Rig("pty", "beetek", order)
        stamps = latency.Stamps(2 * cards)
        try:
            # `run`'s double-draw window, unless the reads come too fast for it (short runs)
            pull = ShoeCfg().min_pull_interval_s
            table = latency.LiveTable(journal, rig.url, "beetek", stamps,
                                      min_pull_interval_s=pull if 1 / rate >= 2 * pull else 0.0)
            table.start(control=(sock, users))
            # the worst case for sign-ins: never locked out nor rate limited, each a full
            # scrypt check
            control = table.asm.control
            control.store.max_failures = 10 ** 9
            control.peer_limit = control.account_limit = RateLimit(10 ** 9, 60.0)
            table.wait_for_shoe()
            sent: list[float | None] = [None] * (2 * cards)
            _, _, quiet_lag = phase(table, rig, 0, cards, rate, sent)
            flood = Flood(sock, kinds, clients, recall_rounds)
            f0, f1, flood_lag = phase(table, rig, cards, 2 * cards, rate, sent)
            served = flood.stop(f0, f1)
            flood = None
            table.stop()
            res = latency.table_result(stamps, order, sent, 0.0)
        finally:
            if flood is not None:
                flood.kill()
            if table is not None and table.thread is not None and table.thread.is_alive():
                table.stop()
            rig.close()
        published = [t for t, _ in stamps.published]
        quiet = figures(res, 0, cards, quiet_lag, published)
        flooded = figures(res, cards, 2 * cards, flood_lag, published)
        seconds = f1 - f0
        out: dict[str, Any] = {
            "rate": rate, "cards_per_phase": cards, "decided": res.decided,
            "pace_quiet": quiet["pace"], "pace_flood": flooded["pace"],
            "pace_held": bool(flooded["pace"] and flooded["pace"] >= PACE_SLACK * rate),
            "requests_served": sum(k["answered"] for k in served.values()),
            "requests_per_s": round(sum(k["answered"] for k in served.values()) / seconds, 1),
            "requests": served, "flood_seconds": round(seconds, 2),
            "rounds_in_journal": rounds, "records_in_journal": records,
            "prefill_s": round(prefill_s, 1), "recall_rounds": recall_rounds, "kdf": kdf,
            "clients_per_kind": clients, "switch_interval_s": sys.getswitchinterval(),
            "quiet": quiet, "flood": flooded}
        for name in ("added_p50_ms", "added_p99_ms", "added_max_ms", "journal_p99_ms",
                     "queue_p99_ms"):
            out[f"{name}_quiet"] = quiet[name]
            out[f"{name}_flood"] = flooded[name]
        return out
    finally:
        shutil.rmtree(where, ignore_errors=True)


def report(r: dict, say: Any) -> None:
    say(f"journal: {r['rounds_in_journal']} rounds ({r['records_in_journal']} records), "
        f"filled in {r['prefill_s']} s; a pty Bee-Tek shoe at {r['rate']:g} cards/s, "
        f"{r['cards_per_phase']} cards a phase")
    say(f"flood: {r['clients_per_kind']} connection(s) a kind from another process; recall of "
        f"{r['recall_rounds']} rounds; failed sign-ins with {r['kdf']} scrypt, never locked "
        f"out; GIL switch interval {r['switch_interval_s'] * 1000:g} ms")
    say("")
    say(f"{'phase':6} {'cards/s':>8} {'gap max':>8} {'added p50':>10} {'p99':>8} {'max':>8} "
        f"{'queue p99':>10} {'journal p99':>12} {'writer lag':>11}")
    for name in ("quiet", "flood"):
        p = r[name]
        say(f"{name:6} {p['pace']:8.3f} {p['longest_gap_ms']:6.0f}ms {p['added_p50_ms']:8.2f}ms "
            f"{p['added_p99_ms']:6.2f}ms {p['added_max_ms']:6.2f}ms {p['queue_p99_ms']:8.2f}ms "
            f"{p['journal_p99_ms']:10.2f}ms {p['writer_lag_max_ms']:9.2f}ms")
    say("")
    say(f"requests served during the flood phase ({r['flood_seconds']} s): "
        f"{r['requests_served']} ({r['requests_per_s']}/s)")
    say(f"  {'kind':7} {'answered':>8} {'ok':>6} {'p50 ms':>8} {'max ms':>8}  errors")
    for kind, k in r["requests"].items():
        errors = ", ".join(f"{code} {n}" for code, n in k["errors"].items()) or "-"
        p50 = "-" if k["p50_ms"] is None else f"{k['p50_ms']:.1f}"
        top = "-" if k["max_ms"] is None else f"{k['max_ms']:.1f}"
        say(f"  {kind:7} {k['answered']:8} {k['ok']:6} {p50:>8} {top:>8}  {errors}")
    say("")
    held = "holds" if r["pace_held"] else "DOES NOT HOLD"
    say(f"pace under the flood: {r['pace_flood']:.3f} cards/s against {r['rate']:g} asked: "
        f"{held} (at least {PACE_SLACK:.0%} of it); added latency p99 "
        f"{r['added_p99_ms_quiet']:.2f} ms quiet, {r['added_p99_ms_flood']:.2f} ms flooded "
        f"({r['added_p99_ms_flood'] / max(r['added_p99_ms_quiet'], 1e-9):.1f}x), p50 "
        f"{r['added_p50_ms_quiet']:.2f} ms quiet, {r['added_p50_ms_flood']:.2f} ms flooded")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cards", type=int, default=60, help="cards a phase (quiet, then flood)")
    ap.add_argument("--rate", type=float, default=3.0, help="cards per second from the shoe")
    ap.add_argument("--prefill-shoes", type=int, default=40,
                    help="macau shoes simulated into the journal first (about 80 rounds each)")
    ap.add_argument("--prefill-cache", metavar="FILE",
                    help="reuse this prefilled journal (copied; made and kept when missing)")
    ap.add_argument("--recall-rounds", type=int, default=100, help="rounds a recall asks for")
    ap.add_argument("--clients", type=int, default=1, help="connections per kind of request")
    ap.add_argument("--kinds", default=",".join(KINDS),
                    help=f"the kinds of request that flood (of {', '.join(KINDS)})")
    ap.add_argument("--kdf", choices=("production", "fast"), default="production",
                    help="scrypt cost of the accounts (fast: cheap failed sign-ins, many more)")
    ap.add_argument("--switch-interval", type=float, metavar="S",
                    help="sys.setswitchinterval for the controller's process (default: "
                    "Python's 0.005)")
    ap.add_argument("--json", action="store_true",
                    help="the table to stderr, one JSON line to stdout")
    ap.add_argument("--worker", metavar="SOCKET", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]
    if args.worker:
        return worker(args.worker, kinds, args.clients, args.recall_rounds)
    if args.cards < 2 or args.rate <= 0 or args.clients < 1 or args.recall_rounds < 1 \
            or args.prefill_shoes < 1 or not kinds or set(kinds) - set(KINDS):
        print("flood: --cards >= 2, --rate > 0, --clients, --recall-rounds and --prefill-shoes "
              f">= 1, --kinds among {', '.join(KINDS)}", file=sys.stderr)
        return 2
    if args.switch_interval is not None:
        sys.setswitchinterval(args.switch_interval)
    out = sys.stderr if args.json else sys.stdout
    result = run(args.cards, args.rate, args.prefill_shoes, args.prefill_cache,
                 args.recall_rounds, args.clients, args.kdf, kinds)
    report(result, lambda text="": print(text, file=out, flush=True))
    if args.json:
        print(json.dumps(result), flush=True)
    return 0


def quiet_logs() -> None:
    """`tablectl run`'s logging (level WARNING, JSON lines), written to /dev/null: every failed
    sign-in logs two warnings, which cost what they cost but would bury the table."""
    import logging
    configure("WARNING", json_logs=True)
    sink = open(os.devnull, "w")
    for handler in logging.getLogger().handlers:
        if isinstance(handler, logging.StreamHandler):
            handler.setStream(sink)


if __name__ == "__main__":
    quiet_logs()
    sys.exit(main())
