"""structlog configured once, in the entry point: JSON lines when not a tty, console otherwise.

Logs go to stderr so that `--json` event output on stdout stays machine-readable. Standard
library loggers (transitions, pyserial) are routed through the same processors. Every line
carries the table, shoe and round the service loop has bound (contextvars), and an exception's
traceback (structured in JSON, as text on a terminal). Events are named in plain lowercase
words ("shoe link lost"), with their details as fields.

No secret leaves the process in a log line:
- tracebacks never carry local variables (a frame's locals may hold a PIN);
- one processor, `redact`, runs last before rendering, over every field (nested ones and the
  rendered traceback included): the value of a field named for a secret (pin, token, password,
  key, …) is replaced, and so is every occurrence of a secret the process was handed (each PIN
  or token read is registered with `secret()` where it enters: the control socket, a prompt,
  the environment), wherever it appears, an exception's message included.

When stderr is the journal (systemd sets JOURNAL_STREAM to its device and inode), each line
starts with its syslog priority, `<3>` for an error, `<4>` a warning, `<6>` information, so
journald files it at its level (the unit sets SyslogLevelPrefix=yes).

With `--log-file FILE`, or `run` by itself when its readable lines and stderr share one
stream, the log goes to a file instead: JSON lines, redacted and without locals alike.
"""
from __future__ import annotations

import collections
import logging
import os
import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any, Mapping, MutableMapping


def _import_structlog() -> Any:
    """structlog without its optional rich (pretty tracebacks and reprs, with pygments, ~5 MB
    resident): the table logs plain tracebacks and JSON, so rich would only take memory on
    the table PC. rich stays importable afterwards for whatever else wants it."""
    if "structlog" in sys.modules or "rich" in sys.modules:
        import structlog as already
        return already
    sys.modules["rich"] = None      # type: ignore[assignment]  # import rich → ImportError
    try:
        import structlog as imported
    finally:
        del sys.modules["rich"]
    return imported


if TYPE_CHECKING:
    import structlog
else:
    structlog = _import_structlog()

_configured = False

REDACTED = "[redacted]"
#: fields whose value is a secret, whatever it is
SECRET_FIELDS = frozenset({"pin", "new_pin", "pins", "secret", "secrets", "password", "passwd",
                           "token", "view_token", "key", "secret_hash", "salt", "authorization"})
_SECRET_SUFFIXES = ("_pin", "_token", "_secret", "_password", "_passwd")
#: the shortest text registered as a secret (shorter strings would blank ordinary words)
MIN_SECRET = 4
_KEEP = 256                 # secrets remembered at once (the newest)
_secrets: collections.OrderedDict[str, None] = collections.OrderedDict()
_secrets_lock = threading.Lock()
_longest_first: tuple[str, ...] = ()       # what scrub looks for (replaced, never mutated)

#: syslog priorities of the log levels (sd-daemon(3): <N> at the start of a line)
PRIORITY = {"debug": 7, "info": 6, "warning": 4, "warn": 4, "error": 3, "exception": 3,
            "critical": 2}


def secret(value: Any) -> Any:
    """Register `value` (a PIN, a token) as a secret: no log line will show it. Returns it."""
    global _longest_first
    if isinstance(value, str) and len(value) >= MIN_SECRET:
        with _secrets_lock:
            known = value in _secrets
            _secrets[value] = None
            _secrets.move_to_end(value)
            while len(_secrets) > _KEEP:
                _secrets.popitem(last=False)
                known = False
            if not known:
                _longest_first = tuple(sorted(_secrets, key=len, reverse=True))
    return value


def _is_secret_field(name: object) -> bool:
    if not isinstance(name, str):
        return False
    low = name.lower()
    return low in SECRET_FIELDS or low.endswith(_SECRET_SUFFIXES)


