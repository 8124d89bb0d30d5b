"""Each shoe-side fault of the model gives the bytes and events it should, through the real
driver over shoesim://NAME."""
from __future__ import annotations

import uuid

import pytest

from drivers.events import CardRead, CutCardSeen, LinkBack, LinkLost, ReadFailed
from drivers.shoe import PROTOCOLS, open_shoe
from simulators import registry
from simulators.shoe import (ENCODERS, FAULT_KINDS, SHOE_FAULTS, Fault, FaultError, ShoeModel,
                             parse_fault)

CARDS = ["AS", "2H", "3C", "4D", "5S", "6H"]
ALL = sorted(PROTOCOLS)


@pytest.fixture
def shoe():
    names = []

    def make(protocol, *faults, cards=CARDS, dead_after_timeouts=0, **options):
        name = f"fault-{uuid.uuid4().hex[:8]}"
        model = ShoeModel(cards, protocol=protocol, faults=[parse_fault(f) for f in faults],
                          session=1, **options)
        registry.register(name, model)
        names.append(name)
        driver = open_shoe(f"shoesim://{name}", protocol, read_timeout_s=0.01,
                           dead_after_timeouts=dead_after_timeouts, reconnect_initial_s=0.01)
        drivers.append(driver)
        return model, driver

    drivers: list = []
    yield make
    for driver in drivers:
        driver.close()
    for name in names:
        registry.unregister(name)


def drain(driver, quiet: float = 0.03, limit: int = 200) -> list:
    """Events until the line stays quiet for `quiet` s; reads are acknowledged as journaled."""
    events = []
    for _ in range(limit):
        event = driver.read_event(quiet)
        if event is None:
            return events
        events.append(event)
        if getattr(event, "seq", None):
            driver.ack(event.seq)
    pytest.fail(f"the shoe never went quiet: {events}")


def until(driver, kind, limit: int = 300) -> list:
    events = []
    for _ in range(limit):
        event = driver.read_event(0.02)
        if event is not None:
            events.append(event)
            if getattr(event, "seq", None):
                driver.ack(event.seq)
            if isinstance(event, kind):
                return events
    pytest.fail(f"no {kind.__name__} in {events}")


def summary(events) -> list:
    """Events as short tuples: ("card", code) / ("failed",) / ("cut",) / (type name,)."""
    out = []
    for e in events:
        if isinstance(e, CardRead):
            out.append(("card", e.code))
        elif isinstance(e, ReadFailed):
            out.append(("failed",))
        elif isinstance(e, CutCardSeen):
            out.append(("cut",))
        else:
            out.append((type(e).__name__,))
    return out


def pull(model, times: int) -> list:
    return [model.pull() for _ in range(times)]


@pytest.mark.parametrize("protocol", ALL)
def test_misread_sends_a_failed_read_instead_of_the_card(shoe, protocol):
    model, driver = shoe(protocol, "misread@1")
    assert pull(model, 3) == [["AS"], ["2H"], ["3C"]]       # the card still left the shoe
    assert summary(drain(driver)) == [("card", "AS"), ("failed",), ("card", "3C")]


@pytest.mark.parametrize("protocol", ALL)
@pytest.mark.parametrize("kind, count", [("double_draw", 2), ("triple_draw", 3)])
def test_multiple_draw(shoe, protocol, kind, count):
    model, driver = shoe(protocol, f"{kind}@1")
    assert pull(model, 2) == [["AS"], CARDS[1:1 + count]]
    events = drain(driver)
    assert summary(events) == [("card", c) for c in CARDS[:1 + count]]
    # the multiple flag where the protocol has one, else plain reads back to back
    expected = count if protocol == "framed" else 0
    assert [e.multiple for e in events] == [0] + [expected] * count
    assert model.position == 1 + count


@pytest.mark.parametrize("protocol", ALL)
def test_noise_before_a_card_is_skipped(shoe, protocol):
    model, driver = shoe(protocol, "noise@1")
    pull(model, 3)
    assert summary(drain(driver)) == [("card", c) for c in CARDS[:3]]
    assert driver.stats["garbage_bytes"] > 0


@pytest.mark.parametrize("protocol", ALL)
def test_split_frame_arrives_in_two_reads_and_decodes_whole(shoe, protocol):
    bare = ShoeModel(CARDS, protocol=protocol, faults=[Fault("split", 0)], session=1)
    if protocol == "framed":
        bare.read(4096)                                     # the power-on HELLO
    bare.pull()
    first, second = bare.read(4096), bare.read(4096)
    assert first and second and first + second == ENCODERS[protocol]().card("AS", seq=1)
    model, driver = shoe(protocol, "split@1")
    pull(model, 2)
    assert summary(drain(driver)) == [("card", "AS"), ("card", "2H")]
    assert driver.stats["garbage_bytes"] == driver.stats["bad_frames"] == 0


@pytest.mark.parametrize("acked_before_drop", [True, False])
def test_drop_framed_loses_nothing_and_applies_nothing_twice(shoe, acked_before_drop):
    model, driver = shoe("framed", "drop@1", drop_s=0.05)
    model.pull()
    first = driver.read_event(0.5)
    assert isinstance(first, CardRead) and first.seq == 1
    if acked_before_drop:
        driver.ack(1)
    model.pull()                        # the link drops as card 2H leaves the shoe
    events = until(driver, LinkBack)
    assert summary(events) == [("LinkLost",), ("LinkBack",)]
    model.pull()
    events = drain(driver)
    assert summary(events) == [("card", "2H"), ("card", "3C")]
    assert [e.seq for e in events] == [2, 3]
    assert driver.stats["duplicates"] == (0 if acked_before_drop else 1)
    assert model.unacked == []


