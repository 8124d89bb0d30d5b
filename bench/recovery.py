"""Restart time and the journal's proof: latest snapshot + the records after it against a full
replay from seq 1, and the chain checked in full against the part a start checks first.

Writes a day's journal through the real append path (Journal.append_event / append; card and
override events durable): 10,000 Punto Banco rounds dealt by the rules from shuffled 8-deck
shoes, each card as a raw device event and a card event, the shuffler's status polled once a
second (about 48 polls a round), snapshots every 100 rounds, the last one 99 rounds before the
end (the longest tail a restart can meet) — about 600,000 records. Then it
times, on a fresh connection each:
  snapshot: open + latest_snapshot() (checked) + read and apply the records after it
  replay:   open + read and apply every record from the start
and prints both side by side, with the write rate. Then, on the production code path
(controller/journal/proof.py), side by side in the same run:
  full check:   Journal.verify() of the whole chain and every snapshot (what verify-journal,
                recall and the rest of a start check do), as records a second;
  start check:  check_at_start() as `tablectl run` does it: what a restart builds on (the
                latest snapshot and the records after it) before the table starts, the rest
                left for before the first card;
and what the full check's rate means for a journal of --project rounds (the 500,000 rounds of a
table's long life: at this journal's records a round).

    python bench/recovery.py [--rounds 10000] [--snapshot-every 100] [--journal PATH] [--keep]
                             [--project 500000] [--json]
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time

from controller.shoe.cards import ordered_shoe
from controller.games.punto_banco import RULES
from controller.journal import Journal, Record
from controller.journal.proof import BUDGET, check_at_start, check_rest
from controller.settings.profile import load_profile


class TableState:
    """A replay reducer standing in for the table's state: shoe, round, cards seen, the road."""

    def __init__(self, state: dict | None = None):
        s = state or {}
        self.shoe = s.get("shoe", 0)
        self.round = s.get("round", 0)
        self.seen: list[str] = list(s.get("seen", []))
        self.road: list[str] = list(s.get("road", []))
        self.rounds_total = s.get("rounds_total", 0)
        self.last_seq = s.get("last_seq", 0)
        self.device_events = s.get("device_events", 0)

    def apply(self, rec: Record) -> None:
        d, kind = rec.data, rec.kind
        if kind == "device":
            self.device_events += 1
        elif kind == "shoe_started":
            self.shoe, self.round, self.seen, self.road = d["shoe"], 0, [], []
        elif kind == "card":
            self.seen.append(d["code"])
        elif kind == "round_started":
            self.round = d["round"]
        elif kind == "round_result":
            self.road.append(d["winner"][0].upper())
            self.rounds_total += 1
        self.last_seq = rec.seq

    def as_dict(self) -> dict:
        return {"shoe": self.shoe, "round": self.round, "seen": self.seen, "road": self.road,
                "rounds_total": self.rounds_total, "last_seq": self.last_seq,
                "device_events": self.device_events}


def write_day(journal: Journal, rounds: int, snapshot_every: int, polls: int, seed: int) -> None:
    """Deal `rounds` rounds into the journal, shoe after shoe, as the table would record them."""
    profile = load_profile("macau")
    paytable = profile.paytable
    rng = random.Random(seed)
    state = TableState()
    done, shoe_no, n_poll = 0, 0, 0

    def device(kind: str, **fields) -> None:
        data = {"type": kind, "t": round(time.monotonic(), 6), **fields}
        state.apply(Record(journal.append("device", data), "", 0.0, "device", data, ""))

    def event(ev: dict) -> None:
        seq = journal.append_event(ev)
        state.apply(Record(seq, "", 0.0, ev["event"], ev, ""))

    while done < rounds:
        shoe_no += 1
        shoe = ordered_shoe(profile.decks)
        rng.shuffle(shoe)
        cut = len(shoe) - 14
        device("ShuffleDone", device="shuffler", count=len(shoe), raw="02534403")
        event({"event": "shoe_started", "shoe": shoe_no, "decks": profile.decks,
               "cards": len(shoe), "cut_card_position": cut, "profile": profile.name,
               "profile_sha256": profile.sha256, "game": profile.game})
        pos = 0
        burn = [shoe[0]] + shoe[1:1 + shoe[0].burn_value]
        for c in burn:
            pos += 1
            device("CardRead", device="shoe", code=c.code, seq=pos, raw=c.code.encode().hex())
            event({"event": "card", "shoe": shoe_no, "round": 0, "n": pos, "code": c.code,
                   "slot": "burn", "flags": []})
        event({"event": "burn", "shoe": shoe_no, "cards": [c.code for c in burn]})
        rnd = 0
        while pos < cut and done < rounds:
            rnd += 1
            event({"event": "round_started", "shoe": shoe_no, "round": rnd, "demo": False})
            hands = RULES.new_hands()
            while (phase := RULES.next_phase(hands)) is not None:
                c = shoe[pos]
                pos += 1
                device("CardRead", device="shoe", code=c.code, seq=pos,
                       raw=c.code.encode().hex())
                event({"event": "card", "shoe": shoe_no, "round": rnd, "n": pos,
                       "code": c.code, "slot": phase, "flags": []})
                RULES.place(hands, phase, c)
            for _ in range(polls):       # the shuffler's status, polled once a second
                n_poll += 1
                device("ShufflerStatus", device="shuffler", state="shuffling", error_code=0,
                       raw=f"0253{n_poll & 0xFFFF:04x}03")
            bets = {k: float(v) for k, v in RULES.settle(hands, paytable).items()}
            event({"event": "round_result", "shoe": shoe_no, "round": rnd,
                   "game": profile.game, **RULES.outcome(hands), "bets": bets})
            done += 1
            # Snapshots after rounds 1, 101, 201, …: the day ends 99 rounds after the last one,
            # the worst case for a restart (the longest tail to read).
            if (done - 1) % snapshot_every == 0:
                journal.snapshot(state.as_dict(), journal.last_seq)
            if done % 1000 == 0:
                print(f"  ... {done} rounds, {journal.last_seq} records", file=sys.stderr)
        event({"event": "shoe_ended", "shoe": shoe_no, "rounds": rnd,
               "reason": "cut_card" if pos >= cut else "supervisor"})


