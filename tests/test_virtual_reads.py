"""On a virtual clock the shoe is read once a card: the simulated port says when nothing new can
be there, and what it holds back (a silence, a dropped link) is read as soon as it may be. The
fast paths of the decoder and of the `--json` lines give exactly what the general ones give."""
from __future__ import annotations

import json
import random

import pytest

from controller.feed.lines import json_line
from controller.schema import stamped
from controller.service.clock import VirtualClock
from controller.service.devices import ShoeSource
from drivers.events import CardRead, LinkBack, LinkLost
from drivers.shoe import beetek, open_shoe
from simulators import registry
from simulators.shoe import ShoeModel, parse_fault

CARDS = ["AS", "TH", "3C", "KD", "5S", "6H", "QC", "8D", "9S", "JH"]


@pytest.fixture
def rig():
    made: list = []

    def make(*faults: str, protocol: str = "beetek"):
        clock = VirtualClock()
        model = ShoeModel(CARDS, protocol=protocol, clock=clock, session=1,
                          faults=[parse_fault(f) for f in faults])
        name = f"virtual-reads-{len(made)}-{random.getrandbits(32):08x}"
        registry.register(name, model)
        inputs: list = []
        source = ShoeSource(inputs.append, lambda: open_shoe(
            f"shoesim://{name}", protocol, read_timeout_s=0.01, reconnect_initial_s=0.01,
            reconnect_max_s=0.05, clock=clock, sleep=lambda s: None, stamp=clock),
            protocol=protocol, read_timeout_s=0.0, clock=clock)
        reads = {"n": 0}
        driver = source.driver
        assert driver is not None
        real = driver.read_event

        def counted(timeout: float | None = None):
            reads["n"] += 1
            return real(timeout)
        driver.read_event = counted         # type: ignore[method-assign]
        made.append((name, source))
        return model, clock, source, inputs, reads

    yield make
    for name, source in made:
        source.close()
        registry.unregister(name)


def test_a_card_is_read_with_one_look_however_often_the_loop_pumps(rig):
    model, clock, source, inputs, reads = rig()
    source.pump()
    for _ in range(len(CARDS)):
        model.pull()
        for _ in range(3):            # the loop pumps after an input, a timer and a jump
            source.pump()
        clock.advance(1.0)
    assert [i.code for i in inputs] == CARDS
    assert reads["n"] <= len(CARDS) + 1      # one look a card (and the first, at start)
    for _ in range(50):
        source.pump()                  # nothing new: nobody looks
    assert reads["n"] <= len(CARDS) + 1


def test_a_read_held_back_by_a_silence_comes_once_the_silence_ends(rig):
    model, clock, source, inputs, _ = rig("silence@2")
    for _ in range(2):
        model.pull()
        source.pump()
        clock.advance(0.1)
    model.pull()                       # card 2: its bytes wait behind the silence
    source.pump()
    assert len(inputs) == 2
    clock.advance(model.silence_s / 2)
    source.pump()
    assert len(inputs) == 2            # still silent
    clock.advance(model.silence_s)
    source.pump()                      # nothing was sent meanwhile: the silence ended
    assert [i.code for i in inputs] == CARDS[:3]


def test_a_dropped_link_is_noticed_and_comes_back_on_the_virtual_clock(rig):
    model, clock, source, inputs, _ = rig("drop@1")
    model.pull()
    source.pump()
    model.pull()                       # the link drops as card 1 leaves: its bytes are lost
    source.pump()
    assert isinstance(inputs[-1], LinkLost)
    for _ in range(100):
        wake = source.pump()           # the time to try the link again; None: it is back
        if wake is None:
            break
        assert wake > clock.now()
        clock.advance_to(wake)
    assert isinstance(inputs[-1], LinkBack)
    model.pull()
    source.pump()
    assert [i.code for i in inputs if isinstance(i, CardRead)] == [CARDS[0], CARDS[2]]


