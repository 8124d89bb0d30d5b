"""mkdocs hook: the README is the site's front page (index.md), its links into docs/ made
relative to the site, so the README stays the one front page on GitHub and in the site."""
from __future__ import annotations

import re
from pathlib import Path

from mkdocs.structure.files import File, Files

README = Path(__file__).resolve().parents[1] / "README.md"


def on_files(files: Files, config) -> Files:
    files.append(File.generated(config, "index.md", content=README.read_text("utf-8")))
    return files


def on_page_markdown(markdown: str, page, config, files) -> str:
    if page.file.src_uri != "index.md":
        return markdown
    # README's links say docs/x.md (from the repository's root); in the site they are x.md
    return re.sub(r"\]\(docs/", "](", markdown)
