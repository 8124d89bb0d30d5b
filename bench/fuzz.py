"""Fuzz the shoe decoders and the command line for a time budget, and count what went wrong.

    python bench/fuzz.py [--seconds 60] [--seed 1] [--only decoders|inputs] [--json]

Decoders (drivers/shoe: beetek, barcode, framed), each in three ways:
- `random`: random bytes in random chunks;
- `mutated`: a clean stream of 1-6 cards with 1-4 bytes flipped, inserted or deleted, cut in two;
- `bitflip`: one card's bytes with a single bit flipped.
Counted: cases and cases/s; `exceptions` (anything but a ProtocolError out of the decoder: must
be 0); `impossible` (a card whose code is not a card: must be 0); `phantom` (a real card code
that was never sent: a damaged line read as another card); `bitflip_other_card` (the share of
single-bit flips read as another card: what a protocol without a checksum lets through);
`buffer_over` (a decoder holding more than its protocol's longest frame after draining: must be
0) and the most it held.

Inputs: bad configs, profiles, flags, environment variables (the same settings and ranges as
the file's, unknown TABLECTL_ names, a TABLECTL_CONFIG that names nothing), table names that
are not an MQTT topic level, device and feed URLs that cannot name anything, and paths that are
not files (a directory, a FIFO) where a journal or a user store belongs, made at random, each
run through `tablectl` in this process (the table never starts: reaching it counts as
`accepted`). Counted: cases, cases/s,
exit codes, `accepted`, `multi_line` (more than one line on stderr), `tracebacks` (an exception
out of the command), `hangs` (no answer within 10 s). All but the exit-2 count must be 0.

Prints a table on stderr and, with --json, one JSON line on stdout. Exit 1 when a must-be-0
count is not.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from drivers.cardcodes import CARD_CODES  # noqa: E402
from drivers.errors import ProtocolError  # noqa: E402
from drivers.events import CardRead  # noqa: E402
from drivers.shoe import PROTOCOLS  # noqa: E402
from drivers.shoe.barcode import MAX_LINE, BarcodeDecoder  # noqa: E402
from drivers.shoe.beetek import MAX_TOKEN, BeetekDecoder  # noqa: E402
from drivers.shoe.framed import MAX_PAYLOAD, FramedDecoder  # noqa: E402

DECODERS = {"beetek": BeetekDecoder, "barcode": BarcodeDecoder, "framed": FramedDecoder}
ENCODERS = {name: PROTOCOLS[name].encoder for name in PROTOCOLS}
#: the most a decoder may hold once drained: a token, a line, a frame not yet complete
BOUND = {"beetek": MAX_TOKEN + 1, "barcode": MAX_LINE, "framed": 6 + MAX_PAYLOAD}
CODES = list(CARD_CODES)
MUST_BE_ZERO = ("exceptions", "impossible", "buffer_over")


# --------------------------------------------------------------------------- decoders

class Tally:
    def __init__(self) -> None:
        self.cases = 0
        self.exceptions = 0
        self.first_exception = ""
        self.impossible = 0
        self.phantom = 0
        self.cards = 0
        self.buffer_over = 0
        self.buffer_max = 0
        self.flips = 0
        self.flips_other = 0
        self.flips_same = 0
        self.seconds = 0.0

    def as_dict(self) -> dict[str, Any]:
        rate = self.cases / self.seconds if self.seconds else 0.0
        out = {"cases": self.cases, "cases_per_s": round(rate), "exceptions": self.exceptions,
               "impossible": self.impossible, "phantom": self.phantom, "cards": self.cards,
               "buffer_over": self.buffer_over, "buffer_max": self.buffer_max}
        if self.flips:
            out.update(bitflips=self.flips,
                       bitflip_other_card=round(self.flips_other / self.flips, 5),
                       bitflip_same_card=round(self.flips_same / self.flips, 5))
        if self.first_exception:
            out["first_exception"] = self.first_exception
        return out


def decode(protocol: str, pieces: list[bytes], tally: Tally) -> list[str]:
    """Feed the pieces, drain after each; the card codes read. Only ProtocolError may come out
    of the decoder; anything else is counted."""
    decoder = DECODERS[protocol]()
    codes: list[str] = []

    def drain() -> None:
        while True:
            try:
                event = decoder.next()
            except ProtocolError:
                continue
            if event is None:
                return
            if isinstance(event, CardRead):
                codes.append(event.code)
                if event.code not in CARD_CODES:
                    tally.impossible += 1

    try:
        for piece in pieces:
            decoder.feed(piece)
            drain()
            held = decoder.pending
            tally.buffer_max = max(tally.buffer_max, held)
            if held > BOUND[protocol]:
                tally.buffer_over += 1
        while isinstance(decoder, FramedDecoder) and decoder.pending:
            try:
                decoder.expire()        # the framed driver's move when the line goes quiet
            except ProtocolError:
                pass
            drain()
    except Exception as err:            # the finding this bench exists for
        tally.exceptions += 1
        tally.first_exception = tally.first_exception or f"{protocol}: {err!r}"
    tally.cards += len(codes)
    return codes


def stream(protocol: str, cards: list[str]) -> bytes:
    enc = ENCODERS[protocol]()
    return b"".join(enc.card(c, seq=i + 1) for i, c in enumerate(cards))


def case_random(rng: random.Random, protocol: str, tally: Tally) -> None:
    pieces = [rng.randbytes(rng.randint(0, 40)) for _ in range(rng.randint(1, 12))]
    decode(protocol, pieces, tally)


def case_mutated(rng: random.Random, protocol: str, tally: Tally) -> None:
    cards = [rng.choice(CODES) for _ in range(rng.randint(1, 6))]
    raw = bytearray(stream(protocol, cards))
    for _ in range(rng.randint(1, 4)):
        op, i = rng.randrange(3), rng.randrange(max(1, len(raw)))
        if op == 0 and raw:
            raw[i] ^= rng.randint(1, 255)
        elif op == 1:
            raw[i:i] = rng.randbytes(rng.randint(1, 4))
        elif raw:
            del raw[i]
    cut = rng.randint(0, len(raw))
    read = decode(protocol, [bytes(raw[:cut]), bytes(raw[cut:])], tally)
    tally.phantom += sum(1 for code in read if code not in cards)


def case_bitflip(rng: random.Random, protocol: str, tally: Tally) -> None:
    card = rng.choice(CODES)
    raw = bytearray(stream(protocol, [card]))
    bit = rng.randrange(len(raw) * 8)
    raw[bit // 8] ^= 1 << (bit % 8)
    read = decode(protocol, [bytes(raw)], tally)
    tally.flips += 1
    other = [code for code in read if code != card]
    tally.phantom += len(other)
    tally.flips_other += bool(other)
    tally.flips_same += read == [card]


CASES: dict[str, Callable[[random.Random, str, Tally], None]] = {
    "random": case_random, "mutated": case_mutated, "bitflip": case_bitflip}


def fuzz_decoders(seconds: float, seed: int) -> dict[str, dict[str, Any]]:
    """Every protocol × kind for an equal share of `seconds`."""
    rng = random.Random(seed)
    out: dict[str, dict[str, Any]] = {}
    share = seconds / (len(DECODERS) * len(CASES))
    for protocol in DECODERS:
        for kind, case in CASES.items():
            tally = Tally()
            start = time.perf_counter()
            deadline = start + share
            while True:
                for _ in range(50):
                    case(rng, protocol, tally)
                    tally.cases += 1
                if time.perf_counter() >= deadline:
                    break
            tally.seconds = time.perf_counter() - start
            out[f"{protocol}/{kind}"] = tally.as_dict()
    return out


# --------------------------------------------------------------------------- bad input

MACAU = (ROOT / "config" / "profiles" / "macau.toml").read_text()
#: config keys and values each of which must be refused
BAD_CONFIG: list[tuple[str, str, list[str]]] = [
    ("table", "betting_seconds", ["nan", "inf", "-1.0", "-0.5", "3601", '"x"']),
    ("table", "shoes", ["-1", "-99", "1.5", '"all"']),
    ("table", "demo_rounds", ["-1", "4", "true"]),
    ("shoe", "read_timeout_s", ["0", "0.0", "-1", "nan", "inf", "61"]),
    ("shoe", "dead_after_timeouts", ["-1", "-1000", '"never"']),
    ("shoe", "reconnect_initial_s", ["-0.5", "0", "nan"]),
    ("shoe", "reconnect_max_s", ["-1", "inf"]),
    ("shoe", "min_pull_interval_s", ["-1", "nan", "11"]),
    ("shoe", "baudrate", ["0", "-9600", '"fast"']),
    ("shoe", "protocol", ['"serial"', '""', "1"]),
    ("shuffler", "response_timeout_s", ["0", "-1", "nan", "inf"]),
    ("shuffler", "poll_interval_s", ["-0.1", "nan"]),
    ("shuffler", "retries", ["-1", "101"]),
    ("shuffler", "shuffle_timeout_s", ["0", "-5", "inf"]),
    ("storage", "snapshot_every", ["0", "-1", '"often"']),
    ("console", "reply_timeout_s", ["0", "-1", "nan"]),
    ("simulator", "pace_s", ["-1", "nan", "inf"]),
    ("simulator", "seed", ["-2", '"x"']),
    ("simulator", "faults", ['["bogus@1"]', '["misread@99999"]', '["misread"]', "3"]),
]
BAD_FLAGS: list[list[str]] = [
    ["--betting-seconds", "nan"], ["--betting-seconds", "inf"], ["--betting-seconds", "-1"],
    ["--shoes", "-1"], ["--shoes", "0"], ["--demo-rounds", "-1"], ["--demo-rounds", "9"],
    ["--fault", "misread@99999"], ["--fault", "bogus@1"], ["--fault", "crash@0"],
    ["--fault", "misread@-3"], ["--shoe-protocol", "serial"],
]


def _bad_profile(rng: random.Random) -> str:
    bet = rng.choice(["player", "banker", "tie", "player_pair", "banker_pair"])
    line = next(x for x in MACAU.splitlines() if x.startswith(f"{bet} = "))
    pays = line.split("= ")[1]
    kind = rng.randrange(7)
    if kind == 0:
        return MACAU.replace(line, f"{bet} = {rng.choice(['1e308', '1000', '50', '99.5'])}")
    if kind == 1:
        return MACAU.replace(line, f"{bet} = {rng.choice(['0', '-1', 'nan', 'inf', '[1]'])}")
    if kind == 2:
        return MACAU.replace(line, f"{bet} = {{pays = {pays}, {rng.choice(['bogus', 'x'])} = 2}}")
    if kind == 3:
        start, end = MACAU.index("[paytable]"), MACAU.index("# The RTP")
        return MACAU[:start] + "[paytables]\n\n" + MACAU[end:]
    if kind == 4:
        return MACAU.replace("decks = 8", f"decks = {rng.choice([0, 5, 13, -8])}")
    if kind == 5:
        return MACAU.replace("[paytable]\n", "[paytable]\nsuper_bet = 2\n")
    return MACAU.replace('rule = "first_card"', 'rule = "all"')


BAD_NAMES = ["T1/#", "T+1", "T1\nx", "T9/evil", "../../x", "", "a" * 33, "T 1", "tables/+",
             "Ｔ１", "T1\t"]
BAD_URLS = [("--shuffler-url", "usb://zzzz:1"), ("--shuffler-url", "usb://7a5c"),
            ("--shuffler-url", "usb://12345:1"), ("--shuffler-url", "usb://7a5c:5348?x=1"),
            ("--feed", "mqtt://127.0.0.1:0"), ("--feed", "mqtt://127.0.0.1:99999"),
            ("--feed", "http://h:1883"), ("--shoe-url", "socket://h:0"),
            ("--shoe-url", "rfc2217://h:70000")]
#: flags held to the config's ranges: (flag, a value beyond it)
BAD_CAPS = [("--betting-seconds", "1e308"), ("--betting-seconds", "3601"), ("--pace", "61"),
            ("--seed", "-2"), ("--shoes", "1000001")]


def _more_input(rng: random.Random, where: str) -> tuple[str, list[str], dict[str, str]]:
    """(what, argv, environment) of one bad input of the third sweep's kinds."""
    journal = ["--journal", os.path.join(where, "j.db"), "--no-control"]
    pick = rng.randrange(6)
    if pick == 0:           # a setting of the file, given in the environment, out of range
        section, key, values = rng.choice(BAD_CONFIG)
        value = rng.choice(values).strip('"')
        if not value or value.startswith("["):
            value = "nan"
        env = f"TABLECTL_{section.upper()}_{key.upper()}"
        return f"env {env}={value}", ["run", *journal], {env: value}
    if pick == 1:           # a name that is no TABLECTL_ variable
        from controller.settings.config import known_variables
        base = rng.choice(sorted(known_variables()))
        typo = rng.choice([base + "S", base[:-1] + "X", base + "_X"])
        return f"env {typo}", ["run", *journal], {typo: "1"}
    if pick == 2:
        name = rng.choice([n for n in BAD_NAMES if n])
        if rng.random() < 0.5:
            return f"env table name {name!r}", ["run", *journal], {"TABLECTL_TABLE_NAME": name}
        path = os.path.join(where, "named.toml")
        Path(path).write_text(f"[table]\nname = {json.dumps(name)}\n")
        return f"table name {name!r}", ["run", "--config", path, *journal], {}
    if pick == 3:
        flag, url = rng.choice(BAD_URLS)
        return f"{flag} {url}", ["run", f"{flag}={url}", *journal], {}
    if pick == 4:
        flag, value = rng.choice(BAD_CAPS)
        return f"{flag} {value}", ["run", f"{flag}={value}", *journal], {}
    kind = rng.choice(["dir", "fifo", "missing config"])
    if kind == "missing config":
        return "TABLECTL_CONFIG names nothing", ["run", *journal], {
            "TABLECTL_CONFIG": os.path.join(where, "none.toml")}
    path = os.path.join(where, f"not-a-file-{kind}")
    if not os.path.lexists(path):
        os.mkdir(path) if kind == "dir" else os.mkfifo(path)
    flag = rng.choice(["--journal", "--db"])
    if flag == "--db":
        return f"--db a {kind}", ["users", "list", "--as", "x", "--db", path], {}
    return f"--journal a {kind}", ["run", "--journal", path, "--no-control"], {}


