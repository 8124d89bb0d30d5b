"""The table PC's service: the systemd unit, the udev rules and the installed configuration, as
`tablectl install` writes them (checked by systemd's own verifier where it is installed)."""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from controller import cli
from controller.commands import install
from controller.settings.config import load_config

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"


def unit_settings(text: str) -> dict[str, dict[str, list[str]]]:
    """A unit file's sections → key → every value given (keys may repeat)."""
    out: dict[str, dict[str, list[str]]] = {}
    section = None
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            assert re.fullmatch(r"\[[A-Za-z]+\]", line), f"line {n}: {raw!r}"
            section = line[1:-1]
            out.setdefault(section, {})
            continue
        key, eq, value = line.partition("=")
        assert section and eq and re.fullmatch(r"[A-Za-z]+", key), f"line {n}: {raw!r}"
        out[section].setdefault(key, []).append(value)
    return out


UDEV_MATCH = {"SUBSYSTEM", "KERNEL", "ACTION", "DRIVER", "ATTR", "ATTRS", "ENV"}
UDEV_ASSIGN = {"SYMLINK", "GROUP", "MODE", "OWNER", "TAG", "ENV"}
UDEV_PAIR = re.compile(r'([A-Z]+)(\{[A-Za-z_]+\})?(==|!=|\+=|-=|:=|=)"([^"]*)"')


def udev_rules(text: str) -> list[dict]:
    """Each rule as {key: (op, value)}; every part must be KEY[{attr}]OP"value"."""
    rules = []
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        rule = {}
        for part in line.split(", "):
            m = UDEV_PAIR.fullmatch(part)
            assert m, f"line {n}: {part!r} is not KEY{{attr}}OP\"value\""
            key, attr, op, value = m.groups()
            matching = op in ("==", "!=")
            assert key in (UDEV_MATCH if matching else UDEV_ASSIGN), f"line {n}: {key}{op}"
            assert (attr is not None) == (key in ("ATTR", "ATTRS", "ENV")), f"line {n}: {part}"
            rule[key + (attr or "")] = (op, value)
        assert any(op in ("==", "!=") for op, _ in rule.values()), f"line {n}: matches nothing"
        assert any(op not in ("==", "!=") for op, _ in rule.values()), f"line {n}: does nothing"
        rules.append(rule)
    return rules


def test_the_unit_is_a_hardened_notify_service_of_its_own_user():
    s = unit_settings((DEPLOY / "tablectl.service").read_text())
    svc = s["Service"]
    assert svc["Type"] == ["notify"] and svc["WatchdogSec"] == ["30"]
    assert svc["ExecStart"] == [f"{install.SHIPPED_EXEC} run --config /etc/tablectl/table.toml"]
    assert svc["User"] == ["tablectl"] and svc["SupplementaryGroups"] == ["dialout"]
    assert svc["Restart"] == ["on-failure"] and svc["StateDirectory"] == ["tablectl"]
    # bad input (exit 2) is not restarted every 5 s: a restart cannot mend it
    assert svc["RestartPreventExitStatus"] == ["2"] and svc["SyslogLevelPrefix"] == ["yes"]
    assert svc["RuntimeDirectory"] == ["tablectl"]
    for key, value in (("ProtectSystem", "strict"), ("NoNewPrivileges", "yes"),
                       ("ProtectHome", "yes"), ("PrivateTmp", "yes"),
                       ("DevicePolicy", "closed"), ("CapabilityBoundingSet", "")):
        assert svc[key] == [value], key
    assert "char-ttyUSB rw" in svc["DeviceAllow"] and "char-usb_device rw" in svc["DeviceAllow"]
    assert s["Install"]["WantedBy"] == ["multi-user.target"]
    # what the installed configuration names lies where the unit lets the service write
    cfg = load_config(DEPLOY / "table.toml")
    assert cfg.shoe.url == "/dev/tablectl-shoe" and cfg.console.group == "tablectl"
    assert cfg.storage.journal.startswith("/var/lib/tablectl/")
    assert cfg.console.users_db.startswith("/var/lib/tablectl/")
    assert cfg.console.socket.startswith("/run/tablectl/")


def test_the_udev_rules_name_the_shoe_and_the_shuffler_by_their_ids():
    rules = udev_rules((DEPLOY / "99-tablectl.rules").read_text())
    named = {r["SYMLINK"][1]: r for r in rules if "SYMLINK" in r}
    assert set(named) == {"tablectl-shoe", "tablectl-shuffler", "tablectl-shuffler-usb"}
    for name in ("tablectl-shoe", "tablectl-shuffler"):
        r = named[name]
        assert {"ATTRS{idVendor}", "ATTRS{idProduct}", "ATTRS{serial}"} <= set(r)
        assert r["SYMLINK"][0] == "+=" and r["GROUP"] == ("=", "dialout")
        assert r["MODE"] == ("=", "0660")
    assert all(r.get("GROUP", ("=", "dialout"))[1] == "dialout" for r in rules)
    # ModemManager leaves every serial port alone (it would probe the shoe as a modem)
    tty = [r for r in rules if r.get("SUBSYSTEM") == ("==", "tty")]
    assert tty and all(r.get("ENV{ID_MM_DEVICE_IGNORE}") == ("=", "1") for r in tty)
    # install --shoe/--shuffler writes a device's own ids into its line
    text = install.render_rules((DEPLOY / "99-tablectl.rules").read_text(),
                                "0403:6015:DN0123AB", "10C4:EA70")
    named = {r["SYMLINK"][1]: r for r in udev_rules(text) if "SYMLINK" in r}
    assert (named["tablectl-shoe"]["ATTRS{idProduct}"][1],
            named["tablectl-shoe"]["ATTRS{serial}"][1]) == ("6015", "DN0123AB")
    assert named["tablectl-shuffler"]["ATTRS{idVendor}"][1] == "10c4"
    assert "ATTRS{serial}" not in named["tablectl-shuffler"]
    with pytest.raises(Exception, match="VID:PID"):
        install.render_rules(text, "ftdi", None)


