"""Where tablectl finds its files: a site's own first, then the ones shipped with the release.

Configuration: `--config FILE`, else `$TABLECTL_CONFIG`, else `/etc/tablectl/table.toml`, else
the shipped `table.toml` (the embedded simulator). Profiles by name: `$TABLECTL_PROFILES`, then
`profiles/` beside the configuration given by `--config` or `$TABLECTL_CONFIG`, then
`/etc/tablectl/profiles/`, then the shipped profiles.

The shipped files (the default configuration and the profiles, the service's deploy files, the
table PC's lock file) live at the top of the source tree (`config/`, `deploy/`,
`requirements/`). The build copies them into the package as `controller/shipped/` (setup.py),
so an installed wheel reads them through `importlib.resources`, in any working directory; a
source checkout, where that folder does not exist, reads the top-level folders themselves.
"""
from __future__ import annotations

import os
from importlib import resources
from pathlib import Path

#: source folder → its files that ship inside the package as controller/shipped/<folder>/
#: (glob patterns; setup.py's build step reads this, and the software identity hashes them)
SHIPPED = {
    "config": ("table.toml", "profiles/*.toml"),
    "deploy": ("*",),
    "requirements": ("table-pc.txt",),
}
#: the site's own configuration and profiles (what `tablectl install` writes)
SITE_DIR = Path("/etc/tablectl")
CONFIG_NAME = "table.toml"
#: the table PC's lock file: every distribution the service runs on, pinned with its hashes
LOCK_NAME = "table-pc.txt"
_SOURCE_ROOT = Path(__file__).resolve().parents[2]


def shipped(part: str) -> Path:
    """The shipped folder `part` ("config", "deploy" or "requirements").

    In a wheel: `controller/shipped/<part>` found through importlib.resources (an installed
    wheel is unpacked, so the folder is a real path). In a source checkout: `<part>/` at the
    top of the tree."""
    inside = resources.files("controller").joinpath("shipped", part)
    if inside.is_dir():
        return Path(str(inside))
    return _SOURCE_ROOT / part


def shipped_config() -> Path:
    return shipped("config") / CONFIG_NAME


def lock_file() -> Path:
    return shipped("requirements") / LOCK_NAME


def config_file(given: str | os.PathLike[str] | None = None) -> Path:
    """The configuration to read: `given` (--config), $TABLECTL_CONFIG,
    /etc/tablectl/table.toml, the shipped one. A file named by --config or the environment
    must exist (InputError, one line); the site's is taken when it does."""
    from controller.errors import InputError
    if given:
        if not Path(given).exists():
            raise InputError(f"{given}: no such config file; give an existing --config")
        return Path(given)
    env = os.environ.get("TABLECTL_CONFIG")
    if env:
        if not Path(env).exists():
            raise InputError(f"TABLECTL_CONFIG={env}: no such config file; name an existing "
                             f"file or unset it")
        return Path(env)
    site = SITE_DIR / CONFIG_NAME
    if site.is_file():
        return site
    return shipped_config()


def profile_dirs(config: str | os.PathLike[str] | None = None) -> list[Path]:
    """Folders a profile name is looked up in, first match wins."""
    dirs = []
    if os.environ.get("TABLECTL_PROFILES"):
        dirs.append(Path(os.environ["TABLECTL_PROFILES"]))
    named = config or os.environ.get("TABLECTL_CONFIG")
    if named:
        dirs.append(Path(named).parent / "profiles")
    dirs += [SITE_DIR / "profiles", shipped("config") / "profiles"]
    unique: list[Path] = []
    for d in dirs:
        if d not in unique:
            unique.append(d)
    return unique
