"""A listening address as the settings and flags give it ([display] listen, [metrics] listen,
`--http`): checked when the configuration is read, so a bad one is one line before anything
starts."""
from __future__ import annotations

import ipaddress

from controller.errors import InputError

DEFAULT_HOST = "127.0.0.1"


def parse_listen(text: str, where: str = "[display] listen") -> tuple[str, int]:
    """"HOST:PORT", "[IPv6]:PORT", ":PORT" or "PORT" (the last two on loopback); port 0
    takes any free port (the URL is printed at start)."""
    raw = text.strip()
    host, colon, port_text = raw.rpartition(":")
    if not colon:
        host, port_text = "", raw
    host = host.strip("[]") or DEFAULT_HOST
    try:
        port = int(port_text)
    except ValueError:
        port = -1
    if not 0 <= port < 65536:
        raise InputError(f"{where} {text!r}: give HOST:PORT with a port from 0 to 65535, "
                         f"e.g. 127.0.0.1:8080")
    if host != "localhost":
        try:
            ipaddress.ip_address(host)
        except ValueError:
            raise InputError(f"{where} {text!r}: {host!r} is not an IP address; give e.g. "
                             f"127.0.0.1:8080 or 0.0.0.0:8080") from None
    return host, port
