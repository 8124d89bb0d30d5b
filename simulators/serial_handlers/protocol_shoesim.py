"""pyserial URL handler shoesim:// — a serial port over a simulated shoe, in this process.

    shoesim://NAME[?protocol=P]          the ShoeModel registered as NAME (simulators.registry);
                                         `protocol`, when given, must match the model's
    shoesim://?cards=AS,KD,…[&protocol=P][&cut=N][&fault=KIND@N]…[&auto=0|1]
                                         a throwaway model; with auto=1 (its default) the shoe
                                         deals a card whenever the reader finds nothing queued

read() returns as soon as any bytes are queued (at most one output segment, so a split frame
arrives in two reads), after `timeout`, or when another thread calls cancel_read() (as pyserial's
own ports do). A dropped link makes this handle fail like an unplugged
USB adapter; reopening succeeds once the model's link is back.
"""
from __future__ import annotations

import errno
import threading
import time
import urllib.parse
from typing import Any

from serial.serialutil import PortNotOpenError, SerialBase, SerialException

from simulators import registry
from simulators.shoe import ShoeModel, parse_fault

FORM = ('expected a string in the form "shoesim://NAME[?protocol=P]" or '
        '"shoesim://?cards=AS,KD[&protocol=P][&cut=N][&fault=KIND@N][&auto=0|1]"')
_OPTIONS = {"protocol", "cards", "cut", "fault", "auto"}


def model_from_url(url: str) -> tuple[ShoeModel, bool]:
    """The model a shoesim:// URL names and whether it deals by itself (auto)."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme.lower() != "shoesim":
        raise SerialException(f"not a shoesim:// URL ({url!r}); {FORM}")
    try:
        query = urllib.parse.parse_qs(parts.query, keep_blank_values=True, strict_parsing=False)
        unknown = sorted(set(query) - _OPTIONS)
        if unknown:
            raise ValueError(f"unknown option {unknown[0]!r}")
        protocol = query.get("protocol", [None])[-1]
        auto_text = query.get("auto", [None])[-1]
        if auto_text not in (None, "0", "1"):
            raise ValueError(f"auto must be 0 or 1, not {auto_text!r}")
        name = parts.netloc + parts.path.rstrip("/")
        if name:
            if "cards" in query or "cut" in query or "fault" in query:
                raise ValueError("cards/cut/fault describe a throwaway shoe: drop NAME")
            model = registry.get(name)
            if not isinstance(model, ShoeModel):
                raise ValueError(f"{name!r} is a {type(model).__name__}, not a shoe")
            if protocol is not None and protocol != model.protocol:
                raise ValueError(f"shoe {name!r} speaks {model.protocol}, not {protocol}")
            return model, auto_text == "1"
        if "cards" not in query:
            raise ValueError("give NAME or cards=…")
        cards = [c for c in query["cards"][-1].split(",") if c]
        cut = query.get("cut", [None])[-1]
        model = ShoeModel(cards, protocol=protocol or "beetek",
                          cut_position=None if cut is None else int(cut),
                          faults=[parse_fault(f) for f in query.get("fault", [])])
        return model, auto_text != "0"
    except KeyError as err:
        raise SerialException(errno.ENOENT, err.args[0]) from err
    except ValueError as err:
        raise SerialException(f"{err}; {FORM}") from err


class Serial(SerialBase):
    """A pyserial port whose far end is a ShoeModel."""

    is_open: bool           # SerialBase's, set in its __init__

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._model: ShoeModel | None = None
        self._auto = False
        self._generation = 0
        self._cancel = threading.Event()
        super().__init__(*args, **kwargs)

    def open(self) -> None:
        if self._port is None:
            raise SerialException("Port must be configured before it can be used.")
        if self.is_open:
            raise SerialException("Port is already open.")
        model, auto = model_from_url(self.portstr)
        if not model.connect():
            raise SerialException(errno.ENODEV, f"{self.portstr}: shoe link is down")
        self._model, self._auto = model, auto
        self._generation = model.link_generation
        self._reconfigure_port()
        self.is_open = True

    def close(self) -> None:
        self.is_open = False
        self._model = None

    def _reconfigure_port(self) -> None:
        if not isinstance(self._baudrate, int) or not 0 < self._baudrate < 2 ** 32:
            raise ValueError(f"invalid baudrate: {self._baudrate!r}")

    def _live_model(self) -> ShoeModel:
        if not self.is_open or self._model is None:
            raise PortNotOpenError()
        if self._model.link_generation != self._generation:
            raise SerialException(errno.EIO, "shoe disconnected (link dropped)")
        return self._model

    @property
    def in_waiting(self) -> int:
        model = self._model
        if model is None or not self.is_open or model.link_generation != self._generation:
            model = self._live_model()      # (which raises as it should)
        return model.in_waiting

    def news(self) -> tuple[int, float, bool] | None:
        """The shoe's `ShoeModel.news` (None once closed): a reader on a virtual clock skips
        a look that could not find anything new."""
        model = self._model
        return model.news() if model is not None and self.is_open else None

    def read(self, size: int = 1) -> bytes:
        model = self._model
        if model is None or not self.is_open or model.link_generation != self._generation:
            model = self._live_model()      # (which raises as it should)
        data = model.read(size)
        if data:
            return data                 # (nearly always: read after in_waiting said so)
        timeout = self._timeout
        deadline = None if timeout is None else time.monotonic() + timeout
        cancel = self._cancel
        while True:
            data = model.read(size)
            if data:
                return data
            if cancel.is_set():
                cancel.clear()      # this read is the one cancelled
                return b""
            if self._auto and model.has_more and model.link_up and not model.silent:
                model.pull()
                continue
            left = 1.0 if deadline is None else deadline - time.monotonic()
            if left <= 0:
                return b""
            model.wait_output(min(left, 0.05), cancel)
            model = self._live_model()

    def cancel_read(self) -> None:
        """From another thread: the read under way (or else the next one) returns now."""
        self._cancel.set()
        model = self._model
        if model is not None:
            model.interrupt()

    def write(self, data: bytes) -> int:
        return self._live_model().write(bytes(data))

    def reset_input_buffer(self) -> None:
        self._live_model().discard_output()

    def reset_output_buffer(self) -> None:
        self._live_model()      # nothing is buffered on the way to the model

    def _update_break_state(self) -> None:
        pass

    def _update_rts_state(self) -> None:
        pass

    def _update_dtr_state(self) -> None:
        pass

    @property
    def cts(self) -> bool:
        return True

    @property
    def dsr(self) -> bool:
        return True

    @property
    def ri(self) -> bool:
        return False

    @property
    def cd(self) -> bool:
        return True
