"""The release as a table PC gets it: the wheel built from this tree, installed with no
checkout around from the lock file into fresh virtual environments, and run from `/`.

One wheel and one environment serve every check of the module (built once per test run, also
across xdist workers); the second environment is made the way `tablectl install --venv`
makes the service's, with pip, from the same lock.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest

from controller.release import software

ROOT = Path(__file__).resolve().parents[1]
LOCK = ROOT / "requirements" / "table-pc.txt"
UV = shutil.which("uv", path=str(Path(sys.executable).parent)) or shutil.which("uv")
pytestmark = pytest.mark.skipif(UV is None, reason="uv is not installed (pip install uv)")
# building the wheel and installing it into fresh environments takes a minute: the slow run
slow = pytest.mark.slow


def clean_env(home: Path) -> dict[str, str]:
    """What a shell on the table PC has: no PYTHONPATH, no checkout, nothing of the tests'."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8",
           "TABLECTL_STORAGE_FSYNC": "false"}
    return env


@contextlib.contextmanager
def _locked(path: Path):
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="session")
def release(tmp_path_factory) -> dict:
    """{wheel, venv, python, tablectl}: built and installed once for the whole run."""
    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent                  # one folder for every worker of this run
    folder = shared / f"release-{software.release_digest()[:16]}"
    with _locked(shared / "release.lock"):
        done = folder / "done.json"
        if not done.is_file():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            dist = folder / "dist"
            subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                            "--no-build-isolation", "-w", str(dist), str(ROOT)], check=True,
                           capture_output=True, timeout=300)
            wheel = next(dist.glob("tablectl-*.whl"))
            venv = folder / "venv"
            subprocess.run([UV, "venv", "-q", "--python", sys.executable, str(venv)],
                           check=True, timeout=120)
            py = str(venv / "bin" / "python")
            subprocess.run([UV, "pip", "install", "-q", "--python", py, "--require-hashes",
                            "-r", str(LOCK)], check=True, timeout=600)
            subprocess.run([UV, "pip", "install", "-q", "--python", py, "--no-deps",
                            str(wheel)], check=True, timeout=120)
            done.write_text(json.dumps({"wheel": str(wheel), "venv": str(venv)}))
        info = json.loads(done.read_text())
    home = folder / "home"
    home.mkdir(exist_ok=True)
    return {**info, "tablectl": str(Path(info["venv"]) / "bin" / "tablectl"), "home": home}


def tablectl(release, *args, env=None, timeout=120, **kw):
    return subprocess.run([release["tablectl"], *args], cwd="/", capture_output=True,
                          text=True, timeout=timeout, env=env or clean_env(release["home"]),
                          **kw)


@slow
def test_the_wheel_carries_every_shipped_file_and_its_identity_is_the_checkouts(release):
    import zipfile
    names = set(zipfile.ZipFile(release["wheel"]).namelist())
    for label, _ in software.release_files():
        assert label in names, f"{label} is not in the wheel"
    # typed packages (PEP 561): a plugin's or a site's type checker reads our annotations
    assert {"controller/py.typed", "drivers/py.typed", "simulators/py.typed"} <= names
    ident = json.loads(tablectl(release, "software-id", "--json").stdout)
    # the installed release is byte for byte this tree: the same digest over the same files
    assert ident["release_sha256"] == software.release_digest()
    assert ident["files"] == len(software.release_files())
    assert ident["dependencies"] == "as locked" and ident["locked"] > 10
    # what a table PC runs, not what a report or a test needs
    site = Path(release["venv"]) / "lib"
    assert not list(site.glob("python*/site-packages/matplotlib"))
    assert not list(site.glob("python*/site-packages/pytest"))