def _one_input(rng: random.Random, where: str) -> tuple[str, list[str], dict[str, str]]:
    """(what, argv, environment) of one bad input."""
    pick = rng.randrange(5)
    if pick >= 3:
        return _more_input(rng, where)
    if pick == 1 and rng.random() < 0.3:        # a payout typed as text, a name left empty
        text = MACAU.replace("tie = 8", 'tie = "8"') if rng.random() < 0.5 else \
            MACAU.replace('name = "macau"', 'name = ""')
        path = os.path.join(where, "profile.toml")
        Path(path).write_text(text)
        return "profile (text payout or empty name)", ["simulate", "--profile", path,
                                                       "--seed", "1"], {}
    if pick == 0:
        section, key, values = rng.choice(BAD_CONFIG)
        value = rng.choice(values)
        path = os.path.join(where, "table.toml")
        Path(path).write_text(f"[{section}]\n{key} = {value}\n")
        return f"config {section}.{key} = {value}", [
            "run", "--config", path, "--journal", os.path.join(where, "j.db"), "--no-control"], {}
    if pick == 1:
        path = os.path.join(where, "profile.toml")
        Path(path).write_text(_bad_profile(rng))
        return "profile", ["simulate", "--profile", path, "--seed", "1"], {}
    flag = rng.choice(BAD_FLAGS)
    return f"flag {' '.join(flag)}", ["simulate", "--profile", "macau", "--seed", "1",
                                      *flag], {}


