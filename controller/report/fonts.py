"""Fonts for the report's pictures and PDF pages in the reader's script.

Matplotlib's own font (DejaVu) has Latin letters only: Chinese, Devanagari, Bengali and Thai
need a font of the machine's. `drawing(language)` finds one that holds the language's letters
(the usual ones by name first — Noto, Lohit, WenQuanYi, TLWG…, then any installed font that
covers them), puts it behind DejaVu for the drawing, and tells libraqm the language where
matplotlib shapes text. Where the machine has none, the report is still written: its text
layer and the HTML say every word, but the drawn letters show as boxes, and one warning in the
log names the font to install (Debian's fonts-noto-cjk or fonts-noto-core); matplotlib's own
warning for each missing glyph is not repeated.
"""
from __future__ import annotations

import unicodedata
import warnings
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Iterator

from controller.logsetup import get_logger
from controller.words import SOURCE, language_tag

log = get_logger(__name__)

#: language → (Debian package with a font for it, family names to look for, in that order)
SCRIPTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "zh_Hant": ("fonts-noto-cjk", (
        "Noto Sans CJK TC", "Noto Sans CJK HK", "Noto Sans CJK JP", "Noto Sans CJK SC",
        "Noto Sans CJK KR", "Noto Serif CJK TC", "Noto Serif CJK JP", "Source Han Sans TW",
        "Source Han Sans", "AR PL UMing TW", "AR PL UKai TW", "WenQuanYi Zen Hei",
        "WenQuanYi Micro Hei", "Droid Sans Fallback")),
    "hi": ("fonts-noto-core", (
        "Noto Sans Devanagari", "Noto Serif Devanagari", "Lohit Devanagari", "Gargi",
        "Samanata", "FreeSans")),
    "bn": ("fonts-noto-core", (
        "Noto Sans Bengali", "Noto Serif Bengali", "Lohit Bengali", "Mukti Narrow",
        "FreeSans")),
    "th": ("fonts-noto-core", (
        "Noto Sans Thai", "Noto Sans Thai UI", "Noto Serif Thai", "Loma", "Garuda", "Norasi",
        "Waree", "Umpush", "TlwgTypo", "FreeSerif")),
}

#: monospaced Chinese fonts, the first choice for the PDF's table pages where there is one
MONOSPACED: dict[str, tuple[str, ...]] = {
    "zh_Hant": ("Noto Sans Mono CJK TC", "Noto Sans Mono CJK HK", "Noto Sans Mono CJK JP",
                "Noto Sans Mono CJK SC", "WenQuanYi Micro Hei Mono", "WenQuanYi Zen Hei Mono"),
}

SANS = "DejaVu Sans"            # matplotlib's own, Latin letters and digits
MONO = "DejaVu Sans Mono"


def sample(language: str) -> str:
    """Letters the report writes in `language` (its headings, a bet, its digits)."""
    from controller.words.fields import number, template
    text = "".join(template(code, language) for code in
                   ("report.holds", "report.results", "report.col.what", "page.count.banker",
                    "page.count.player", "report.per_bet_note"))
    return text + number(1234567890, language)


def _letters(text: str) -> set[int]:
    return {ord(c) for c in text if ord(c) > 0x7F and unicodedata.category(c)[0] in "LMN"}


#: fonts that map every letter to a placeholder (matplotlib's own last resort draws each as a
#: box naming its script): they hold no letter of any language
PLACEHOLDERS = ("Last Resort",)


def _covers(path: str, wanted: set[int]) -> tuple[bool, str]:
    """Whether the font file holds every letter wanted, and its family name."""
    from matplotlib.ft2font import FT2Font
    try:
        font = FT2Font(path)
        family = str(font.family_name)
        if family.startswith(PLACEHOLDERS):
            return False, family
        return wanted <= set(font.get_charmap()), family
    except Exception:                 # an unreadable font file is just not the one
        return False, ""


