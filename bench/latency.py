"""Shoe read latency and throughput: the real driver beside a bare pyserial loop.

Latency runs from the moment the last byte of a read is written (the shoe model's pull()
returns, or os.write() into a pty master returns) to the decoded CardRead (its `t`), and for the
bare loop to the read() that brought that byte in. Throughput: cards per second with the shoe
writing as fast as it can. Two transports: the in-process shoesim:// handler and a pty (writer
thread on the master, the port opened on the slave path like a real /dev/tty*).

    python bench/latency.py [--cards 500] [--pace-ms 1] [--protocol beetek]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
import uuid
from typing import Callable

from controller.logsetup import configure
from drivers.events import CardRead
from drivers.shoe import PROTOCOLS, open_shoe
from drivers.transport import open_serial
from simulators import registry
from simulators.shoe import ENCODERS, ShoeModel

CODES = [r + s for s in "SHDC" for r in "A23456789TJQK"]


class Rig:
    """One transport carrying `n` reads of `protocol`: send(i) writes read i's last byte."""

    def __init__(self, transport: str, protocol: str, n: int):
        self.protocol, self.n = protocol, n
        self.cards = [CODES[i % 52] for i in range(n)]
        enc = ENCODERS[protocol]()
        self.frames = [enc.card(c, seq=i % 65535 + 1) for i, c in enumerate(self.cards)]
        self.preamble = 0                    # bytes before the first read (framed power-on HELLO)
        self._closers: list[Callable[[], None]] = []
        if transport == "shoesim":
            name = f"bench-{uuid.uuid4().hex[:8]}"
            self.model = ShoeModel(self.cards, protocol=protocol, session=1)
            self.preamble = self.model.in_waiting
            registry.register(name, self.model)
            self.url = f"shoesim://{name}"
            self.send = lambda i: self.model.pull()
            self._closers.append(lambda: registry.unregister(name))
        else:
            master, slave = os.openpty()
            self.url = os.ttyname(slave)
            self.send = lambda i: os.write(master, self.frames[i])
            self._closers += [lambda: os.close(master), lambda: os.close(slave)]

    def close(self) -> None:
        for close in self._closers:
            close()


def run(rig: Rig, reader: str, pace_s: float) -> tuple[float, list[float]]:
    """(cards per second, latencies in seconds) for one pass of `rig.n` reads."""
    n = rig.n
    sent: list[float | None] = [None] * n
    if reader == "driver":
        driver = open_shoe(rig.url, rig.protocol, read_timeout_s=0.05)
        port = None
    else:
        driver, port = None, open_serial(rig.url, timeout=0.05)
    ready = threading.Event()

    def writer() -> None:
        ready.wait()
        for i in range(n):
            rig.send(i)
            sent[i] = time.monotonic()
            if pace_s:
                time.sleep(pace_s)

    thread = threading.Thread(target=writer, daemon=True)
    thread.start()
    start = time.monotonic()
    ready.set()
    arrived: list[float] = []
    if driver is not None:
        while len(arrived) < n:
            event = driver.read_event(1.0)
            if isinstance(event, CardRead):
                arrived.append(event.t)
                if event.seq:
                    driver.ack(event.seq)
        driver.close()
    else:
        ends, total = [], rig.preamble
        for frame in rig.frames:
            total += len(frame)
            ends.append(total)
        received = 0
        while len(arrived) < n:
            data = port.read(port.in_waiting or 1)
            now = time.monotonic()
            received += len(data)
            while len(arrived) < n and ends[len(arrived)] <= received:
                arrived.append(now)
        port.close()
    end = time.monotonic()
    thread.join()
    latencies = [a - s for a, s in zip(arrived, sent) if s is not None]
    return n / (end - start), latencies


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cards", type=int, default=500, help="reads per run")
    ap.add_argument("--pace-ms", type=float, default=1.0,
                    help="gap between reads in the latency runs (throughput runs use none)")
    ap.add_argument("--protocol", choices=sorted(PROTOCOLS), action="append")
    args = ap.parse_args(argv)
    if args.cards < 1:
        print("latency: --cards must be >= 1", file=sys.stderr)
        return 2
    protocols = args.protocol or sorted(PROTOCOLS)
    print(f"{'transport':9} {'protocol':8} {'reader':7} {'cards/s':>9} "
          f"{'p50 µs':>8} {'p99 µs':>8} {'max µs':>8}")
    for transport in ("shoesim", "pty"):
        for protocol in protocols:
            for reader in ("driver", "bare"):
                rig = Rig(transport, protocol, args.cards)
                try:
                    rate, _ = run(rig, reader, 0.0)
                finally:
                    rig.close()
                rig = Rig(transport, protocol, args.cards)
                try:
                    _, lat = run(rig, reader, args.pace_ms / 1000)
                finally:
                    rig.close()
                us = [x * 1e6 for x in lat]
                print(f"{transport:9} {protocol:8} {reader:7} {rate:9.0f} "
                      f"{statistics.median(us):8.0f} {percentile(us, 0.99):8.0f} {max(us):8.0f}")
    return 0


if __name__ == "__main__":
    configure("WARNING")        # the driver's info lines (shoe session …) would break the table
    sys.exit(main())
