"""structlog configured once, in the entry point: JSON lines when not a tty, console otherwise.

Logs go to stderr so that `--json` event output on stdout stays machine-readable. Standard
library loggers (transitions, pyserial) are routed through the same processors. Every line
carries the table, shoe and round the service loop has bound (contextvars), and an exception's
traceback (structured in JSON, as text on a terminal). Events are named in plain lowercase
words ("shoe link lost"), with their details as fields.
"""
from __future__ import annotations

import logging
import sys

import structlog

_configured = False


def _shared() -> list:
    return [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]


def configure(level: str = "WARNING", json_logs: bool | None = None,
              path: str | None = None) -> None:
    """The log to stderr (JSON lines unless stderr is a terminal), or to the file `path`."""
    global _configured
    if json_logs is None:
        json_logs = not sys.stderr.isatty()
    shared = _shared()
    # tracebacks: a structured list in JSON lines; the console renderer prints them itself
    tracebacks = [structlog.processors.dict_tracebacks] if json_logs else []
    renderer = (structlog.processors.JSONRenderer() if json_logs
                else structlog.dev.ConsoleRenderer(colors=False))
    structlog.configure(
        processors=shared + [structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=shared, processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta, *tracebacks, renderer]))
    handler._tablectl = True            # type: ignore[attr-defined]
    root = logging.getLogger()
    if not _configured:
        root.addHandler(handler)
    root.setLevel(level.upper())
    logging.getLogger("transitions").setLevel(max(logging.WARNING, root.level))
    _configured = True
    if path:
        to_file(path)


def get_logger(name: str):
    return structlog.get_logger(name)


_file_given = False


def to_file(path: str) -> None:
    """The log to `path` (JSON lines, appended) instead of stderr, from now on."""
    global _file_given
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_shared(), processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            structlog.processors.dict_tracebacks, structlog.processors.JSONRenderer()]))
    root = logging.getLogger()
    for old in [h for h in root.handlers if getattr(h, "_tablectl", False)]:
        root.removeHandler(old)
        old.close()
    handler._tablectl = True            # type: ignore[attr-defined]
    root.addHandler(handler)
    _file_given = True


def to_file_given() -> bool:
    """Whether the log already goes to a file (--log-file, or `to_file`)."""
    return _file_given