def test_the_bee_tek_card_read_fast_path_decodes_as_the_tokens_do(monkeypatch):
    rng = random.Random(7)
    enc = beetek.BeetekEncoder()
    parts = []
    for _ in range(400):
        kind = rng.random()
        code = rng.choice(["AS", "TD", "9H", "KC", "QS", "2D"])
        if kind < 0.6:
            parts.append(enc.card(code, manual_burn=rng.random() < 0.2))
        elif kind < 0.7:
            parts.append(f"[game] <Card:{code.lower()}>\r\n".encode())      # loose forms
        elif kind < 0.8:
            parts.append(enc.failed() + enc.cut())
        elif kind < 0.9:
            parts.append(enc.noise() + enc.alarm("E3", "Card Not Read"))
        else:
            parts.append(b"[Game]<Card:1S>\r\n[Game]<Card:10X>\r\n")        # impossible
    stream = b"".join(parts)

    def decode() -> list:
        dec = beetek.BeetekDecoder()
        out = []
        for k in range(0, len(stream), 13):                    # bytes as they trickle in
            dec.feed(stream[k:k + 13])
            while True:
                try:
                    e = dec.next()
                except Exception as err:    # noqa: BLE001 - decode errors are part of it
                    out.append((type(err).__name__, err.raw))
                    continue
                if e is None:
                    break
                out.append((e, e.raw))
        return out

    fast = decode()
    monkeypatch.setattr(beetek, "_CARD_READ", beetek.re.compile(rb"(?!)()()()"))
    assert fast == decode()
    assert sum(isinstance(e, CardRead) for e, _ in fast) > 200


@pytest.mark.parametrize("event", [
    {"event": "card", "code": "TH", "seq": 3, "flags": {"face_up": True}},
    {"event": "round_result", "player": ["AS", "9H"], "winner": "tie", "note": "é ♠ \u2028"},
    {"event": "odd", "schema_version": 9, "x": None},
    {"event": "bets", "pays": 0.95, "big": 10 ** 20, "nan": float("nan"), "t": (1, [2.5e-9]),
     "nested": {"a": {"b": [True, False, None, ""]}}, "\u00e9": "\ud83c\udca1"},
    {},
])
def test_a_json_line_is_the_stamped_event_encoded(event):
    assert json_line(event) == json.dumps(stamped(event), separators=(",", ":"))


class _Outlet:
    def __init__(self, ignores: frozenset[str] | None = None):
        self.events: list[dict] = []
        if ignores is not None:
            self.ignores = ignores

    def publish(self, event: dict) -> None:
        self.events.append(event)


def test_prompts_are_made_only_when_an_outlet_takes_them(monkeypatch):
    from controller.commands._simulation import run_simulation
    from controller.service.prompt import Prompter
    from controller.settings.profile import load_profile
    made = {"n": 0}
    event = Prompter.event

    def counted(self):
        made["n"] += 1
        return event(self)
    monkeypatch.setattr(Prompter, "event", counted)
    taking = _Outlet()
    run_simulation(load_profile("macau"), seed=5, publishers=[taking], keep_events=False)
    assert made["n"] > 100 and any(e["event"] == "prompt" for e in taking.events)
    made["n"] = 0
    leaving = _Outlet(frozenset({"prompt"}))
    run_simulation(load_profile("macau"), seed=5, publishers=[leaving], keep_events=False)
    assert made["n"] == 0
    # the same shoe, the same events, prompts aside
    assert leaving.events == [e for e in taking.events if e["event"] != "prompt"]


def test_the_json_feed_writes_a_batch_in_one_write_when_the_loop_flushes_it():
    import io

    from controller.feed.lines import HELD_LINES, JsonFeed

    class Stream(io.StringIO):
        writes = 0

        def write(self, text: str) -> int:
            self.writes += 1
            return super().write(text)

    stream = Stream()
    feed = JsonFeed(stream, kinds={"card", "round_result"})
    batch = [{"event": "card", "n": 1}, {"event": "prompt"}, {"event": "round_result", "n": 2}]
    for event in batch:
        feed.publish(event)
    assert stream.getvalue() == ""                  # held until the batch is announced
    feed.flush()
    kept = [e for e in batch if e["event"] != "prompt"]
    assert stream.getvalue() == "".join(json_line(e) + "\n" for e in kept)
    assert stream.writes == 1
    feed.flush()
    assert stream.writes == 1                       # nothing held: nothing written
    for n in range(HELD_LINES + 1):
        feed.publish({"event": "card", "n": n})
    assert stream.getvalue().count("\n") == 2 + HELD_LINES     # a full hold went out by itself
    feed.flush()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 3 + HELD_LINES and json.loads(lines[-1])["n"] == HELD_LINES
