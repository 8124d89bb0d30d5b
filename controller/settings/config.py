"""The table's configuration: config/table.toml → typed, frozen settings.

Precedence: command line > environment (`TABLECTL_<SECTION>_<KEY>`, e.g. TABLECTL_SHOE_URL) >
file > defaults. The three are held to the same rules: an unknown section, key or `TABLECTL_`
variable is an error, every number to its range (a flag's too), a config file named by
--config or TABLECTL_CONFIG must exist; every error is one line naming the file and key, the
variable or the flag, and the fix. Timeouts carry their unit in the key name.
"""
from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Mapping

from controller.errors import InputError
from controller.settings.tomlcheck import Section
from drivers.shoe import PROTOCOLS

#: a table's name is a level of the floor feed's MQTT topics ({prefix}/{name}/events)
TABLE_NAME = re.compile(r"[A-Za-z0-9_-]{1,32}")
#: TABLECTL_ variables that are not settings of the file: who acts, their PINs, where things are
OTHER_VARIABLES = frozenset({"TABLECTL_CONFIG", "TABLECTL_PIN", "TABLECTL_NEW_PIN",
                             "TABLECTL_USER", "TABLECTL_PROFILES", "TABLECTL_CONSOLE_PREFS",
                             "TABLECTL_FLOOR_DB"})
SIM_SHOE_URL = "shoesim://table?protocol=beetek"
SIM_SHUFFLER_URL = "usb://7a5c:5348?sim=table-shuffler"


class ConfigError(InputError):
    def __init__(self, where: str, key: str, problem: str, fix: str):
        super().__init__(f"{where}: {key}: {problem}; fix: {fix}")


@dataclass(frozen=True)
class TableCfg:
    name: str = "T1"
    profile: str = "macau"
    betting_seconds: float = 0.0      # 0: bets close as soon as a round opens (unattended)
    demo_rounds: int = 0
    shoes: int = 0                    # shoes to run before exiting; 0 = until stopped
    language: str = "en"              # the dealer's prompts and screen: en, zh_Hant, hi, bn, th
    pit: str = ""                     # the floor's pit the table stands in (on the floor feed)
    min_bet: int = 0                  # the table's limits, on the players' page; 0: not shown
    max_bet: int = 0


@dataclass(frozen=True)
class ShoeCfg:
    url: str = SIM_SHOE_URL
    protocol: str = "beetek"
    baudrate: int = 9600
    read_timeout_s: float = 0.5
    dead_after_timeouts: int = 0      # consecutive read timeouts that mean the link is dead; 0 = never
    reconnect_initial_s: float = 0.5
    reconnect_max_s: float = 10.0
    min_pull_interval_s: float = 0.15  # two reads closer than this were drawn together


@dataclass(frozen=True)
class ShufflerCfg:
    url: str = SIM_SHUFFLER_URL       # "none": a manually shuffled shoe is loaded at start
    protocol: str = "framed"          # the shuffler's driver by name (tablectl.shufflers)
    baudrate: int = 115200
    response_timeout_s: float = 1.0
    poll_interval_s: float = 0.1
    retries: int = 2
    shuffle_timeout_s: float = 300.0
    approved_firmware: tuple[str, ...] = ()   # empty: not checked; else the firmware must be listed


@dataclass(frozen=True)
class StorageCfg:
    journal: str = "var/journal.db"
    snapshot_every: int = 1000        # inputs between snapshots
    anchor_key_file: str = ""         # key that signs the journal's head (mode 0600); "": none
    # records of the chain checked before the table starts (beyond what a restart builds on);
    # a longer journal's older records are checked while the table waits for its first card
    verify_before_start: int = 100_000
    # false: durable records are not fsynced (a lab's or a rehearsal's throwaway journal: a
    # power cut may lose its last records); a table on the floor keeps true
    fsync: bool = True


@dataclass(frozen=True)
class ConsoleCfg:
    socket: str = "var/tablectl.sock"
    group: str = ""
    users_db: str = "var/users.db"
    reply_timeout_s: float = 10.0


@dataclass(frozen=True)
class SimulatorCfg:
    seed: int = -1                    # -1: the simulated shuffler uses the OS CSPRNG
    pace_s: float = 0.3               # the virtual dealer's pace between cards
    faults: tuple[str, ...] = ()


