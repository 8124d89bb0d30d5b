"""A device side that does not oblige, as separate processes: `tablectl devices` (TCP) and
`tablectl run --http` with its virtual supervisor, a device's link cut by a relay between them
(a cable pulled, a device switched off and on). The table holds with a line that says why,
finds the device again by itself, and deals on."""
from __future__ import annotations

import json
import select
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from controller.journal import Journal
from tests.test_link_review import Rig
from tests.test_rig import TABLECTL, Devices, free_port


class Relay:
    """A device's socket:// URL through a relay on a port of its own. `off_after_accept`: the
    relay stops listening as soon as it takes that connection (counted from 1; the next one is
    refused: the device is away) and listens again `off_s` after it ends. `drop_request_of`:
    the first request on that connection dies with its link, unanswered (the device's cable
    pulled just then)."""

    def __init__(self, target: str, *, off_after_accept: int | None = None,
                 off_s: float = 1.5, drop_request_of: int | None = None):
        host, port = target.removeprefix("socket://").rsplit(":", 1)
        self.target = (host, int(port))
        self.port = free_port()
        self.url = f"socket://127.0.0.1:{self.port}"
        self.off_after_accept, self.off_s = off_after_accept, off_s
        self.drop_request_of = drop_request_of
        self.dropped = b""
        self.accepted = 0
        self._stop = threading.Event()
        self._listener: socket.socket | None = None
        self._listen()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _listen(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", self.port))

    def _run(self) -> None:
        while not self._stop.is_set():
            listener = self._listener
            if listener is None:
                time.sleep(0.05)
                continue
            if not select.select([listener], [], [], 0.1)[0]:
                continue
            client, _ = listener.accept()
            self.accepted += 1
            away = self.accepted == self.off_after_accept
            if away:
                listener.close()            # connections now refused: the device is away
                self._listener = None
            if self.accepted == self.drop_request_of:
                self._drop(client)
            else:
                self._pipe(client)
            if away:
                time.sleep(self.off_s)
                self._listen()

    def _drop(self, client: socket.socket) -> None:
        if select.select([client], [], [], 5.0)[0]:
            self.dropped = client.recv(65536)
        client.close()

    def _pipe(self, client: socket.socket) -> None:
        device = socket.create_connection(self.target)
        ends = [client, device]
        try:
            while not self._stop.is_set():
                for end in select.select(ends, [], [], 0.1)[0]:
                    data = end.recv(65536)
                    if not data:
                        return
                    (device if end is client else client).sendall(data)
        except OSError:
            return
        finally:
            client.close()
            device.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        if self._listener is not None:
            self._listener.close()


def events(path: Path) -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def deal_to_the_first_card(tmp_path: Path, **relay: object) -> tuple[list, list, str]:
    """`tablectl devices` (the dealer following the display) and `tablectl run` with its
    virtual supervisor, the shuffler through a Relay(**relay), until the table reads its
    first card or 12 s have passed: what run printed, the journal's events (verified) and
    run's log."""
    rig = Rig(tmp_path)
    http = free_port()
    dev = Devices(["--tcp", "--seed", "3", "--dealer-display", f"http://127.0.0.1:{http}",
                   "--pace-ms", "50", "--shuffle-seconds", "0.3"], rig.env, tmp_path)
    relayed = Relay(dev.urls["shuffler"], **relay)  # type: ignore[arg-type]
    out = tmp_path / "run.jsonl"
    try:
        with open(out, "wb") as o, open(tmp_path / "run.err", "wb") as e:
            ctl = subprocess.Popen(
                TABLECTL + ["run", "--profile", "macau", "--http", f"127.0.0.1:{http}",
                            "--shoe-url", dev.urls["shoe"], "--shuffler-url", relayed.url,
                            "--journal", str(rig.journal), "--no-control",
                            "--virtual-supervisor", "--json"],
                cwd=tmp_path, env=rig.env, stdout=o, stderr=e, stdin=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 12
            while time.monotonic() < deadline and ctl.poll() is None:
                if any(x.get("event") == "card" for x in events(out)):
                    break
                time.sleep(0.2)
        finally:
            ctl.send_signal(signal.SIGTERM)
            assert ctl.wait(timeout=20) == 0
    finally:
        relayed.close()
        devices_said = dev.said()
        dev.stop()
    with Journal.open_readonly(rig.journal) as j:
        assert j.verify().ok
        records = [r.data for r in j.records() if r.kind != "input"]
    return events(out), records, (tmp_path / "run.err").read_text() + devices_said


def test_a_shuffler_away_when_its_shoe_is_to_be_delivered_delivers_it_once_back(tmp_path):
    # the shuffler counted the shoe, then is away (switched off, its cable out) when the table
    # asks it to hand the shoe over: the table holds (open_failed), and once the hold is
    # cleared asks for the delivery again, so the dealer gets the shoe and the burn begins;
    # before, the table waited for ever for the first card of a shoe still in the machine
    said, records, log = deal_to_the_first_card(tmp_path, off_after_accept=1, off_s=1.0)
    holds = [(h["reason"], h.get("code"), h["resume_to"])
             for h in records if h["event"] == "hold"]
    assert holds and holds[0] == ("device_alarm", "open_failed", "loaded"), holds
    asked = [r["action"] for r in records if r["event"] == "device_request"]
    assert asked[:2] == ["shuffle", "deliver"] and asked.count("deliver") >= 2, asked
    assert asked.count("shuffle") == 1          # the counted shoe is delivered, not reshuffled
    cards = [x for x in said if x.get("event") == "card"]
    assert cards and cards[0]["slot"] == "burn" and cards[0]["n"] == 1, log[-2000:]
    # the hold said why in one line of the log, naming the shuffler
    assert "shuffler alarm open_failed" in log


def test_a_delivery_whose_link_fails_under_it_holds_and_is_asked_again(tmp_path):
    # the link dies with the shuffler's DELIVER unanswered: whether the shoe came out is not
    # known. The table holds (the shuffler's fault, named in one line), and the hold's remedy
    # asks again: the shuffler, which still has the shoe, hands it over and the burn begins.
    # Before, a warning said "the shoe is taken by hand", the health view showed the
    # shuffler answering, and the table waited for ever for a card from the machine
    said, records, log = deal_to_the_first_card(tmp_path, drop_request_of=2)
    holds = [(h["reason"], h.get("code"), h["resume_to"])
             for h in records if h["event"] == "hold"]
    assert holds and holds[0] == ("device_alarm", "fault", "loaded"), holds
    asked = [r["action"] for r in records if r["event"] == "device_request"]
    assert asked[:3] == ["shuffle", "deliver", "deliver"] and asked.count("shuffle") == 1, asked
    cards = [x for x in said if x.get("event") == "card"]
    assert cards and cards[0]["slot"] == "burn" and cards[0]["n"] == 1, log[-2000:]
    assert "shuffler alarm fault" in log and "link lost" in log
    assert "taken by hand" not in log
