"""`tablectl install`: the table controller as a service of this PC, started at boot.

Installs the locked release into the service's virtual environment (the lock file shipped with
the release, requirements/table-pc.txt: every distribution pinned with its hashes, installed
with `pip --require-hashes --no-deps`, so two table PCs installed from one release run the same
files and report the same software identity). The environment is the one this `tablectl`
runs in, or `--venv DIR` made new with `--wheel FILE` (the release's wheel) installed in it.
Then the systemd unit (deploy/tablectl.service, with that environment's `tablectl` in its
ExecStart), the udev rules (deploy/99-tablectl.rules: stable /dev/tablectl-shoe and
/dev/tablectl-shuffler names by vendor, product and serial, group dialout, mode 0660, and
ModemManager told to leave the ports alone) and, when none is there, the table's configuration
(deploy/table.toml as /etc/tablectl/table.toml). Then creates the service's user (tablectl, in
dialout) and, when the configuration names one that is not there yet, the key that signs the
journal's head (as that user, mode 0600), reloads systemd and udev and enables the service; it
does not start it. `--print` shows every file and command and changes nothing; `--root DIR`
writes the files under DIR and prints the commands left to run.
Exit 0 done, 2 bad input or not root.
"""
from __future__ import annotations

from typing import Any
import argparse
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from controller.errors import InputError

UNIT = "etc/systemd/system/tablectl.service"
RULES = "etc/udev/rules.d/99-tablectl.rules"
CONFIG = "etc/tablectl/table.toml"
SHIPPED_EXEC = "/opt/tablectl/.venv/bin/tablectl"
USER = "tablectl"
_IDS = re.compile(r"([0-9a-fA-F]{4}):([0-9a-fA-F]{4})(?::([\x21-\x7e]+))?")


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("install", help="install the table controller as a systemd "
                              "service with its udev rules (--print: show, change nothing)",
                              description=__doc__.split("\n\n")[0])
    p.add_argument("--print", action="store_true", dest="show",
                   help="show the files and commands; change nothing")
    p.add_argument("--root", metavar="DIR", default="/",
                   help="write the files under DIR instead of / (the commands are printed)")
    p.add_argument("--shoe", metavar="VID:PID[:SERIAL]",
                   help="the shoe's USB ids for /dev/tablectl-shoe (udevadm info -a)")
    p.add_argument("--shuffler", metavar="VID:PID[:SERIAL]",
                   help="a serial shuffler's USB ids for /dev/tablectl-shuffler")
    p.add_argument("--venv", metavar="DIR",
                   help="make the service's environment here (with --wheel) instead of using "
                   "the one this tablectl runs in")
    p.add_argument("--wheel", metavar="FILE",
                   help="the release's wheel (dist/tablectl-*.whl) to install into --venv")
    p.set_defaults(func=run)


@dataclass
class Plan:
    environment: list[list[str]]             # the service's venv: made, the lock installed
    files: list[tuple[str, str, int]]        # (path under the root, text, mode)
    commands: list[list[str]]
    notes: list[str]


def deploy_dir() -> Path:
    from controller.settings.locations import shipped
    d = shipped("deploy")
    if not (d / "tablectl.service").is_file():
        raise InputError(f"{d}: the release's deploy files are missing; reinstall tablectl")
    return d


def executable() -> str:
    """This installation's `tablectl` (the one that runs this command)."""
    script = Path(sys.executable).parent / "tablectl"
    if script.is_file() and os.access(script, os.X_OK):
        return str(script)
    return f"{sys.executable} -m controller.cli"


