"""Client side of the control API, and where the console settings come from.

`request(socket_path, payload, timeout)` sends one request line and returns the response object.
A missing or silent controller raises ControllerUnavailable, one line naming the socket path.

Settings (`console_setting`): command-line option > environment > [console] in
the configuration (--config, $TABLECTL_CONFIG, /etc/tablectl/table.toml, the shipped one) >
built-in default. Relative paths are taken from the current directory.
"""
from __future__ import annotations

import json
import os
import socket
import tomllib
import uuid
from typing import Any, Mapping

from controller.errors import InputError
from controller.logsetup import secret

#: [console] key → (environment variable, default)
CONSOLE_DEFAULTS: Mapping[str, tuple[str, str]] = {
    "socket": ("TABLECTL_CONSOLE_SOCKET", "var/tablectl.sock"),
    "users_db": ("TABLECTL_CONSOLE_USERS_DB", "var/users.db"),
    "group": ("TABLECTL_CONSOLE_GROUP", ""),
}
MAX_RESPONSE = 16 * 1024 * 1024


class ControllerUnavailable(InputError):
    """No controller answers on the control socket."""


def console_setting(key: str, given: str | None = None,
                    config_path: str | os.PathLike[str] | None = None) -> str:
    """The value of [console] `key`: `given`, else the environment, else the file, else default."""
    from controller.settings.config import check_environment, config_path as named_config
    check_environment()             # a mistyped TABLECTL_ variable is refused, as by run
    env, default = CONSOLE_DEFAULTS[key]
    if given:
        return given
    if os.environ.get(env):
        return os.environ[env]
    # a file named by --config or TABLECTL_CONFIG must exist; the default may be missing
    path, _ = named_config(config_path)
    if not path.exists():
        return default
    try:
        with open(path, encoding="utf-8-sig") as fh:       # a BOM is harmless
            console = tomllib.loads(fh.read()).get("console", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise InputError(f"{path}: cannot read config ({err}); fix the file") from err
    value = console.get(key, default) if isinstance(console, dict) else default
    if not isinstance(value, str):
        raise InputError(f"{path}: console.{key}: expected a string, got {value!r}; quote it")
    return value


def request(socket_path: str | os.PathLike[str], payload: Mapping[str, Any],
            timeout: float = 15.0) -> dict[str, Any]:
    """Send one request and return the controller's response object."""
    path = str(socket_path)
    message = dict(payload)
    for key in ("pin", "token"):
        secret(message.get(key))                # never in a log line of this process
    message.setdefault("id", uuid.uuid4().hex[:12])
    try:
        line = (json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8")
    except UnicodeEncodeError:
        # text from a terminal or a file that is not UTF-8 (the shell hands such bytes on as
        # lone surrogates): the controller would refuse it; say which field, not the bytes
        field = next((k for k, v in message.items() if k not in ("pin", "token")
                      and not _utf8(v)), "the PIN")
        raise InputError(f"{field} is not UTF-8 text (a byte the terminal or file sent is not "
                         "UTF-8); type it again in UTF-8") from None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        try:
            sock.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            raise ControllerUnavailable(f"no controller listening on {path}; start "
                                        "`tablectl run` or give --socket") from None
        except PermissionError:
            raise ControllerUnavailable(f"no permission to use {path}; join the console "
                                        "group of the controller") from None
        except OSError as err:
            raise ControllerUnavailable(f"cannot reach the controller on {path} "
                                        f"({err.strerror or err})") from None
        try:
            sock.sendall(line)
            reply = _read_line(sock)
        except TimeoutError:
            raise ControllerUnavailable(f"no answer from the controller on {path} within "
                                        f"{timeout:g} s") from None
        except OSError as err:
            raise ControllerUnavailable(f"the controller on {path} dropped the connection "
                                        f"({err.strerror or err})") from None
    finally:
        sock.close()
    if not reply:
        raise ControllerUnavailable(f"the controller on {path} closed the connection "
                                    "without an answer")
    try:
        response = json.loads(reply.decode("utf-8"))
    except ValueError as err:
        raise ControllerUnavailable(f"the controller on {path} answered something that is not "
                                    f"JSON ({err})") from None
    if not isinstance(response, dict) or "ok" not in response:
        raise ControllerUnavailable(f"the controller on {path} answered without 'ok'")
    return response


def _utf8(value: Any) -> bool:
    """Whether `value` (text, or lists and objects of it) can be written as UTF-8."""
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _read_line(sock: socket.socket) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if b"\n" in chunk or size > MAX_RESPONSE:
            break
    return b"".join(chunks).split(b"\n", 1)[0]
