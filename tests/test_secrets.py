"""No secret leaves the process: each place a PIN passes is made to fail, with the PIN in the
failing frame's local variables and in the exception's own message, and stderr (and what the
console leaves on the screen) must not hold it. Each case is a process of its own, logging as
the product does when its stderr is not a terminal (JSON lines with tracebacks)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PIN = "pin-7316-sam"
NEW_PIN = "pin-9904-bob"

SETUP = """
import sys
from controller.access.accounts import AccountStore, ScryptParams
store = AccountStore(sys.argv[1], kdf=ScryptParams(n=2 ** 4, r=1, p=1))
if store.is_empty():
    store.bootstrap("mia", "manager-pin-1")
    store.add("sam", "supervisor", sys.argv[2], by="mia")
"""

CASES = {
    # the control API: a fault while a request with a PIN is handled (the request, with its
    # PIN, is a local of the failing frames), and one whose message holds the PIN
    "control API": """
        import json, socket, threading
        from controller.logsetup import configure
        configure("INFO", json_logs=True)
        from controller.access import roles
        from controller.access.server import ControlServer
        def broken(action, args):
            raise RuntimeError("the arguments could not be checked")
        roles.check_args = broken
        srv = ControlServer(sys.argv[3], store, lambda cmd: cmd.reply.set_result({})).start()
        for pin in (sys.argv[2], "wrong-" + sys.argv[2]):
            with socket.socket(socket.AF_UNIX) as s:
                s.connect(sys.argv[3])
                s.sendall((json.dumps({"user": "sam", "pin": pin, "action": "hold",
                                       "reason": "r"}) + "\\n").encode())
                print(s.makefile("rb").readline().decode().strip())
        srv.close()
    """,
    # the sign-in itself: scrypt fails, its message naming the PIN it was given
    "sign-in": """
        from controller.access import accounts
        def broken(secret, salt, params):
            raise RuntimeError(f"scrypt could not hash {secret!r}")
        accounts.derive = broken
        from controller.cli import main
        sys.exit(main(["users", "list", "--as", "sam", "--db", sys.argv[1]]))
    """,
    # `tablectl users`: storing a new PIN fails with both PINs about
    "users": """
        from controller.access.accounts import AccountStore
        def broken(self, secret):
            raise OSError(f"the disk refused the hash of {secret}")
        AccountStore._hash_columns = broken
        from controller.cli import main
        sys.exit(main(["users", "add", "bob", "--role", "dealer", "--as", "mia", "--db",
                       sys.argv[1]]))
    """,
    # the console: its client fails while a PIN typed into its sign-in is on its way
    "console client": """
        import asyncio
        from controller.logsetup import configure
        configure("INFO", json_logs=True)
        from controller.console.app import ConsoleApp
        from controller.console.client import ConsoleClient, Credentials
        def broken(path, payload, timeout=15.0):
            raise RuntimeError(f"the line broke while sending {dict(payload)}")
        app = ConsoleApp(ConsoleClient(sys.argv[3], requester=broken), user="sam",
                         refresh_s=30, credentials=Credentials("sam", sys.argv[2]))
        async def run():
            try:
                async with app.run_test() as pilot:
                    await pilot.pause(0.5)
            except Exception:
                pass          # the console ended, as it does on a fault of its own
        asyncio.run(run())
        print("\\n".join(str(r) for r in app._exit_renderables))      # left on the screen
    """,
}
#: what each case must have said about its failure (it did fail, and said so)
SAID = {"control API": "control request failed", "sign-in": "command failed",
        "users": "command failed", "console client": "console failed"}


@pytest.fixture
def short_dir():
    path = Path(tempfile.mkdtemp(prefix="sec", dir="/tmp"))     # AF_UNIX paths are short
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("case", CASES)
def test_no_pin_reaches_stderr_when_a_pin_handling_path_fails(case, short_dir):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TABLECTL_")}
    env.update(TABLECTL_PIN=PIN if case != "users" else "manager-pin-1",
               TABLECTL_NEW_PIN=NEW_PIN, TABLECTL_STORAGE_FSYNC="false")
    program = SETUP + textwrap.dedent(CASES[case])
    done = subprocess.run([sys.executable, "-c", program, str(short_dir / "users.db"), PIN,
                           str(short_dir / "c.sock")], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=60)
    shown = done.stdout + done.stderr
    assert SAID[case] in done.stderr, shown[-3000:]
    for secret in (PIN, NEW_PIN, "manager-pin-1"):
        assert secret not in shown, (case, secret, shown[-3000:])
    logged = [json.loads(x) for x in done.stderr.splitlines() if x.startswith("{")]
    failed = [x for x in logged if x.get("exception")]
    assert failed, done.stderr[-3000:]           # the traceback is there, without locals
    for line in failed:
        frames = [f for exc in line["exception"] for f in exc["frames"]]
        assert frames and all(not f.get("locals") for f in frames)


def test_secret_fields_and_registered_secrets_are_redacted_wherever_they_are():
    from controller.logsetup import REDACTED, redact, secret
    secret("zebra-4411")
    event = {"event": "failed zebra-4411", "pin": "1", "args": {"token": "abc", "n": 3},
             "detail": ["x", "said zebra-4411 twice"], "key_id": "visible", "new_pin": "q"}
    out = redact(None, "error", event)
    assert out == {"event": f"failed {REDACTED}", "pin": REDACTED,
                   "args": {"token": REDACTED, "n": 3}, "detail": ["x", f"said {REDACTED} twice"],
                   "key_id": "visible", "new_pin": REDACTED}


def test_lines_for_the_journal_carry_their_priority(tmp_path):
    """With stderr the journal (JOURNAL_STREAM names it), a warning is `<4>`, an error `<3>`,
    and the command's own one-line refusal `<3>`; on any other stderr, no prefix."""
    program = textwrap.dedent("""
        import os, sys
        st = os.fstat(2)
        os.environ["JOURNAL_STREAM"] = f"{st.st_dev}:{st.st_ino}" if sys.argv[1] == "yes" else "1:2"
        from controller.cli import main
        from controller.logsetup import get_logger
        main(["--log-level", "INFO", "recall", "--journal", "/nonexistent.db"])
        get_logger("t").warning("a warning")
        get_logger("t").error("an error")
    """)
    for journal in ("yes", "no"):
        with open(tmp_path / f"err-{journal}", "w") as err:
            subprocess.run([sys.executable, "-c", program, journal], stderr=err, cwd=ROOT,
                           timeout=30)
        lines = (tmp_path / f"err-{journal}").read_text().splitlines()
        if journal == "yes":
            assert lines[0].startswith("<3>tablectl recall: journal /nonexistent.db")
            assert lines[1].startswith("<4>{") and lines[2].startswith("<3>{"), lines
        else:
            assert not any(x.startswith("<") for x in lines), lines