class _Started(Exception):
    """The command got past its checks and began to run: the bad input was accepted."""


class _Hung(Exception):
    """The command took longer than its budget on a bad input."""


def fuzz_inputs(seconds: float, seed: int) -> dict[str, Any]:
    from controller.cli import main
    from controller.commands import _simulation
    from controller.service import runtime

    def started(*a: Any, **kw: Any) -> None:
        raise _Started()

    def hung(signum: int, frame: Any) -> None:
        raise _Hung()

    saved = (runtime.TableRuntime.run, _simulation.run_simulation,
             signal.signal(signal.SIGALRM, hung))
    runtime.TableRuntime.run = started                   # type: ignore[method-assign]
    _simulation.run_simulation = started                    # type: ignore[assignment]
    rng = random.Random(seed)
    out: dict[str, Any] = {"cases": 0, "exit_codes": {}, "accepted": 0, "multi_line": 0,
                           "tracebacks": 0, "hangs": 0, "examples": [], "kinds": {}}
    start = time.perf_counter()
    try:
        with tempfile.TemporaryDirectory(prefix="fuzz-") as where:
            while time.perf_counter() - start < seconds:
                what, argv, env = _one_input(rng, where)
                err = io.StringIO()
                signal.alarm(10)
                saved_env = {k: os.environ.get(k) for k in env}
                os.environ.update(env)
                try:
                    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
                        try:
                            rc: Any = main(argv)
                        except SystemExit as done:
                            rc = done.code
                except _Started:
                    rc, bad = "accepted", "accepted"
                except _Hung:
                    rc, bad = "hung", "hangs"
                except Exception as exc:
                    rc, bad = "traceback", "tracebacks"
                    err.write(f"{exc!r}\n")
                else:
                    bad = "" if err.getvalue().count("\n") == 1 else "multi_line"
                finally:
                    signal.alarm(0)
                    for k, v in saved_env.items():
                        if v is None:
                            os.environ.pop(k, None)
                        else:
                            os.environ[k] = v
                out["cases"] += 1
                kind = what.split(" ")[0]
                out["kinds"][kind] = out["kinds"].get(kind, 0) + 1
                key = str(rc)
                out["exit_codes"][key] = out["exit_codes"].get(key, 0) + 1
                if rc != 2 and not bad:
                    bad = "accepted"
                if bad:
                    out[bad] += 1
                    if len(out["examples"]) < 5:
                        out["examples"].append(f"{what}: {bad}: {err.getvalue()[-200:]}")
    finally:
        runtime.TableRuntime.run, _simulation.run_simulation = saved[:2]  # type: ignore
        signal.signal(signal.SIGALRM, saved[2])
    elapsed = time.perf_counter() - start
    out["cases_per_s"] = round(out["cases"] / elapsed, 1) if elapsed else 0
    return out