@dataclass(frozen=True)
class FeedCfg:
    url: str = ""                     # mqtt://host:1883 or mqtts://host:8883; empty: no feed
    topic_prefix: str = "tables"      # topics {prefix}/{table}/events, /state, /status
    username: str = ""
    password_file: str = ""           # the password on its first line (never in this file)
    ca_file: str = ""                 # mqtts: the CA that signed the broker; empty: system CAs
    cert_file: str = ""               # mqtts: client certificate (and key) for mutual TLS
    key_file: str = ""
    keepalive_s: int = 15             # the broker publishes "offline" after 1.5x this silence
    drain_timeout_s: float = 5.0      # a clean exit waits this long for the broker to take all
    retry_max_s: float = 30.0         # reconnect delay doubles from 0.5 s up to this


@dataclass(frozen=True)
class DisplayCfg:
    listen: str = ""                  # HOST:PORT of the web display; empty: no display


@dataclass(frozen=True)
class MetricsCfg:
    listen: str = ""                  # HOST:PORT of /metrics, /healthz, /readyz of their own;
    #                                   empty: on the display's server when there is one


@dataclass(frozen=True)
class SoftwareCfg:
    # software SHA-256s (tablectl software-id) approved for this table; empty, with no
    # manifest: not checked. Other software holds the table until a manager accepts it.
    approved: tuple[str, ...] = ()
    manifest: str = ""                # a signed list of approved SHA-256s (its signature: .sig)
    allowed_signers: str = ""         # who may sign it (ssh-keygen's allowed_signers format)


@dataclass(frozen=True)
class Config:
    table: TableCfg = field(default_factory=TableCfg)
    shoe: ShoeCfg = field(default_factory=ShoeCfg)
    shuffler: ShufflerCfg = field(default_factory=ShufflerCfg)
    storage: StorageCfg = field(default_factory=StorageCfg)
    console: ConsoleCfg = field(default_factory=ConsoleCfg)
    simulator: SimulatorCfg = field(default_factory=SimulatorCfg)
    feed: FeedCfg = field(default_factory=FeedCfg)
    display: DisplayCfg = field(default_factory=DisplayCfg)
    metrics: MetricsCfg = field(default_factory=MetricsCfg)
    software: SoftwareCfg = field(default_factory=SoftwareCfg)
    path: str = "(defaults)"
    #: where a value came from when not the file: "section.key" → the variable or the flag
    sources: Mapping[str, str] = field(default_factory=dict)

    def where(self, key: str) -> str:
        """What an error about `key` names: the flag, the environment variable, or the file."""
        return self.sources.get(key, self.path)


#: how a value of each kind is written in an environment variable
_ENV_FORMS = {"int": "a whole number", "float": "a number, e.g. 0.5",
              "bool": "true or false", "str": "text"}


def _env_value(raw: str, typ: type, name: str) -> Any:
    """A setting from the environment: a list is written `a,b` or as the file writes it,
    `["a", "b"]`."""
    if typ is tuple:
        text = raw.strip()
        if text.startswith("["):
            try:
                items = tomllib.loads(f"v = {text}")["v"]
            except tomllib.TOMLDecodeError:
                items = None
            if not isinstance(items, list) or not all(isinstance(x, str) for x in items):
                raise InputError(f"environment {name}={raw!r}: not a list of texts; write "
                                 f"{name}=misread@40,drop@90 or {name}='[\"misread@40\"]'")
            return tuple(items)
        return tuple(x.strip() for x in text.split(",") if x.strip())
    if typ is bool:
        if raw.strip().lower() in ("true", "1", "yes", "false", "0", "no"):
            return raw.strip().lower() in ("true", "1", "yes")
        raise InputError(f"environment {name}={raw!r}: write true or false")
    try:
        return typ(raw)
    except ValueError:
        raise InputError(f"environment {name}={raw!r}: write "
                         f"{_ENV_FORMS.get(typ.__name__, typ.__name__)}") from None


def env_name(section: str, key: str) -> str:
    return f"TABLECTL_{section.upper()}_{key.upper()}"


def origin(cfg: "Config", section: str, key: str) -> str:
    """Where a setting came from, for an error about its value: the environment variable
    that set it, else the file's key."""
    name = env_name(section, key)
    return f"environment {name}" if os.environ.get(name) else f"{cfg.path}: {section}.{key}"


_TYPES = {"str": str, "int": int, "float": float, "bool": bool}


