"""Drivers are plugins: a shoe protocol from another distribution (tests/data/acme-shoe),
installed beside tablectl, deals a shoe by its name like a built-in one."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from drivers.registry import SHOE_PROTOCOLS
from drivers.shoe import PROTOCOLS, shoe_driver
from drivers.shuffler import SHUFFLER_PROTOCOLS

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "tests" / "data" / "acme-shoe"


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    """The example distribution installed into a folder of its own (added to the path of the
    processes that use it; the test environment itself is left as it is)."""
    target = tmp_path_factory.mktemp("plugins")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--no-build-isolation", "--no-index", "--target", str(target), str(PLUGIN)],
                   check=True, capture_output=True, timeout=300)
    return target


def cli(*args, plugins=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + ([str(plugins)] if plugins else [])))
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120)


def test_the_built_in_drivers_register_through_the_entry_points():
    assert {"beetek", "barcode", "framed"} <= set(PROTOCOLS)
    assert "framed" in SHUFFLER_PROTOCOLS
    for name in ("beetek", "barcode", "framed"):
        assert PROTOCOLS.origin(name).startswith("tablectl ")
        assert shoe_driver(name).protocol == name
    assert PROTOCOLS.group == SHOE_PROTOCOLS
    with pytest.raises(ValueError, match=r"unknown shoe protocol 'acme' \(known: barcode"):
        shoe_driver("acme")


@pytest.mark.slow
def test_a_plugin_protocol_deals_a_shoe_by_name(plugin_path, capsys):
    probe = subprocess.run(
        [sys.executable, "-c", "from drivers.shoe import PROTOCOLS, shoe_driver; "
         "print(PROTOCOLS.origin('acme'), shoe_driver('acme').__module__)"],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
        env=dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{plugin_path}"))
    assert probe.stdout.split() == ["acme-shoe", "1.0.0", "acme_shoe"], probe.stderr
    acme = cli("simulate", "--profile", "macau", "--seed", "3", "--shoe-protocol", "acme",
               "--json", plugins=plugin_path)
    assert acme.returncode == 0, acme.stderr
    from controller.cli import main
    assert main(["simulate", "--profile", "macau", "--seed", "3", "--json"]) == 0
    beetek = capsys.readouterr().out
    rounds = lambda out: [(e["player"], e["banker"], e["winner"]) for e in map(json.loads,
                          out.splitlines()) if e["event"] == "round_result"]
    # the same shoe read through the plugin's codec, by the simulator speaking its encoder
    assert rounds(acme.stdout) == rounds(beetek) and len(rounds(beetek)) > 60
    # without the plugin installed the name is unknown: one line, exit 2
    missing = cli("simulate", "--profile", "macau", "--seed", "3", "--shoe-protocol", "acme")
    assert missing.returncode == 2 and "invalid choice: 'acme'" in missing.stderr


@pytest.mark.slow
def test_a_plugin_that_fails_to_load_is_named_with_its_cause(tmp_path, plugin_path):
    import shutil
    broken = tmp_path / "broken"
    shutil.copytree(plugin_path, broken)
    (broken / "acme_shoe" / "__init__.py").write_text("import no_such_module\n")
    done = cli("simulate", "--profile", "macau", "--seed", "3", "--shoe-protocol", "acme",
               plugins=broken)
    assert done.returncode == 2, done.stderr
    assert "shoe protocol 'acme' (from acme-shoe: acme_shoe:AcmeDriver) failed to load: " \
           "ModuleNotFoundError" in done.stderr and done.stderr.count("\n") == 1


def test_every_driver_meets_the_typed_device_seam(monkeypatch):
    """What the table's device sources hold: the built-in shoe protocols, the example plugin
    and the framed shuffler are `ShoeDriver` / `ShufflerDriver`; a shuffler plugin whose driver
    lacks the methods is refused by name when it is opened, not half-way through a shuffle."""
    from importlib import metadata

    from drivers.errors import DriverUnavailable
    from drivers.interfaces import ShoeDriver, ShufflerDriver
    from drivers.shoe import open_shoe
    from drivers.shuffler import FramedShuffler, open_shuffler

    for name in ("beetek", "barcode", "framed"):
        drv = open_shoe("loop://", name)
        try:
            assert isinstance(drv, ShoeDriver), name
        finally:
            drv.close()
    monkeypatch.syspath_prepend(str(PLUGIN))
    from acme_shoe import AcmeDriver
    acme = AcmeDriver("loop://")
    try:
        assert isinstance(acme, ShoeDriver)
    finally:
        acme.close()
    assert not isinstance(object(), ShoeDriver)

    class NoLink:
        def write(self, data: bytes) -> int:
            return len(data)

        def read(self, size: int, timeout_s: float) -> bytes:
            return b""

        def close(self) -> None:
            pass

    assert isinstance(FramedShuffler(NoLink()), ShufflerDriver)

    class HalfDriver:                  # a vendor's driver that forgot most of the seam
        closed = False

        def identify(self) -> None: ...

        def close(self) -> None:
            HalfDriver.closed = True

    points = dict(SHUFFLER_PROTOCOLS._entry_points())
    points["half"] = metadata.EntryPoint("half", "half_shuffler:open", "tablectl.shufflers")
    monkeypatch.setattr(SHUFFLER_PROTOCOLS, "_points", points)
    monkeypatch.setitem(SHUFFLER_PROTOCOLS._loaded, "half", lambda url, **kw: HalfDriver())
    with pytest.raises(DriverUnavailable, match=r"shuffler protocol 'half' \(\?\) opened a "
                       r"HalfDriver, which lacks ShufflerDriver's methods"):
        open_shuffler("usb://1234:5678", protocol="half")
    assert HalfDriver.closed