def restart_from_snapshot(path: str) -> tuple[float, int, dict]:
    t0 = time.perf_counter()
    with Journal(path) as j:
        snap = j.latest_snapshot()
        upto, saved = snap if snap else (0, None)
        state = TableState(saved)
        n = 0
        for rec in j.records(after_seq=upto):
            state.apply(rec)
            n += 1
    return time.perf_counter() - t0, n, state.as_dict()


def restart_by_replay(path: str) -> tuple[float, int, dict]:
    t0 = time.perf_counter()
    with Journal(path) as j:
        state = TableState()
        n = 0
        for rec in j.records():
            state.apply(rec)
            n += 1
    return time.perf_counter() - t0, n, state.as_dict()


def measure_proof(path: str) -> dict:
    """The full check against a start's, on fresh connections, side by side."""
    t0 = time.perf_counter()
    with Journal.open_readonly(path) as j:
        result = j.verify()
    full_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    with Journal(path) as j:
        check = check_at_start(j, None, budget=0)       # the part checked before it starts
        start_s = time.perf_counter() - t0
        start_records = j.last_seq - check.checked_after
        t1 = time.perf_counter()
        check_rest(j, check, None)                      # the rest, before the first card
        rest_s = time.perf_counter() - t1
    return {"full_s": full_s, "full_rate": result.records_checked / full_s,
            "start_s": start_s, "start_records": start_records, "rest_s": rest_s,
            "ok": result.ok, "result": str(result)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10_000)
    ap.add_argument("--snapshot-every", type=int, default=100, help="rounds between snapshots")
    ap.add_argument("--polls", type=int, default=48, help="shuffler status polls per round")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--journal", help="journal file to write (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the journal afterwards")
    ap.add_argument("--project", type=int, default=500_000,
                    help="rounds of the journal whose full check time is projected")
    ap.add_argument("--json", action="store_true", help="also one JSON line on stdout")
    args = ap.parse_args(argv)
    tmp = None
    if args.journal:
        path = args.journal
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(path + suffix):
                os.remove(path + suffix)
    else:
        tmp = tempfile.mkdtemp(prefix="journal-bench-")
        path = os.path.join(tmp, "journal.db")
    try:
        t0 = time.perf_counter()
        with Journal(path) as j:
            write_day(j, args.rounds, args.snapshot_every, args.polls, args.seed)
            records = j.last_seq
        write_s = time.perf_counter() - t0
        size_mb = os.path.getsize(path) / 1e6
        print(f"journal {path}: {args.rounds} rounds, {records} records, {size_mb:.0f} MB, "
              f"written in {write_s:.1f} s ({write_s / records * 1e6:.0f} µs/record)",
              file=sys.stderr)
        snap_s, snap_n, snap_state = restart_from_snapshot(path)
        full_s, full_n, full_state = restart_by_replay(path)
        if snap_state != full_state:
            print("MISMATCH: snapshot restart and full replay disagree", file=sys.stderr)
            return 1
        proof = measure_proof(path)
        print(f"{'':28}{'snapshot + tail':>18}{'full replay':>16}", file=sys.stderr)
        print(f"{'restart time (s)':28}{snap_s:>18.3f}{full_s:>16.3f}", file=sys.stderr)
        print(f"{'records read after open':28}{snap_n:>18}{full_n:>16}", file=sys.stderr)
        print(f"{'same table state':28}{'yes':>18}{'yes':>16}", file=sys.stderr)
        print(f"aim under 1 s with snapshots: {'met' if snap_s < 1.0 else 'NOT met'}",
              file=sys.stderr)
        per_round = records / args.rounds
        projected = args.project * per_round / proof["full_rate"]
        print(f"{'':28}{'start check':>18}{'full check':>16}", file=sys.stderr)
        print(f"{'seconds':28}{proof['start_s']:>18.3f}{proof['full_s']:>16.2f}",
              file=sys.stderr)
        print(f"{'records checked':28}{proof['start_records']:>18}{records:>16}",
              file=sys.stderr)
        print(f"full check: {proof['full_rate']:,.0f} records/s; a {args.project:,}-round "
              f"journal (~{args.project * per_round / 1e6:.0f} M records) would take "
              f"{projected:,.0f} s in full, so a start checks what it builds on first "
              f"({proof['start_s'] * 1000:.0f} ms here) and the rest before the first card "
              f"(at once up to {BUDGET:,} records); {proof['result']}", file=sys.stderr)
        if args.json:
            print(json.dumps({"rounds": args.rounds, "records": records,
                              "write_us_per_record": round(write_s / records * 1e6, 1),
                              "restart_snapshot_s": round(snap_s, 4),
                              "restart_replay_s": round(full_s, 3),
                              "full_check_s": round(proof["full_s"], 3),
                              "full_check_records_per_s": round(proof["full_rate"]),
                              "start_check_s": round(proof["start_s"], 4),
                              "start_check_records": proof["start_records"],
                              "rest_check_s": round(proof["rest_s"], 3),
                              "projected_rounds": args.project,
                              "projected_full_check_s": round(projected, 1),
                              "ok": proof["ok"]}))
        if args.keep:
            print(f"kept {path}", file=sys.stderr)
        return 0 if proof["ok"] else 1
    finally:
        if tmp and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