def _section(sec: Section, cls: type, sources: dict[str, str]) -> Any:
    values = {}
    for f in fields(cls):
        base = _TYPES.get(str(f.type), tuple)
        # every setting has a plain default (a section's dataclass has no factories)
        default: Any = f.default
        if base is tuple:
            v = sec.get(f.name, list, list(default))
            if not all(isinstance(x, str) for x in v):
                raise sec.fail(f.name, "expected a list of strings", 'write e.g. ["misread@40"]')
            v = tuple(v)
        else:
            v = sec.get(f.name, base, default)
        env = env_name(sec.prefix.rstrip("."), f.name)
        if os.environ.get(env):
            v = _env_value(os.environ[env], base, env)
            sources[f"{sec.prefix.rstrip('.')}.{f.name}"] = f"environment {env}"
        values[f.name] = v
    sec.done()
    return cls(**values)


_SECTIONS = (("table", TableCfg), ("shoe", ShoeCfg), ("shuffler", ShufflerCfg),
             ("storage", StorageCfg), ("console", ConsoleCfg), ("simulator", SimulatorCfg),
             ("feed", FeedCfg), ("display", DisplayCfg), ("metrics", MetricsCfg),
             ("software", SoftwareCfg))


def known_variables() -> frozenset[str]:
    """Every TABLECTL_ variable the controller reads."""
    return OTHER_VARIABLES | {env_name(name, f.name) for name, cls in _SECTIONS
                              for f in fields(cls)}


def check_environment() -> None:
    """An unknown TABLECTL_ variable (a typo of a setting's) is an error, as an unknown key in
    the file is: one line naming it and the nearest known one."""
    known = known_variables()
    for name in sorted(os.environ):
        if name.startswith("TABLECTL_") and name not in known:
            import difflib
            near = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f"did you mean {near[0]}?" if near else ("settings are TABLECTL_<SECTION>_"
                                                             "<KEY> for the config's keys")
            raise InputError(f"environment {name}: not a tablectl variable; {hint} (unset it)")


def config_path(path: str | os.PathLike | None = None) -> tuple[Path, str | None]:
    """(the config file, who named it: "--config", "TABLECTL_CONFIG" or None for the default).
    One named that does not exist, or that is not a file, is an error."""
    from controller.settings.locations import config_file
    env = os.environ.get("TABLECTL_CONFIG")
    named = "--config" if path else "environment TABLECTL_CONFIG" if env else None
    p = config_file(path)           # --config, TABLECTL_CONFIG, /etc/tablectl, the shipped one
    if p.exists() and not p.is_file():
        raise InputError(f"{p}: not a file; give a config file ({named or 'the default'})")
    return p, named


def load_config(path: str | os.PathLike | None = None) -> Config:
    """Read the configuration: --config, $TABLECTL_CONFIG, /etc/tablectl/table.toml, else the
    shipped one (controller.settings.locations); a shipped file that is missing means the defaults."""
    check_environment()
    p, _ = config_path(path)
    if not p.exists():
        data: dict = {}
    else:
        try:
            data = tomllib.loads(p.read_text(encoding="utf-8-sig"))   # a BOM is harmless
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
            raise InputError(f"{p}: not a readable TOML file ({err}); fix the syntax") from err
    root = Section(data, str(p), ConfigError)
    sources: dict[str, str] = {}
    parts = {name: _section(root.table(name), cls, sources) for name, cls in _SECTIONS}
    root.done()
    cfg = Config(**parts, path=str(p), sources=sources)
    _check(cfg)
    return cfg


#: numbers' ranges: (lowest, whether the lowest itself is allowed, highest); what lies outside
#: them (and NaN, infinities) would hang a loop, spin it, or never time out
_RANGES: Mapping[str, tuple[float, bool, float]] = {
    "table.betting_seconds": (0, True, 3600), "table.demo_rounds": (0, True, 3),
    "table.shoes": (0, True, 10 ** 6),
    "table.min_bet": (0, True, 10 ** 9), "table.max_bet": (0, True, 10 ** 9),
    "shoe.baudrate": (0, False, 4_000_000), "shoe.read_timeout_s": (0, False, 60),
    "shoe.dead_after_timeouts": (0, True, 10 ** 6),
    "shoe.reconnect_initial_s": (0, False, 3600), "shoe.reconnect_max_s": (0, False, 3600),
    "shoe.min_pull_interval_s": (0, True, 10),
    "shuffler.baudrate": (0, False, 4_000_000), "shuffler.response_timeout_s": (0, False, 600),
    "shuffler.poll_interval_s": (0, True, 60), "shuffler.retries": (0, True, 100),
    "shuffler.shuffle_timeout_s": (0, False, 86400),
    "storage.snapshot_every": (1, True, 10 ** 7),
    "storage.verify_before_start": (0, True, 10 ** 12),
    "console.reply_timeout_s": (0, False, 3600),
    "simulator.seed": (-1, True, 2 ** 63 - 1), "simulator.pace_s": (0, True, 60),
}


