"""The shoe and shuffler models served to a separate process, on ptys or TCP ports.

    python -m simulators.server --seed 7 --pace-ms 200
    shoe: /dev/pts/5 (beetek)
    shuffler: /dev/pts/6

pty mode (default): each model sits behind the master side of a pseudo-terminal; the controller
opens the printed /dev/pts/N path through pyserial's ordinary serialposix port. TCP mode
(`--tcp`): each model listens on 127.0.0.1 and the URLs are pyserial `socket://` URLs.

The rig's dealer (`simulators.rig_dealer`) stands between the models: a blind one pulls one
card every `pace_ms` while a controller is connected to the shoe (after `settle_s`, since
pyserial flushes its input when it opens a port), until the shoe is empty (`pace_ms=0`: one
card per Enter on stdin), and the order the shuffler delivers becomes the next shoe; one that
follows the table's dealer's display deals as the table asks (`tablectl devices`). Shoe-side
faults apply to the first shoe only. Everything runs in one thread (a select loop, the
display's stream read on a thread of its own that only hands views over), so the models need
no locks. Ctrl-C stops it.
"""
from __future__ import annotations

import argparse
import errno
import os
import select
import signal
import socket
import sys
import threading
import time
import tty
from typing import TYPE_CHECKING, Any, Callable, TextIO

from drivers.shoe import PROTOCOLS
from drivers.shuffler.protocol import CARD_CODES
from simulators.shuffler import SHUFFLER_FAULTS, ShufflerModel, parse_shuffler_fault

if TYPE_CHECKING:
    from simulators.rig_dealer import RigDealer


class PtyEndpoint:
    """A model behind a pty master; 'connected' while some process holds the slave open."""

    def __init__(self) -> None:
        self.master, slave = os.openpty()
        tty.setraw(slave)                       # no echo, no line editing: bytes pass unchanged
        self.url = os.ttyname(slave)
        os.close(slave)                         # so POLLHUP tells us when no controller is there
        os.set_blocking(self.master, False)
        self._poll = select.poll()
        self._poll.register(self.master, select.POLLIN)

    def connected(self) -> bool:
        return not any(ev & select.POLLHUP for _, ev in self._poll.poll(0))

    def fileno(self) -> int:
        return self.master

    def recv(self) -> bytes | None:
        try:
            return os.read(self.master, 4096)
        except BlockingIOError:
            return b""
        except OSError as err:
            if err.errno == errno.EIO:          # the controller closed the port
                return None
            raise

    def send(self, data: bytes) -> int:
        try:
            return os.write(self.master, data)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError as err:
            if err.errno == errno.EIO:
                return len(data)                # nobody is listening; the bytes are lost
            raise

    def close(self) -> None:
        os.close(self.master)


