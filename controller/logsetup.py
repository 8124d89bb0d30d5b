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


def configure(level: str = "WARNING", json_logs: bool | None = None) -> None:
    global _configured
    if json_logs is None:
        json_logs = not sys.stderr.isatty()
    shared = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]
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
    root = logging.getLogger()
    if not _configured:
        root.addHandler(handler)
    root.setLevel(level.upper())
    logging.getLogger("transitions").setLevel(max(logging.WARNING, root.level))
    _configured = True


def get_logger(name: str):
    return structlog.get_logger(name)
