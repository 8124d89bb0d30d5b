"""Line noise on the shoe's cable: counted byte by byte, logged as one line per burst; the
Bee-Tek `[GameAlarm]` prefix is part of the protocol, not noise."""
from drivers.events import CardRead, DeviceAlarm
from drivers.shoe import open_shoe
from drivers.shoe.beetek import BeetekDecoder


class Log:
    """Stands in for the driver's structlog logger: keeps (level, event, fields)."""

    def __init__(self):
        self.lines = []

    def __getattr__(self, level):
        return lambda event, **fields: self.lines.append((level, event, fields))


def test_a_burst_of_stray_bytes_is_one_summary_line_and_every_byte_is_counted():
    with open_shoe("loop://", "beetek") as driver:
        driver._log = log = Log()
        port = driver.transport
        for _ in range(40):                        # a noisy cable: stray bytes, a few at a time
            port.write(b"\x00\xff")
            driver.read_event(0.0)
        port.write(b"[Game]<Card:9H>\r\n")
        card = driver.read_event(0.2)
        assert isinstance(card, CardRead) and card.code == "9H"
        noise = [x for x in log.lines if x[1] == "shoe line noise"]
        assert len(noise) == 1 and noise[0][0] == "warning"
        assert noise[0][2]["garbage_bytes"] == 80 == driver.stats["garbage_bytes"]
        assert "00 ff" in noise[0][2]["first"]
        assert not [x for x in log.lines if x[0] == "warning" and x[1] != "shoe line noise"]
        # a second burst, ended by silence this time: a second line
        port.write(b"~~~")
        assert driver.read_event(0.05) is None
        assert [x[2].get("garbage_bytes") for x in log.lines
                if x[1] == "shoe line noise"] == [80, 3]


def test_the_gamealarm_prefix_carries_an_alarm():
    dec = BeetekDecoder()
    dec.feed(b"[GameAlarm]<Alarm:E3 Card Not Read>\r\n[Game]<Card:10H>\r\n")
    alarm, card = dec.next(), dec.next()
    assert isinstance(alarm, DeviceAlarm) and (alarm.code, alarm.text) == ("E3", "Card Not Read")
    assert isinstance(card, CardRead) and card.code == "TH" and not card.manual_burn
