"""Options for the behaviour suite: simulator by default, real devices when given a URL."""
import pytest

from drivers.shoe import PROTOCOLS
from simulators.install import install


def pytest_addoption(parser):
    g = parser.getgroup("tablectl devices")
    g.addoption("--shoe-url", default=None,
                help="run the device behaviour suite against this real shoe (e.g. /dev/ttyUSB0)")
    g.addoption("--shoe-protocol", default="beetek", choices=tuple(PROTOCOLS))
    g.addoption("--shuffler-url", default=None,
                help="run the device behaviour suite against this real shuffler (usb://VID:PID)")
    g.addoption("--hardware-cards", type=int, default=4,
                help="with --shoe-url: how many cards the operator deals during the test")


@pytest.fixture
def shoe_url(request):
    return request.config.getoption("--shoe-url")


@pytest.fixture
def shuffler_url(request):
    return request.config.getoption("--shuffler-url")


@pytest.fixture(autouse=True, scope="session")
def simulators_installed():
    """Tests open shoesim:// and usb://…?sim= URLs directly, as the application does once it
    has installed the simulators."""
    install()
