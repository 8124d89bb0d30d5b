"""`tablectl report`: a simulated shoe (with a misread the supervisor clears) to a PDF whose
pages hold the tables, the roads and the charts, read back with pypdf; and to HTML."""
from __future__ import annotations

import re

import pytest

from controller.cli import main
from controller.journal import Journal
from controller.report.collect import collect, parse_time


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "journal.db"
    assert main(["simulate", "--profile", "macau", "--seed", "7", "--shoes", "1",
                 "--fault", "misread@40", "--journal", str(path)]) == 0
    return path


def test_the_pdf_shows_the_shoe_its_roads_and_charts(journal, tmp_path, capsys):
    from pypdf import PdfReader
    out = tmp_path / "shoe.pdf"
    capsys.readouterr()
    assert main(["report", "--journal", str(journal), "--shoe", "1", "--output", str(out)]) == 0
    assert re.search(r"shoe 1: \d+ pages to", capsys.readouterr().out)
    pages = [p.extract_text() for p in PdfReader(out).pages]
    first = pages[0]
    for heading in ("Table report: shoe 1", "SHOES", "RESULTS PER BET", "OUTCOMES AGAINST THE "
                    "EXACT ODDS", "IRREGULARITIES", "HOLDS", "OVERRIDES", "DEVICES"):
        assert heading in "\n".join(pages[:2]), heading
    assert "Punto Banco" in first and "the cut card came out" in first
    text = "\n".join(pages)
    # the misread: its hold, how long, who cleared it and why
    assert "The shoe could not read a card" in text and "(Enter card)" in text
    assert "card read by eye" in text
    assert "SIM-SHUFFLER-12" in text                      # the shuffler that shuffled the shoe
    pictures = "\n".join(pages[1:])
    for title in ("Shoe 1: roads", "Bead plate", "Big road", "Big eye boy", "Small road",
                  "Cockroach pig", "Rounds per hour", "Hold time by cause",
                  "Results against the exact odds"):
        assert title in pictures, title
    assert len(pages) >= 5


def test_the_html_has_the_same_tables_and_the_pictures_inline(journal, tmp_path):
    out = tmp_path / "shoe.html"
    assert main(["report", "--journal", str(journal), "--output", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "<h2>Holds</h2>" in page and "Enter card" in page
    assert page.count("<img alt='chart' src='data:image/png;base64,") == 4


def test_what_the_report_gathers(journal):
    with Journal.open_readonly(journal) as j:
        report = collect(j)
        assert report.selection == "the latest shoe (1)"
        [shoe] = report.shoes
        assert shoe.rounds == len(report.results) > 50 and shoe.end_reason == "cut_card"
        assert sum(report.winners.values()) == len(report.counted)
        assert report.bets["banker"][1] == len(report.counted)
        [hold] = report.holds
        assert hold.kind == "unreadable_card" and hold.seconds is not None
        assert (hold.cleared_by, hold.cleared_with) == ("virtual-supervisor", "enter_card")
        assert shoe.roads["counts"]["rounds"] == len(report.counted)
        started = shoe.start
        assert collect(j, start=started).shoes[0].number == 1
        with pytest.raises(Exception, match="no shoe started in that time"):
            collect(j, end=started)


def test_bad_requests_are_one_line(journal, tmp_path, capsys):
    assert main(["report", "--journal", str(journal), "--shoe", "9", "--output",
                 str(tmp_path / "x.pdf")]) == 2
    assert "no shoe 9" in capsys.readouterr().err
    assert main(["report", "--journal", str(journal), "--output", str(tmp_path / "x.txt")]) == 2
    assert main(["report", "--journal", str(tmp_path / "none.db"), "--output",
                 str(tmp_path / "x.pdf")]) == 2
    with pytest.raises(Exception, match="give a time"):
        parse_time("yesterday", "--from")