def environment(venv: str | None, wheel: str | None) -> tuple[str, list[list[str]]]:
    """(the service's tablectl, the commands that put the locked release in its venv).

    Without --venv: the environment this tablectl runs in gets exactly the lock (anything it
    pins at another version is replaced). With --venv DIR: a new environment there, the lock,
    then the release's wheel, with no other resolution."""
    from controller.settings.locations import lock_file
    lock = lock_file()
    if not lock.is_file():
        raise InputError(f"{lock}: the release's lock file is missing; reinstall tablectl")
    if venv is None:
        if wheel is not None:
            raise InputError("--wheel goes with --venv DIR (the new environment to put it in)")
        if sys.prefix == sys.base_prefix:
            raise InputError(f"{sys.executable} is not a virtual environment: give --venv DIR "
                             f"--wheel dist/tablectl-*.whl for the service's own")
        python = sys.executable
        steps = [] if importlib.util.find_spec("pip") else [[python, "-m", "ensurepip"]]
        steps.append([python, "-m", "pip", "install", "--require-hashes", "--no-deps",
                      "--only-binary", ":all:", "-r", str(lock)])
        return executable(), steps
    if wheel is None:
        raise InputError(f"--venv {venv}: give --wheel dist/tablectl-*.whl, the release to "
                         f"install there")
    wheel_path = Path(wheel).resolve()
    if wheel_path.suffix != ".whl" or not wheel_path.is_file():
        raise InputError(f"--wheel {wheel}: no such wheel (build it with make dist)")
    venv = os.path.abspath(venv)
    python = os.path.join(venv, "bin", "python")
    return os.path.join(venv, "bin", "tablectl"), [
        [sys.executable, "-m", "venv", venv],
        [python, "-m", "pip", "install", "--require-hashes", "--no-deps", "--only-binary",
         ":all:", "-r", str(lock)],
        [python, "-m", "pip", "install", "--no-deps", str(wheel_path)],
    ]


#: where the unit's hardening hides a path from the service (ExecStart must not lie there)
HIDDEN = (("/tmp/", "PrivateTmp=yes"), ("/var/tmp/", "PrivateTmp=yes"),
          ("/home/", "ProtectHome=yes"), ("/root/", "ProtectHome=yes"),
          ("/run/user/", "ProtectHome=yes"))


def hidden_from_service(path: str) -> str | None:
    """Why the service cannot see `path`, or None."""
    real = os.path.realpath(path)
    for prefix, setting in HIDDEN:
        if path.startswith(prefix) or real.startswith(prefix):
            return f"{path} lies under {prefix.rstrip('/')}, which the service cannot see " \
                   f"({setting} in its unit): install it elsewhere, e.g. --venv " \
                   f"/opt/tablectl/.venv"
    return None


def render_unit(text: str, exec_path: str) -> str:
    return text.replace(SHIPPED_EXEC, exec_path)


def render_rules(text: str, shoe: str | None, shuffler: str | None) -> str:
    for ids, name in ((shoe, "tablectl-shoe"), (shuffler, "tablectl-shuffler")):
        if not ids:
            continue
        m = _IDS.fullmatch(ids)
        if m is None:
            raise InputError(f"{ids!r}: give the USB ids as VID:PID or VID:PID:SERIAL (hex, "
                             f"e.g. 0403:6001:A10KXYZ1)")
        vid, pid, serial = m[1].lower(), m[2].lower(), m[3]
        lines = []
        for line in text.splitlines():
            if f'SYMLINK+="{name}"' in line and line.startswith('SUBSYSTEM=="tty"'):
                line = re.sub(r'ATTRS\{idVendor\}=="[^"]*"', f'ATTRS{{idVendor}}=="{vid}"', line)
                line = re.sub(r'ATTRS\{idProduct\}=="[^"]*"', f'ATTRS{{idProduct}}=="{pid}"',
                              line)
                if serial:
                    line = re.sub(r'ATTRS\{serial\}=="[^"]*"', f'ATTRS{{serial}}=="{serial}"',
                                  line)
                else:
                    line = re.sub(r'ATTRS\{serial\}=="[^"]*", ', "", line)
            lines.append(line)
        text = "\n".join(lines) + "\n"
    return text


def anchor_key_of(config_text: str) -> str:
    """The anchor key file a configuration names ("" for none, or a file that cannot be read:
    `tablectl run` says what is wrong with it)."""
    import tomllib
    try:
        storage = tomllib.loads(config_text).get("storage", {})
    except tomllib.TOMLDecodeError:
        return ""
    key = storage.get("anchor_key_file", "") if isinstance(storage, dict) else ""
    return key if isinstance(key, str) else ""


def key_command(key: str, exec_path: str) -> list[str]:
    """Make the anchor key as the service's user, unless it is there (never overwritten)."""
    folder = os.path.dirname(key) or "."
    make = f"runuser -u {USER} -- {exec_path} anchor-key {shlex.quote(key)}"
    return ["sh", "-c", f"test -e {shlex.quote(key)} || {{ install -d -o {USER} -g {USER} "
                        f"-m 0750 {shlex.quote(folder)} && {make}; }}"]