# --------------------------------------------------------------------------- the run

def run(seconds: float = 60.0, seed: int = 1, only: str | None = None) -> dict[str, Any]:
    from controller.logsetup import configure
    configure("CRITICAL")            # the refusals' log lines are not the bench's output
    result: dict[str, Any] = {"seconds": seconds, "seed": seed}
    if only in (None, "decoders"):
        result["decoders"] = fuzz_decoders(seconds * (0.7 if only is None else 1.0), seed)
    if only in (None, "inputs"):
        result["inputs"] = fuzz_inputs(seconds * (0.3 if only is None else 1.0), seed)
    result["ok"] = failures(result) == []
    return result


def failures(result: dict[str, Any]) -> list[str]:
    bad = [f"{name}: {key} {t[key]}" for name, t in result.get("decoders", {}).items()
           for key in MUST_BE_ZERO if t[key]]
    inputs = result.get("inputs")
    if inputs:
        bad += [f"inputs: {key} {inputs[key]}" for key in
                ("accepted", "multi_line", "tracebacks", "hangs") if inputs[key]]
    return bad


def report(result: dict[str, Any]) -> str:
    lines = []
    if "decoders" in result:
        lines.append(f"{'decoder/kind':<18}{'cases':>9}{'cases/s':>9}{'exc':>5}{'imposs':>7}"
                     f"{'phantom':>8}{'other card':>11}{'buf max':>8}{'buf over':>9}")
        for name, t in result["decoders"].items():
            other = f"{t['bitflip_other_card']:.2%}" if "bitflip_other_card" in t else ""
            lines.append(f"{name:<18}{t['cases']:>9}{t['cases_per_s']:>9}{t['exceptions']:>5}"
                         f"{t['impossible']:>7}{t['phantom']:>8}{other:>11}"
                         f"{t['buffer_max']:>8}{t['buffer_over']:>9}")
    if "inputs" in result:
        i = result["inputs"]
        lines.append(f"bad inputs: {i['cases']} ({i['cases_per_s']}/s), exit codes "
                     f"{i['exit_codes']}, accepted {i['accepted']}, multi-line "
                     f"{i['multi_line']}, tracebacks {i['tracebacks']}, hangs {i['hangs']}")
        lines.append("  by kind: " + ", ".join(f"{k} {n}" for k, n in sorted(i["kinds"].items())))
        lines += [f"  {e}" for e in i["examples"]]
    bad = failures(result)
    lines.append("ok" if not bad else "FAILED: " + "; ".join(bad))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="the whole budget (default 60)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", choices=("decoders", "inputs"))
    ap.add_argument("--json", action="store_true", help="also one JSON line on stdout")
    args = ap.parse_args(argv)
    if not (math.isfinite(args.seconds) and args.seconds > 0):
        print("fuzz.py: --seconds must be a positive number", file=sys.stderr)
        return 2
    result = run(args.seconds, args.seed, args.only)
    print(report(result), file=sys.stderr)
    if args.json:
        print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
