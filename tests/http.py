"""An HTTP GET as a probe makes it: the status and the body, an error status included."""
from __future__ import annotations

import urllib.error
import urllib.request


def get(url: str, timeout: float = 10.0) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()