def test_install_print_changes_nothing_and_install_root_writes_the_files(tmp_path, capsys):
    assert cli.main(["install", "--print", "--root", str(tmp_path)]) == 0
    shown = capsys.readouterr().out
    assert not any(tmp_path.iterdir())
    for rel in (install.UNIT, install.RULES, install.CONFIG):
        assert f"==> {tmp_path}/{rel}" in shown
    assert f"ExecStart={install.executable()} run --config /etc/tablectl/table.toml" in shown
    assert "systemctl enable tablectl.service" in shown and "--groups dialout" in shown
    assert cli.main(["install", "--root", str(tmp_path), "--shoe", "0403:6001:A1"]) == 0
    capsys.readouterr()
    unit = (tmp_path / install.UNIT).read_text()
    assert install.SHIPPED_EXEC not in unit and install.executable() in unit
    assert 'ATTRS{serial}=="A1"' in (tmp_path / install.RULES).read_text()
    (tmp_path / install.CONFIG).write_text("# the site's own\n")
    assert cli.main(["install", "--root", str(tmp_path)]) == 0
    assert "exists: kept" in capsys.readouterr().out
    assert (tmp_path / install.CONFIG).read_text() == "# the site's own\n"


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd is not installed")
def test_systemd_verifies_the_installed_unit(tmp_path):
    """The unit as installed (its ExecStart is this installation's tablectl, which must exist
    for systemd-analyze), and its exposure as systemd rates it."""
    assert cli.main(["install", "--root", str(tmp_path)]) == 0
    unit = tmp_path / install.UNIT
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    rated = subprocess.run(["systemd-analyze", "security", "--offline=yes", str(unit)],
                           capture_output=True, text=True, timeout=60)
    level = re.search(r"exposure level for tablectl.service: ([\d.]+)", rated.stdout)
    if level is not None:                       # older systemd: no offline rating
        assert float(level.group(1)) <= 3.0, rated.stdout[-2000:]


def test_install_makes_the_anchor_key_the_configuration_names(tmp_path, capsys):
    assert cli.main(["install", "--print", "--root", str(tmp_path)]) == 0
    shown = capsys.readouterr().out
    key = load_config(DEPLOY / "table.toml").storage.anchor_key_file
    assert key == "/var/lib/tablectl/anchor.key"
    assert shlex.join(install.key_command(key, install.executable())) in shown
    assert f"copy the anchor key {key} somewhere off this PC" in shown
    # a site's own configuration without a key: nothing made, and the install says so
    (tmp_path / install.CONFIG).parent.mkdir(parents=True)
    (tmp_path / install.CONFIG).write_text("[storage]\njournal = \"/var/lib/j.db\"\n")
    assert cli.main(["install", "--print", "--root", str(tmp_path)]) == 0
    shown = capsys.readouterr().out
    assert "anchor-key" not in shown.split("==> then, as root:")[1].split("note:")[0]
    assert "names no [storage] anchor_key_file: the journal's head is not signed" in shown


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("runuser") is None,
                    reason="runs the command as root, as tablectl install does")
def test_the_key_command_makes_a_key_once_readable_by_its_user_only(tmp_path, monkeypatch):
    from controller.journal.anchor import load_key
    monkeypatch.setattr(install, "USER", "root")
    key = tmp_path / "state" / "anchor.key"
    exec_path = f"{shlex.quote(sys.executable)} -m controller.cli"
    command = install.key_command(str(key), exec_path)
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert key.stat().st_mode & 0o777 == 0o600
    assert oct(key.parent.stat().st_mode & 0o777) == oct(0o750)
    first = load_key(str(key))
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout == ""        # there already: left as it is
    assert load_key(str(key)).key_id == first.key_id


def test_install_puts_exactly_the_lock_in_the_services_environment(tmp_path, capsys):
    from controller.settings.locations import lock_file
    exec_path, steps = install.environment(None, None)
    assert exec_path == install.executable()
    assert steps[-1][-7:] == ["install", "--require-hashes", "--no-deps", "--only-binary",
                              ":all:", "-r", str(lock_file())]
    wheel = tmp_path / "tablectl-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")
    exec_path, steps = install.environment(str(tmp_path / "venv"), str(wheel))
    assert exec_path == str(tmp_path / "venv" / "bin" / "tablectl")
    assert [s[1:3] for s in steps] == [["-m", "venv"], ["-m", "pip"], ["-m", "pip"]]
    assert steps[2][-1] == str(wheel) and "--no-deps" in steps[2]
    for bad in ((str(tmp_path / "venv"), None), (None, str(wheel)),
                (str(tmp_path / "venv"), str(tmp_path / "missing.whl"))):
        with pytest.raises(Exception, match="--wheel|--venv"):
            install.environment(*bad)
    # the service cannot see /tmp (PrivateTmp) nor /home (ProtectHome): said at once
    assert cli.main(["install", "--print", "--root", str(tmp_path / "r"), "--venv",
                     str(tmp_path / "venv"), "--wheel", str(wheel)]) == 0
    shown = capsys.readouterr().out
    assert f"ExecStart={tmp_path}/venv/bin/tablectl run" in shown
    assert "WARNING:" in shown and "PrivateTmp=yes" in shown
    assert "ProtectHome=yes" in install.hidden_from_service("/home/ann/venv/bin/tablectl")
    assert install.hidden_from_service("/opt/tablectl/.venv/bin/tablectl") is None