def scrub(value: Any, depth: int = 0) -> Any:
    """`value` with every secret field's value and every registered secret replaced."""
    if depth > 20:
        return REDACTED
    if isinstance(value, str):
        for known in _longest_first:
            if known in value:
                value = value.replace(known, REDACTED)
        return value
    if isinstance(value, dict):
        return {k: REDACTED if _is_secret_field(k) and v not in (None, "") else
                scrub(v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(scrub(v, depth + 1) for v in value)
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    return scrub(repr(value), depth + 1)      # an object's repr could hold a secret too


def redact(logger: Any, method: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
    """The one processor that keeps secrets out of every log line (see the module's note)."""
    return scrub(event)


def journal_stream() -> bool:
    """Whether stderr is systemd's journal stream (JOURNAL_STREAM=device:inode of it)."""
    spec = os.environ.get("JOURNAL_STREAM", "")
    dev, _, ino = spec.partition(":")
    if not (dev.isdigit() and ino.isdigit()):
        return False
    try:
        st = os.fstat(sys.stderr.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (st.st_dev, st.st_ino) == (int(dev), int(ino))


def prefix(level: str | int) -> str:
    """The `<N>` a line for the journal starts with ("" when stderr is not the journal)."""
    if not journal_stream():
        return ""
    if isinstance(level, int):
        level = logging.getLevelName(level).lower()
    return f"<{PRIORITY.get(str(level).lower(), 6)}>"


class _Formatter(structlog.stdlib.ProcessorFormatter):
    """Each line with its syslog priority first when stderr is the journal."""

    def __init__(self, *args: Any, journald: bool = False, **kw: Any):
        super().__init__(*args, **kw)
        self.journald = journald

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        if not self.journald:
            return line
        mark = f"<{PRIORITY.get(record.levelname.lower(), 6)}>"
        return mark + line.replace("\n", "\n" + mark)


def _shared() -> list:
    return [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        structlog.processors.StackInfoRenderer(),
    ]


def _json_tracebacks() -> Any:
    """Tracebacks as a structured list, without any frame's local variables (a frame's locals
    may hold a PIN)."""
    from structlog.tracebacks import ExceptionDictTransformer
    return structlog.processors.ExceptionRenderer(ExceptionDictTransformer(show_locals=False))


def configure(level: str = "WARNING", json_logs: bool | None = None,
              path: str | None = None) -> None:
    """The log to stderr (JSON lines unless stderr is a terminal), or to the file `path`."""
    global _configured
    if json_logs is None:
        json_logs = not sys.stderr.isatty()
    shared = _shared()
    # tracebacks without any frame's local variables: structured in JSON lines, as plain text
    # on a terminal; then the secrets are taken out of everything, the traceback included
    tracebacks = _json_tracebacks() if json_logs else structlog.processors.format_exc_info
    renderer = (structlog.processors.JSONRenderer() if json_logs
                else structlog.dev.ConsoleRenderer(colors=False,
                                                   exception_formatter=structlog.dev.plain_traceback))
    structlog.configure(
        processors=shared + [structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter(
        foreign_pre_chain=shared, journald=journal_stream(), processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta, tracebacks, redact,
            renderer]))
    _OURS.add(handler)
    root = logging.getLogger()
    if not _configured:
        root.addHandler(handler)
    root.setLevel(level.upper())
    logging.getLogger("transitions").setLevel(max(logging.WARNING, root.level))
    _configured = True
    if path:
        to_file(path)


def get_logger(name: str) -> Any:
    """The structlog logger `name` (bound loggers are configured once, by configure())."""
    return structlog.get_logger(name)


_file_given = False
#: the root logger's handlers this module installed (a file given later replaces them)
_OURS: weakref.WeakSet[logging.Handler] = weakref.WeakSet()


class _LogFile(logging.FileHandler):
    """The log file. One that cannot be written (its disk full, often the journal's, or a
    failing device) is said once, in one line on stderr, and its lines are dropped until it
    can be written again: not Python's "--- Logging error ---" and a traceback for every line
    among the people's lines (the table's record is the journal, which stops the table itself
    when it cannot be written)."""

    failing = False

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if self.stream is None:
                self.stream = self._open()
            self.stream.write(self.format(record) + self.terminator)
            self.stream.flush()
        except OSError as err:
            if not self.failing:
                self.failing = True
                _say(f"tablectl: the log {self.baseFilename} cannot be written "
                     f"({err.strerror or err}); its lines are dropped until it can")
            return
        except RecursionError:
            raise
        except Exception:
            self.handleError(record)
            return
        if self.failing:
            self.failing = False
            _say(f"tablectl: the log {self.baseFilename} can be written again")


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def to_file(path: str) -> None:
    """The log to `path` (JSON lines, appended) instead of stderr, from now on."""
    global _file_given
    handler = _LogFile(path, encoding="utf-8")
    handler.setFormatter(structlog.stdlib.ProcessorFormatter(
        foreign_pre_chain=_shared(), processors=[
            structlog.stdlib.ProcessorFormatter.remove_processors_meta,
            _json_tracebacks(), redact, structlog.processors.JSONRenderer()]))
    root = logging.getLogger()
    for old in [h for h in root.handlers if h in _OURS]:
        root.removeHandler(old)
        old.close()
    _OURS.add(handler)
    root.addHandler(handler)
    _file_given = True


def to_file_given() -> bool:
    """Whether the log already goes to a file (--log-file, or `to_file`)."""
    return _file_given
