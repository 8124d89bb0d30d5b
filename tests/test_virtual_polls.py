"""The virtual clock's loop pumps its devices when something may have changed them: after an
input or a timer, and after a jump of the clock unless every device said it is steady."""
from controller.journal import Journal
from controller.service.clock import VirtualClock
from controller.service.loop import TableService
from controller.service.recovery import open_table
from controller.settings.profile import load_profile


class Device:
    """A pump that records when it was looked at; `steady` as given (None: no such
    attribute, as a pump that does not say)."""

    def __init__(self, clock: VirtualClock, steady: bool | None):
        self.clock, self.looks = clock, []
        if steady is not None:
            self.steady = steady

    def pump(self) -> float | None:
        self.looks.append(self.clock.now())
        return None


def looks_and_timer(*steady: bool | None) -> tuple[list[list[float]], list[float]]:
    with Journal(":memory:") as journal:
        table, _ = open_table(load_profile("classic"), journal)
        clock = VirtualClock()
        service = TableService(table, journal, clock)
        devices = [Device(clock, s) for s in steady]
        for device in devices:
            service.connect(device)
        fired: list[float] = []
        service.call_later(5.0, lambda: fired.append(clock.now()))
        service.run()
    return [d.looks for d in devices], fired


def test_steady_devices_are_not_pumped_again_when_the_clock_jumps_to_a_timer():
    looks, fired = looks_and_timer(True, True)
    assert fired == [5.0]
    # before the jump, then after the timer ran; not at the jump itself
    assert looks == [[0.0, 5.0], [0.0, 5.0]]


def test_one_device_not_steady_has_every_device_pumped_at_the_jump():
    for steady in (False, None):
        looks, fired = looks_and_timer(True, steady)
        assert fired == [5.0]
        assert looks == [[0.0, 5.0, 5.0], [0.0, 5.0, 5.0]]