def plan(root: str, shoe: str | None = None, shuffler: str | None = None,
         venv: str | None = None, wheel: str | None = None) -> Plan:
    d = deploy_dir()
    exec_path, env_steps = environment(venv, wheel)
    files = [(UNIT, render_unit((d / "tablectl.service").read_text(), exec_path), 0o644),
             (RULES, render_rules((d / "99-tablectl.rules").read_text(), shoe, shuffler), 0o644)]
    notes = []
    config = Path(root) / CONFIG
    if config.exists():
        notes.append(f"{config} exists: kept as it is")
        config_text = config.read_text(errors="replace")
    else:
        config_text = (d / "table.toml").read_text()
        files.append((CONFIG, config_text, 0o644))
    key = anchor_key_of(config_text)
    if key:
        notes.append(f"copy the anchor key {key} somewhere off this PC once it is made: "
                     f"tablectl verify-journal --key checks the journal's anchors with it")
    else:
        notes.append(f"/{CONFIG} names no [storage] anchor_key_file: the journal's head is not "
                     f"signed, so a cut tail would go unnoticed; see tablectl anchor-key")
    hidden = hidden_from_service(exec_path.split(" ", 1)[0])
    if hidden:
        notes.insert(0, f"WARNING: {hidden}")
    if not (shoe and shuffler):
        notes.append(f"the udev rules name example devices where --shoe/--shuffler were not "
                     f"given: edit /{RULES} with your devices' ids")
    commands = [
        ["sh", "-c", f"getent passwd {USER} >/dev/null && usermod -a -G dialout {USER} || "
                     f"useradd --system --user-group --groups dialout --home-dir "
                     f"/var/lib/{USER} --no-create-home --shell /usr/sbin/nologin {USER}"],
        *([key_command(key, exec_path)] if key else []),
        ["systemctl", "daemon-reload"],
        ["udevadm", "control", "--reload-rules"],
        ["udevadm", "trigger", "--subsystem-match=tty", "--subsystem-match=usb"],
        ["systemctl", "enable", "tablectl.service"],
    ]
    return Plan(env_steps, files, commands, notes)


def run(args: argparse.Namespace) -> int:
    p = plan(args.root, args.shoe, args.shuffler, args.venv, args.wheel)
    real = os.path.abspath(args.root) == "/"
    if args.show:
        print("==> the service's environment: the locked release")
        for cmd in p.environment:
            print("    " + shlex.join(cmd))
        print()
        for rel, text, mode in p.files:
            print(f"==> {os.path.join(args.root, rel)} (mode {mode:04o})")
            print(text.rstrip("\n"))
            print()
        print("==> then, as root:")
        for cmd in p.commands:
            print("    " + shlex.join(cmd))
        for note in p.notes:
            print(f"note: {note}")
        return 0
    if real and os.geteuid() != 0:
        raise InputError("installing a service needs root: sudo tablectl install (or --print "
                         "to see what it would do, --root DIR to write the files elsewhere)")
    if real:
        for cmd in p.environment:
            print("+ " + shlex.join(cmd), flush=True)
            if subprocess.run(cmd).returncode != 0:
                print(f"tablectl install: {shlex.join(cmd)} failed; nothing else was changed: "
                      f"fix the cause and run it again", file=sys.stderr)
                return 1
    for rel, text, mode in p.files:
        path = Path(args.root) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".new")
        tmp.write_text(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
        print(f"installed {path}")
    for note in p.notes:
        print(f"note: {note}")
    if not real:
        print("the rest, on the target system as root:")
        for cmd in p.environment + p.commands:
            print("    " + shlex.join(cmd))
        return 0
    for cmd in p.commands:
        print("+ " + shlex.join(cmd))
        done = subprocess.run(cmd)
        if done.returncode != 0:
            print(f"tablectl install: {shlex.join(cmd)} failed ({done.returncode}); the files "
                  f"are in place: fix the cause and run it again", file=sys.stderr)
            return 1
    print("tablectl is installed and enabled: sudo systemctl start tablectl; see it with "
          "systemctl status tablectl, journalctl -u tablectl and "
          "tablectl status --config /etc/tablectl/table.toml")
    return 0