def check_number(where: str, key: str, value: float) -> None:
    """ConfigError (InputError for a flag) unless `value` lies in `key`'s range, finite.
    `where` is the file, the environment variable or the flag the value came from."""
    lo, lo_ok, hi = _RANGES[key]
    finite = not (isinstance(value, float) and not math.isfinite(value))
    if finite and (lo < value <= hi or (lo_ok and value == lo)):
        return
    problem = f"{value} is out of range" if finite else f"{value} is not a number"
    fix = f"give a value {'from' if lo_ok else 'above'} {lo} up to {hi}"
    if where.startswith("--"):
        raise InputError(f"{where}: {problem}; {fix}")
    raise ConfigError(where, key, problem, fix)


def _check(cfg: Config) -> None:
    where = cfg.where
    from controller.words import LANGUAGES, normalise
    try:
        normalise(cfg.table.language)
    except ValueError:
        raise ConfigError(where("table.language"), "table.language",
                          f"{cfg.table.language!r} has no catalogue",
                          f"use one of {', '.join(LANGUAGES)}") from None
    if not TABLE_NAME.fullmatch(cfg.table.name):
        raise ConfigError(where("table.name"), "table.name", f"{cfg.table.name!r} cannot name a "
                          "table on the floor feed (its name is a level of the MQTT topics)",
                          "use 1 to 32 letters, digits, '_' or '-', e.g. T1 or baccarat-07")
    if len(cfg.table.pit) > 32 or any(c in cfg.table.pit for c in "/+#\0\n"):
        raise ConfigError(where("table.pit"), "table.pit", f"{cfg.table.pit!r} is not a pit name",
                          "give a short name such as 3 or east (no / + # or line breaks)")
    if cfg.shoe.protocol not in PROTOCOLS:
        raise ConfigError(where("shoe.protocol"), "shoe.protocol",
                          f"{cfg.shoe.protocol!r} is not a shoe protocol",
                          f"use one of {', '.join(PROTOCOLS)}")
    from drivers.shuffler import SHUFFLER_PROTOCOLS
    if cfg.shuffler.protocol not in SHUFFLER_PROTOCOLS:
        raise ConfigError(where("shuffler.protocol"), "shuffler.protocol", f"{cfg.shuffler.protocol!r} is not a "
                          f"shuffler protocol", f"use one of {', '.join(SHUFFLER_PROTOCOLS)}")
    for key in _RANGES:
        section, name = key.split(".")
        check_number(where(key), key, getattr(getattr(cfg, section), name))
    if cfg.table.max_bet and cfg.table.min_bet > cfg.table.max_bet:
        raise ConfigError(where("table.max_bet"), "table.max_bet", f"{cfg.table.max_bet} is "
                          f"below min_bet {cfg.table.min_bet}", "make max_bet at least min_bet "
                          "(or 0: not shown)")
    if cfg.shoe.reconnect_max_s < cfg.shoe.reconnect_initial_s:
        raise ConfigError(where("shoe.reconnect_max_s"), "shoe.reconnect_max_s",
                          "is below reconnect_initial_s",
                          "make reconnect_max_s at least reconnect_initial_s")
    if cfg.display.listen:
        from controller.settings.listen import parse_listen
        parse_listen(cfg.display.listen, f"{where('display.listen')}: [display] listen")
    if cfg.metrics.listen:
        from controller.settings.listen import parse_listen
        parse_listen(cfg.metrics.listen, f"{where('metrics.listen')}: [metrics] listen")


def override(cfg: Config, section: str, flags: Mapping[str, str] | None = None,
             **values: Any) -> Config:
    """The command line's word over the file's: only the values actually given, held to the
    same rules as the file's (a number to its range). `flags` names the flag of a key when it
    is not --key-with-dashes (e.g. pace_s: --pace)."""
    given = {k: v for k, v in values.items() if v is not None}
    if not given:
        return cfg
    sources = dict(cfg.sources)
    for key in given:
        sources[f"{section}.{key}"] = (flags or {}).get(key, "--" + key.replace("_", "-"))
    out = replace(cfg, **{section: replace(getattr(cfg, section), **given)}, sources=sources)
    _check(out)
    return out


def as_dict(cfg: Config) -> Mapping[str, Any]:
    from dataclasses import asdict
    return asdict(cfg)