class TcpEndpoint:
    """A model behind a listening TCP socket; one client at a time."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.listener = socket.create_server((host, 0))
        self.listener.setblocking(False)
        self.url = f"socket://{host}:{self.listener.getsockname()[1]}"
        self.client: socket.socket | None = None

    def connected(self) -> bool:
        try:
            conn, _ = self.listener.accept()
        except BlockingIOError:
            return self.client is not None
        conn.setblocking(False)
        if self.client is None:
            self.client = conn
        else:
            conn.close()                        # the device already has its controller
        return True

    def fileno(self) -> int:
        return self.client.fileno() if self.client is not None else self.listener.fileno()

    def recv(self) -> bytes | None:
        if self.client is None:
            return None
        try:
            data = self.client.recv(4096)
        except BlockingIOError:
            return b""
        except OSError:
            data = b""
        if not data:
            self.client.close()
            self.client = None
            return None
        return data

    def send(self, data: bytes) -> int:
        if self.client is None:
            return len(data)
        try:
            return self.client.send(data)
        except BlockingIOError:
            return 0
        except OSError:
            return len(data)

    def close(self) -> None:
        if self.client is not None:
            self.client.close()
        self.listener.close()


class _Port:
    """One model on one endpoint, with the bytes still to send.

    The model's output waits `settle_s` after a controller connects: pyserial empties its input
    buffer while opening a port, and a shoe that speaks first (framed HELLO) must not be lost.
    """

    def __init__(self, name: str, model: Any, endpoint: PtyEndpoint | TcpEndpoint,
                 settle_s: float = 0.0):
        self.name, self.model, self.endpoint, self.settle_s = name, model, endpoint, settle_s
        self.pending = bytearray()
        self.up = False
        self.up_since = 0.0
        self._generation = getattr(model, "link_generation", 0)

    def settled(self, now: float) -> bool:
        return self.up and now - self.up_since >= self.settle_s

    def _hang_up_on_link_drop(self) -> None:
        generation = getattr(self.model, "link_generation", 0)
        if generation != self._generation:      # the model dropped its link (a `drop` fault)
            self._generation = generation
            if isinstance(self.endpoint, TcpEndpoint) and self.endpoint.client is not None:
                self.endpoint.client.close()
                self.endpoint.client = None

    def pump(self, now: float) -> None:
        self._hang_up_on_link_drop()
        was_up, self.up = self.up, self.endpoint.connected()
        if self.up and not was_up:
            self.up_since = now
        if not self.up:
            self.pending.clear()                # a real line loses what nobody hears
            return
        data = self.endpoint.recv()
        if data is None:
            self.up = False
            self.pending.clear()
            return
        if data:
            self.model.write(data)
        while self.settled(now) and self.model.in_waiting and len(self.pending) < 65536:
            self.pending += self.model.read(self.model.in_waiting)
        if self.pending:
            del self.pending[:self.endpoint.send(bytes(self.pending))]


class DeviceServer:
    """Serve a shoe model and/or a shuffler model until stopped, with the rig's dealer (a
    `simulators.rig_dealer.RigDealer`) between them."""

    def __init__(self, *, shoe: Any = None, shoe_protocol: str = "beetek",
                 shuffler: ShufflerModel | None = None, tcp: bool = False,
                 settle_s: float = 0.3, dealer: RigDealer | None = None,
                 log: TextIO | None = None):
        self.shoe_protocol, self.dealer, self.log = shoe_protocol, dealer, log
        self._wake_at: float | None = None
        self.ports: dict[str, _Port] = {}
        make = TcpEndpoint if tcp else PtyEndpoint
        if shoe is not None:
            self.ports["shoe"] = _Port("shoe", shoe, make(), settle_s)
        if shuffler is not None:
            self.ports["shuffler"] = _Port("shuffler", shuffler, make())

    @property
    def urls(self) -> dict[str, str]:
        return {name: port.endpoint.url for name, port in self.ports.items()}

    def url_lines(self) -> list[str]:
        lines = []
        for name, url in self.urls.items():
            lines.append(f"{name}: {url}" + (f" ({self.shoe_protocol})" if name == "shoe" else ""))
        return lines

    def step(self, timeout_s: float = 0.02) -> None:
        """One loop turn: wait for input up to timeout_s, move bytes, let the dealer act."""
        fds: list[Any] = [p.endpoint for p in self.ports.values()
                          if p.up or isinstance(p.endpoint, TcpEndpoint)]
        dealer = self.dealer
        extra = dealer.fds() if dealer is not None else []
        if self._wake_at is not None:
            timeout_s = max(0.0, min(timeout_s, self._wake_at - time.monotonic()))
        if fds or extra:
            ready = select.select(fds + extra, [], [], timeout_s)[0]
            for fd in ready:
                if dealer is not None and fd in extra:
                    dealer.on_ready(fd)
        else:
            time.sleep(timeout_s)
        now = time.monotonic()
        for port in self.ports.values():
            port.pump(now)
        if self.dealer is not None:
            shoe = self.ports.get("shoe")
            self._wake_at = self.dealer.act(now, shoe is not None and shoe.settled(now))
        for port in self.ports.values():       # the dealer's pull goes out in the same turn
            port.pump(now)

    def serve(self, stop: threading.Event | None = None) -> None:
        while stop is None or not stop.is_set():
            self.step()

    def close(self) -> None:
        if self.dealer is not None:
            self.dealer.close()
        for port in self.ports.values():
            port.endpoint.close()


# ---- command line -------------------------------------------------------------------------------

def split_faults(texts: list[str]) -> tuple[list[Any], list[Any]]:
    """(shoe faults, shuffler faults) from KIND@N texts; ValueError names a bad one."""
    shoe, shuffler = [], []
    for text in texts:
        kind = text.partition("@")[0]
        if kind in SHUFFLER_FAULTS:
            shuffler.append(parse_shuffler_fault(text))
        elif kind == "skip_burn":
            raise ValueError(f"{text!r}: skip_burn is a dealer's fault; this rig's dealer only "
                             f"pulls cards (use `tablectl simulate --fault skip_burn@N`)")
        else:
            from simulators.shoe import parse_fault
            shoe.append(parse_fault(text))
    return shoe, shuffler


def build_server(*, cards: list[str] | None, cut_position: int | None, decks: int,
                 cut_from_end: int | None, shoe_protocol: str, tcp: bool, faults: list[str],
                 pace_ms: int, seed: int | None, shuffle_time_s: float,
                 human_input: TextIO | None = None, log: TextIO | None = None,
                 weak_shuffler: bool = False, display: str | None = None) -> DeviceServer:
    """The rig behind `tablectl devices` and `python -m simulators.server`: with `display`
    (the table's dealer's display, http://HOST:PORT) a dealer who follows it, a shoe that
    holds no cards until one is loaded and a shuffler that keeps what it is given; without, a
    blind dealer, a shoe loaded with the first shoe and a shuffler refilled with new decks
    after every delivery (a bench)."""
    from simulators.rig_dealer import BlindDealer, DisplayDealer
    from simulators.shoe import ShoeModel
    shoe_faults, shuffler_faults = split_faults(faults)
    shuffler = ShufflerModel(seed=seed, decks=decks, faults=shuffler_faults,
                             shuffle_time_s=shuffle_time_s, weak=weak_shuffler,
                             restock=display is None)
    first = (list(cards), cut_position) if cards is not None else None

    def say(text: str) -> None:
        if log is not None:
            print(text, file=log, flush=True)

    shoe = ShoeModel([], protocol=shoe_protocol)
    common = dict(cut_from_end=cut_from_end, say=say, seed=seed, faults=shoe_faults)
    dealer: RigDealer
    if display is None:
        if first is None:
            order = shuffler.shuffled([c for _ in range(decks) for c in CARD_CODES])
            first = (order, len(order) - cut_from_end if cut_from_end else None)
        dealer = BlindDealer(shoe, shuffler, pace_s=pace_ms / 1000, presses=human_input,
                             first=first, **common)
    else:
        if first is not None:
            shuffler.stack(first[0])            # the shuffler delivers the shoe file's order
        dealer = DisplayDealer(shoe, shuffler, display=display, pace_s=pace_ms / 1000,
                               first=first, **common).start()
    return DeviceServer(shoe=shoe, shoe_protocol=shoe_protocol, shuffler=shuffler, tcp=tcp,
                        dealer=dealer, log=log)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run_until_interrupted(server: DeviceServer, out: TextIO) -> int:
    """Print the URLs, serve until Ctrl-C or SIGTERM (main thread only), then close."""
    signal.signal(signal.SIGTERM, _interrupt)
    # Ctrl-C too, even when started in the background by a script (which starts it with
    # SIGINT ignored): a rig's harness stops it with SIGINT
    signal.signal(signal.SIGINT, _interrupt)
    try:
        for line in server.url_lines():
            print(line, file=out, flush=True)
        server.serve()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m simulators.server",
                                 description=__doc__.split("\n")[0])
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--shoe-file",
                     help="cards in draw order, one per line (CUT marks the cut card)")
    src.add_argument("--seed", type=int, help="seed for a reproducible shuffled shoe (tests only)")
    ap.add_argument("--decks", type=int, default=8)
    ap.add_argument("--cut-from-end", type=int, default=14,
                    help="cards behind the cut card when the shoe file has no CUT line (0 = none)")
    ap.add_argument("--shoe-protocol", default="beetek", choices=tuple(PROTOCOLS))
    ap.add_argument("--tcp", action="store_true", help="socket:// URLs instead of ptys")
    ap.add_argument("--fault", action="append", default=[], metavar="KIND@N")
    ap.add_argument("--pace-ms", type=int, default=250, help="ms between pulls; 0 = Enter pulls")
    ap.add_argument("--shuffle-s", type=float, default=2.0, help="time one shuffle takes")
    args = ap.parse_args(argv)
    cards, cut = None, None
    try:
        if args.shoe_file:
            from controller.shoe.shoefile import read_shoe_file
            shoe = read_shoe_file(args.shoe_file)
            cards, cut = shoe.codes, shoe.cut_position
            if cut is None and args.cut_from_end:
                cut = len(cards) - args.cut_from_end if args.cut_from_end < len(cards) else None
        server = build_server(cards=cards, cut_position=cut, decks=args.decks,
                              cut_from_end=args.cut_from_end or None,
                              shoe_protocol=args.shoe_protocol, tcp=args.tcp, faults=args.fault,
                              pace_ms=args.pace_ms, seed=args.seed, shuffle_time_s=args.shuffle_s,
                              human_input=sys.stdin, log=sys.stderr)
    except ValueError as err:                   # InputError and bad faults are ValueErrors
        print(f"simulators.server: {err}", file=sys.stderr)
        return 2
    return run_until_interrupted(server, sys.stdout)


if __name__ == "__main__":
    sys.exit(main())
