"""Options for the behaviour suite: simulator by default, real devices when given a URL."""
import pytest


def pytest_addoption(parser):
    g = parser.getgroup("tablectl devices")
    g.addoption("--shoe-url", default=None,
                help="run the device behaviour suite against this real shoe (e.g. /dev/ttyUSB0)")
    g.addoption("--shoe-protocol", default="beetek", choices=["beetek", "barcode", "framed"])
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
