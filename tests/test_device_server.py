"""The separate-process rig: `python -m simulators.server` and `tablectl devices` as real
subprocesses, reached through their printed pty paths and socket:// URLs."""
from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from drivers.shuffler import open_shuffler
from drivers.shuffler import protocol as p
from drivers.transport import open_serial

ROOT = Path(__file__).resolve().parents[1]
TINY = ["AS", "KD", "7H", "CUT", "2C", "9S"]


@pytest.fixture
def shoe_file(tmp_path):
    path = tmp_path / "tiny.shoe"
    path.write_text("# a five-card shoe\n" + "\n".join(TINY) + "\n")
    return str(path)


class Rig:
    """A device server subprocess; `urls` maps device name to URL, as printed."""

    def __init__(self, args: list[str], stdin=subprocess.DEVNULL):
        self.proc = subprocess.Popen([sys.executable, *args], cwd=ROOT, stdin=stdin,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.urls: dict[str, str] = {}
        self.lines: list[str] = []
        while len(self.urls) < 2:
            line = self.proc.stdout.readline()
            if not line:
                raise AssertionError(f"server ended early: {self.proc.stderr.read()}")
            self.lines.append(line.rstrip("\n"))
            name, _, rest = line.partition(": ")
            self.urls[name] = rest.split()[0]

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
        try:
            return self.proc.wait(60)       # a hang guard: a busy machine stops slowly
        finally:
            self.proc.stdout.close()
            self.proc.stderr.close()


@pytest.fixture
def rigs():
    started: list[Rig] = []

    def start(*args: str, **kw) -> Rig:
        rig = Rig(list(args), **kw)
        started.append(rig)
        return rig

    yield start
    for rig in started:
        if rig.proc.poll() is None:
            rig.proc.kill()
            rig.proc.wait(5)


def read_until(port, pattern: bytes, timeout_s: float = 5.0) -> bytes:
    data = b""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and not re.search(pattern, data):
        data += port.read(256)
    return data


def test_server_on_ptys_prints_its_urls_and_deals_bee_tek_bytes(rigs, shoe_file):
    rig = rigs("-m", "simulators.server", "--shoe-file", shoe_file, "--pace-ms", "5",
               "--shuffle-s", "0")
    assert rig.lines[0] == f"shoe: {rig.urls['shoe']} (beetek)"
    assert rig.lines[1] == f"shuffler: {rig.urls['shuffler']}"
    assert all(url.startswith("/dev/pts/") for url in rig.urls.values())
    port = open_serial(rig.urls["shoe"], timeout=0.1)
    data = read_until(port, rb"9S>")
    port.close()
    tokens = re.findall(rb"<Card:(\w+)>|<(Cut)>", data)
    assert [card or b"CUT" for card, _ in tokens] == [c.encode() for c in TINY]
    shuffler = open_serial(rig.urls["shuffler"], baudrate=115200, timeout=0.1)
    shuffler.write(p.encode_frame(1, p.IDENTIFY))
    frame = p.decode_frame(read_until(shuffler, rb"sim-1\.0\.0..$"))
    assert (frame.seq, frame.cmd) == (1, p.IDENTIFY | p.RESPONSE_BIT)
    shuffler.close()
    assert rig.stop() == 0


def test_devices_command_over_tcp_reads_cards_then_a_delivered_shoe(rigs, shoe_file, capsys):
    shoe_mod = pytest.importorskip("drivers.shoe")
    from drivers.events import CardRead, CutCardSeen
    rig = rigs("-m", "controller.cli", "devices", "--shoe-file", shoe_file, "--tcp", "--blind",
               "--pace-ms", "5", "--shuffle-seconds", "0", "--shoe-protocol", "framed")
    assert rig.urls["shoe"].startswith("socket://127.0.0.1:")
    assert rig.lines[0].endswith("(framed)")
    shoe = shoe_mod.open_shoe(rig.urls["shoe"], "framed")

    def read_cards(n: int) -> list[str]:
        got: list[str] = []
        deadline = time.monotonic() + 10
        while len(got) < n and time.monotonic() < deadline:
            event = shoe.read_event(0.1)
            if isinstance(event, CardRead):
                got.append(event.code)
                shoe.ack(event.seq)
            elif isinstance(event, CutCardSeen):
                got.append("CUT")
        return got

    assert read_cards(6) == TINY
    shuffler = open_shuffler(rig.urls["shuffler"], poll_interval_s=0.01)
    shuffler.shuffle(8)                        # macau: 8 decks
    assert shuffler.wait_ready(5).count == 416
    order = shuffler.deliver()
    assert read_cards(5) == order[:5]          # the delivered order is the next shoe
    shuffler.close()
    shoe.close()
    # a shuffle test asking for one deck of a shuffler that holds eight: what to give instead
    from controller.cli import main
    capsys.readouterr()
    assert main(["shuffle-test", "--shuffler-url", rig.urls["shuffler"], "--decks", "1",
                 "--runs", "30"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.endswith("counted 416 cards, not the 52 of --decks 1: it holds 8 decks; give "
                        "--decks 8"), err
    assert rig.stop() == 0


def test_a_whole_seeded_shoe_comes_out_of_the_pty(rigs):
    shoe_mod = pytest.importorskip("drivers.shoe")
    from drivers.events import CardRead, CutCardSeen
    rig = rigs("-m", "controller.cli", "devices", "--seed", "5", "--blind", "--pace-ms", "1")
    shoe = shoe_mod.open_shoe(rig.urls["shoe"], "beetek")
    cards, cut_at = [], None
    deadline = time.monotonic() + 20
    while len(cards) < 416 and time.monotonic() < deadline:
        event = shoe.read_event(0.1)
        if isinstance(event, CardRead):
            cards.append(event.code)
        elif isinstance(event, CutCardSeen):
            cut_at = len(cards)
    shoe.close()
    assert len(cards) == 416 and set(Counter(cards).values()) == {8}
    assert cut_at == 416 - 14                   # macau's default cut card, 14 from the end
    assert rig.stop() == 0


def test_pace_zero_pulls_one_card_per_enter(rigs, shoe_file):
    rig = rigs("-m", "controller.cli", "devices", "--shoe-file", shoe_file, "--blind",
               "--pace-ms", "0", stdin=subprocess.PIPE)
    port = open_serial(rig.urls["shoe"], timeout=0.1)
    time.sleep(0.5)                             # past the server's settle time
    assert port.read(100) == b""                # nobody pressed Enter: nothing dealt
    rig.proc.stdin.write("\n")
    rig.proc.stdin.flush()
    assert re.findall(rb"<Card:(\w+)>", read_until(port, rb"AS>")) == [b"AS"]
    assert port.read(100) == b""                # exactly one card per press
    port.close()
    rig.proc.stdin.close()
    assert rig.stop() == 0


@pytest.mark.parametrize("args,message", [
    (["--fault", "bogus@1"], "'bogus@1' is not a fault"),
    (["--fault", "skip_burn@3"], "skip_burn is a dealer's fault"),
    (["--fault", "jam@x"], "the shuffle number after @ must be an integer"),
    (["--pace-ms", "-1"], "--pace-ms -1: give 0 or more milliseconds"),
    (["--dealer-display", "ftp://x:1"], "give the table's web display as http://HOST:PORT"),
    (["--blind", "--dealer-display", "http://127.0.0.1:8080"], "not allowed with argument"),
    (["--shuffle-seconds", "nan"], "--shuffle-seconds nan: give a number of seconds"),
    (["--shoe-file", "/nonexistent.shoe"], "no such shoe file"),
    # its dealer would never give a round's cards back to the machine: the shoe ran dry
    (["--profile", "macau-csm", "--dealer-display", "http://127.0.0.1:8080"],
     "this rig has no continuous shuffler"),
])
def test_devices_bad_input_is_one_line_and_exit_2(args, message, tablectl_here):
    if args[0] == "--fault" and args[1] == "bogus@1":       # one as a process of its own
        proc = subprocess.run([sys.executable, "-m", "controller.cli", "devices", *args],
                              cwd=ROOT, capture_output=True, text=True, timeout=20,
                              stdin=subprocess.DEVNULL)
    else:                                                   # the others in this process
        proc = tablectl_here("devices", *args, cwd=ROOT)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and message in proc.stderr
    assert proc.stdout == ""


def test_sigterm_stops_the_devices_command_cleanly(rigs, shoe_file):
    rig = rigs("-m", "controller.cli", "devices", "--shoe-file", shoe_file, "--tcp")
    rig.proc.send_signal(signal.SIGTERM)
    assert rig.proc.wait(10) == 0
    assert "Traceback" not in rig.proc.stderr.read()
    rig.stop()
