"""Keep the gettext catalogues in step with the message catalogue.

    python -m controller.words.pot            # write locale/tablectl.pot, update every .po
    python -m controller.words.pot --check    # exit 1 if any is out of step (the tests do this)

The template holds every message of `catalogue.MESSAGES` (msgctxt = its code, msgid = its
English); each language's .po is updated from it with Babel, keeping its translations (a
message whose English changed is marked fuzzy until its translation is looked at again).
"""
from __future__ import annotations

import argparse
import io
import sys

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po

from controller.words import LANGUAGES, SOURCE
from controller.words.catalogue import MESSAGES
from controller.words.fields import DOMAIN, LOCALE_DIR

HEADER = "tablectl's messages: prompts, holds, refusals and console labels"


def template() -> Catalog:
    cat = Catalog(domain=DOMAIN, project="tablectl", header_comment=f"# {HEADER}.",
                  charset="utf-8", fuzzy=False)
    for code, text in MESSAGES.items():
        cat.add(text, context=code)
    return cat


def _text(cat: Catalog) -> bytes:
    buf = io.BytesIO()
    write_po(buf, cat, width=100, omit_header=False, sort_output=False, ignore_obsolete=True)
    # the creation date changes every run; it is not part of what the catalogue says
    return b"\n".join(line for line in buf.getvalue().splitlines()
                      if not line.startswith((b'"POT-Creation-Date', b'"PO-Revision-Date')))


def updated(language: str, pot: Catalog) -> Catalog:
    path = LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"
    if path.exists():
        with path.open("rb") as f:
            cat = read_po(f, locale=language, domain=DOMAIN)
    else:
        cat = Catalog(locale=language, domain=DOMAIN, project="tablectl", fuzzy=False)
    cat.update(pot, no_fuzzy_matching=True)
    cat.fuzzy = False
    return cat


def run(check: bool) -> int:
    pot = template()
    stale = []
    outputs = {LOCALE_DIR / f"{DOMAIN}.pot": _text(pot)}
    for language in LANGUAGES:
        if language != SOURCE:
            outputs[LOCALE_DIR / language / "LC_MESSAGES" / f"{DOMAIN}.po"] = \
                _text(updated(language, pot))
    for path, data in outputs.items():
        if not path.exists() or path.read_bytes() != data:
            stale.append(str(path))
            if not check:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
    if check and stale:
        print("out of step with controller/words/catalogue.py: " + ", ".join(stale) +
              "; run python -m controller.words.pot", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only say whether any is stale")
    return run(ap.parse_args(argv).check)


if __name__ == "__main__":
    sys.exit(main())