@pytest.mark.parametrize("protocol", ["beetek", "barcode"])
def test_drop_without_resend_loses_the_read_in_flight(shoe, protocol):
    model, driver = shoe(protocol, "drop@1", drop_s=0.05)
    model.pull()
    assert summary(drain(driver)) == [("card", "AS")]
    model.pull()
    assert summary(until(driver, LinkBack)) == [("LinkLost",), ("LinkBack",)]
    model.pull()
    assert summary(drain(driver)) == [("card", "3C")]        # 2H never reached the controller


@pytest.mark.parametrize("protocol", ALL)
def test_silence_with_dead_detection_is_lost_then_back(shoe, protocol):
    model, driver = shoe(protocol, "silence@1", silence_s=0.15, dead_after_timeouts=3)
    model.pull()
    assert summary(until(driver, CardRead)) == [("card", "AS")]
    model.pull()
    events = until(driver, CardRead)
    assert summary(events) == [("LinkLost",), ("LinkBack",), ("card", "2H")]
    assert isinstance(events[0], LinkLost) and "no data" in events[0].reason


@pytest.mark.parametrize("protocol", ALL)
def test_silence_without_dead_detection_only_delays(shoe, protocol):
    model, driver = shoe(protocol, "silence@0", silence_s=0.1)
    model.pull()
    assert summary(until(driver, CardRead)) == [("card", "AS")]
    assert driver.stats["timeouts"] > 0


@pytest.mark.parametrize("protocol", ALL)
def test_foreign_card_is_an_extra_copy(shoe, protocol):
    model, driver = shoe(protocol, "foreign_card@2", cards=["KD", "KD", "5S", "9C"])
    assert model.undealt() == ["KD", "KD", "KD", "9C"]        # 5S replaced by a third KD
    assert model.card_at(2) == "KD" and model.card_at(4) is None
    assert pull(model, 3) == [["KD"], ["KD"], ["KD"]]
    assert summary(drain(driver)) == [("card", "KD")] * 3


@pytest.mark.parametrize("protocol", ALL)
def test_face_up(shoe, protocol):
    model, driver = shoe(protocol, "face_up@1")
    pull(model, 3)
    events = drain(driver)
    # only the framed protocol can say so; the others read the card as usual
    assert [e.face_up for e in events] == [False, protocol == "framed", False]
    assert summary(events) == [("card", c) for c in CARDS[:3]]


@pytest.mark.parametrize("protocol", ALL)
@pytest.mark.parametrize("kind", sorted(set(FAULT_KINDS) - set(SHOE_FAULTS)))
def test_faults_of_other_devices_leave_the_shoe_bytes_alone(protocol, kind):
    plain = ShoeModel(CARDS, protocol=protocol, session=1, cut_position=3)
    faulted = ShoeModel(CARDS, protocol=protocol, session=1, cut_position=3,
                        faults=[Fault(kind, 1)])
    out = []
    for model in (plain, faulted):
        codes = [model.pull() for _ in CARDS]
        data = b"".join(iter(lambda m=model: m.read(4096), b""))
        out.append((codes, data))
    assert out[0] == out[1]
    assert faulted.faults == (Fault(kind, 1),)


@pytest.mark.parametrize("protocol", ALL)
@pytest.mark.parametrize("cut", [0, 3, 6])
def test_cut_card_comes_out_right_before_its_position(shoe, protocol, cut):
    model, driver = shoe(protocol, cut_position=cut)
    pulled = pull(model, len(CARDS) + 1)
    assert pulled[-1] == [] and model.exhausted and model.cut_card_out
    expected = [("card", c) for c in CARDS]
    expected.insert(cut, ("cut",))
    assert summary(drain(driver)) == expected


def test_fault_texts_and_bad_faults():
    assert parse_fault(" double_draw@40 ") == Fault("double_draw", 40)
    assert str(Fault("drop", 3)) == "drop@3"
    for text in ["double_draw", "melt@3", "misread@-1", "misread@x"]:
        with pytest.raises(FaultError, match="is not a fault"):
            parse_fault(text)
    model = ShoeModel(CARDS)
    with pytest.raises(FaultError, match="unknown fault kind"):
        model.inject(Fault("melt", 1))
    with pytest.raises(FaultError, match="outside"):
        model.inject(Fault("misread", len(CARDS)))
    model.pull()
    with pytest.raises(FaultError, match="outside 1"):
        model.inject(Fault("misread", 0))           # that card has already left
    model.inject(Fault("jam", 99))                  # the shuffler's business, kept as given


def test_model_state_and_bad_input():
    model = ShoeModel(["AS", "10d"], cut_position=2)
    assert model.undealt() == ["AS", "TD"] and model.remaining == 2
    model.pull()
    model.pull()
    assert model.position == 2 and model.exhausted and model.pull() == [] and model.undealt() == []
    with pytest.raises(ValueError, match="ZZ is not a card"):
        ShoeModel(["ZZ"])
    with pytest.raises(ValueError, match="cut_position 5 outside"):
        ShoeModel(["AS"], cut_position=5)
    with pytest.raises(ValueError, match="unknown shoe protocol"):
        ShoeModel(["AS"], protocol="morse")