@slow
def test_every_command_works_from_the_root_folder_of_an_installed_wheel(release, tmp_path):
    journal = tmp_path / "j.db"
    done = tablectl(release, "simulate", "--profile", "macau", "--seed", "1", "--json",
                    "--journal", str(journal))
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    ended = [e for e in events if e["event"] == "shoe_ended"]
    assert ended and ended[0]["reason"] == "cut_card"
    assert len([e for e in events if e["event"] == "round_result"]) == ended[0]["rounds"] > 60
    odds = tablectl(release, "odds", "--profile", "macau", "--json")
    assert odds.returncode == 0, odds.stderr
    assert "banker" in odds.stdout
    # no report extra on a table PC: one line saying what to install
    report = tablectl(release, "report", "--journal", str(journal), "--output",
                      str(tmp_path / "r.pdf"))
    assert report.returncode == 2 and report.stderr.count("\n") == 1
    assert "pip install 'tablectl[report]'" in report.stderr
    printed = tablectl(release, "install", "--print")
    assert printed.returncode == 0, printed.stderr
    lock = next(Path(release["venv"]).glob("lib/python*/site-packages/controller/shipped/"
                                           "requirements/table-pc.txt"))
    assert f"--require-hashes --no-deps --only-binary :all: -r {lock}" in printed.stdout
    assert f"ExecStart={release['venv']}/bin/tablectl run --config /etc/tablectl/" \
           f"table.toml" in printed.stdout
    assert "PrivateTmp=yes" in printed.stdout and "WARNING:" in printed.stdout
    assert "ID_MM_DEVICE_IGNORE" in printed.stdout


@slow
def test_the_live_table_serves_its_page_and_metrics_from_an_installed_wheel(release,
                                                                            tmp_path):
    env = {**clean_env(release["home"]), "TABLECTL_STORAGE_JOURNAL": str(tmp_path / "j.db"),
           "TABLECTL_CONSOLE_SOCKET": str(tmp_path / "t.sock"),
           "TABLECTL_CONSOLE_USERS_DB": str(tmp_path / "users.db")}
    proc = subprocess.Popen([release["tablectl"], "run", "--shoes", "1", "--pace", "0",
                             "--http", "127.0.0.1:0"], cwd="/", env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    got: dict[str, str] = {}
    try:
        for line in proc.stderr:
            m = re.search(r"web display at (http://\S+)", line)
            if m:
                url = m.group(1)
                # the shoe deals at full speed: ask for both at once, as it starts
                fetch = [threading.Thread(target=lambda p=p: got.update(
                    {p: urllib.request.urlopen(url + p, timeout=10).read().decode()}))
                    for p in ("", "metrics")]
                for t in fetch:
                    t.start()
                for t in fetch:
                    t.join(timeout=15)
                break
        rest, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "<html" in got.get("", "").lower()
    from prometheus_client.parser import text_string_to_metric_families
    names = {f.name for f in text_string_to_metric_families(got.get("metrics", ""))}
    assert {"tablectl_cards_read", "tablectl_journal_write_seconds"} <= names
    assert "shoe 1 ended" in rest.lower()


@slow
def test_two_installs_of_the_release_from_the_lock_have_one_identity(release, tmp_path):
    """The second made with pip by the commands `tablectl install --venv --wheel` runs (the
    environment itself made by uv, with pip in it: the same as `python -m venv`, faster); then
    a dependency changed on disk is no longer the approved software."""
    from controller.commands import install
    venv = tmp_path / "service-venv"
    steps = install.environment(str(venv), release["wheel"])[1]
    assert steps[0] == [sys.executable, "-m", "venv", str(venv)]
    subprocess.run([UV, "venv", "-q", "--seed", "--python", sys.executable, str(venv)],
                   check=True, timeout=120)
    for cmd in steps[1:]:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (cmd, done.stderr[-2000:])
    first = json.loads(tablectl(release, "software-id", "--json").stdout)
    other = {**release, "tablectl": str(venv / "bin" / "tablectl")}
    second = json.loads(tablectl(other, "software-id", "--json").stdout)
    for key in ("release_sha256", "dependencies_sha256", "software_sha256", "dependencies"):
        assert first[key] == second[key], key
    patched = next(venv.glob("lib/python*/site-packages/transitions/core.py"))
    patched.write_text(patched.read_text() + "\n# changed on the table PC\n")
    third = json.loads(tablectl(other, "software-id", "--json").stdout)
    assert third["software_sha256"] != first["software_sha256"]
    assert third["dependencies"].startswith("not as locked: transitions==")


def test_the_lock_pins_every_dependency_within_its_range_with_hashes():
    import tomllib

    from packaging.requirements import Requirement

    from controller.release.lockfile import normalise, read_lock
    pinned = {e.name: e for e in read_lock(LOCK)}
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    for text in deps:
        req = Requirement(text)
        entry = pinned.get(normalise(req.name))
        assert entry is not None, f"{req.name} is not in {LOCK.name}: make lock"
        assert req.specifier.contains(entry.version), f"{req} but {entry.version} locked"
        assert entry.hashes
    # nothing of an extra (the report's matplotlib, the test tools) is on a table PC
    assert not {"matplotlib", "numpy", "pytest", "selenium"} & set(pinned)