def _named(names: tuple[str, ...], wanted: set[int]) -> str | None:
    """The first of the families named that matplotlib knows and that holds every letter."""
    from matplotlib import font_manager
    by_name: dict[str, list[str]] = {}
    for entry in font_manager.fontManager.ttflist:
        by_name.setdefault(entry.name, []).append(entry.fname)
    for name in names:
        for path in by_name.get(name, []):
            if _covers(path, wanted)[0]:
                return name
    return None


@lru_cache(maxsize=None)
def font_for(language: str) -> str | None:
    """The family of an installed font that holds the language's letters; None if none."""
    if language == SOURCE or language not in SCRIPTS:
        return None
    from matplotlib import font_manager
    wanted = _letters(sample(language))
    named = _named(SCRIPTS[language][1], wanted)
    if named:
        return named
    # any other font of the machine's, matplotlib's cache included (it may predate the font):
    # the first regular face that holds them (else every face of the first family that does)
    known = font_manager.fontManager.ttflist
    listed = {entry.fname for entry in known}
    found: dict[str, list[str]] = {}
    for path in dict.fromkeys([e.fname for e in known] + font_manager.findSystemFonts()):
        ok, family = _covers(path, wanted)
        if not (ok and family):
            continue
        if _style(path) in ("Regular", "Book", "Normal"):      # the face the report draws with
            found = {family: [path]}
            break
        found.setdefault(family, []).append(path)
    if not found:
        return None
    family = next(iter(found))
    for path in found[family]:
        if path not in listed:
            font_manager.fontManager.addfont(path)
    return family


def _style(path: str) -> str:
    from matplotlib.ft2font import FT2Font
    try:
        return str(FT2Font(path).style_name)
    except Exception:
        return ""


def settings(language: str) -> Any:
    """matplotlib settings for drawing `language` (none for English): DejaVu for Latin
    letters and digits, the language's font behind it for the rest (matplotlib takes each
    letter from the first font in `font.family` that has it)."""
    if language == SOURCE:
        return {}
    import matplotlib
    out: dict[str, Any] = {}
    family = font_for(language)
    if family:
        out["font.family"] = [SANS, family]
    if "text.language" in matplotlib.rcParams:      # matplotlib ≥ 3.11 shapes with libraqm
        out["text.language"] = language_tag(language)
    return out


@lru_cache(maxsize=None)
def monospace(language: str) -> str | tuple[str, ...]:
    """The family (families, in fallback order) for the PDF's monospaced table pages."""
    family = font_for(language)
    if family is None:
        return "monospace"
    mono = _named(MONOSPACED.get(language, ()), _letters(sample(language)))
    return (mono, MONO) if mono else (MONO, family)


def _is_missing_glyph(w: warnings.WarningMessage) -> bool:
    text = str(w.message)
    return "missing from" in text and "font" in text


@contextmanager
def drawing(language: str) -> Iterator[None]:
    """Draw figures (and save them) for `language`: its font where the machine has one; one
    warning in the log where its letters would show as boxes."""
    if language == SOURCE:
        yield
        return
    import logging

    import matplotlib
    family = font_for(language)
    # a font without a bold face is drawn in its regular one: matplotlib would say so in the
    # log at every heading, which tells nobody anything to do
    finder = logging.getLogger("matplotlib.font_manager")
    level = finder.level
    finder.setLevel(logging.ERROR)
    try:
        with matplotlib.rc_context(settings(language)), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            yield
    finally:
        finder.setLevel(level)
    missing = [w for w in caught if _is_missing_glyph(w)]
    for w in caught:
        if not _is_missing_glyph(w):
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if family is None or missing:
        package, names = SCRIPTS.get(language, ("fonts-noto-core", ("Noto Sans",)))
        if family is None:
            log.warning("no font for the report's language on this machine: its drawn letters "
                        "show as boxes (the HTML text and the PDF's text layer are whole)",
                        language=language, font=names[0], install=f"Debian's {package}")
        else:
            log.warning("the report's font lacks some letters of its language: they show as "
                        "boxes (the HTML text and the PDF's text layer are whole)",
                        language=language, font_used=family, missing=len(missing),
                        font=names[0], install=f"Debian's {package}")
