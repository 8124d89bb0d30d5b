"""`tablectl report`: a simulated shoe (with a misread the supervisor clears) to a PDF whose
pages hold the tables, the roads and the charts, read back with pypdf; and to HTML. In the
reader's language: the Chinese HTML and PDF (its text layer: the machine may have no font to
draw Chinese with), the table's language by default, an unknown one refused."""
from __future__ import annotations

import html
import os
import re
import shutil
import sqlite3
import subprocess

import pytest

from controller.cli import main
from controller.journal import Journal
from controller.report.collect import collect, parse_time

# one worker draws every report of the run (tests/test_house_burn.py's too): the renderer and
# its charting library are imported by that worker alone
pytestmark = pytest.mark.xdist_group("report")


@pytest.fixture(autouse=True)
def _table_language_unset(monkeypatch):
    """The report's language defaults to the table's: not one the environment happens to set."""
    monkeypatch.delenv("TABLECTL_TABLE_LANGUAGE", raising=False)
    monkeypatch.delenv("TABLECTL_CONFIG", raising=False)


@pytest.fixture(scope="module")
def journal(tmp_path_factory):
    from tests.conftest import built_once
    with built_once(tmp_path_factory, "report") as (where, todo):   # once for all workers
        path = where / "journal.db"
        if todo:
            assert main(["simulate", "--profile", "macau", "--seed", "7", "--shoes", "1",
                         "--fault", "misread@40", "--journal", str(path)]) == 0
    return path


@pytest.fixture(scope="module")
def english_html(journal, tmp_path_factory):
    """The latest shoe's report as HTML in English, written once: the tests only read it."""
    from tests.conftest import built_once
    with built_once(tmp_path_factory, "report-html-en") as (where, todo):
        path = where / "shoe.html"
        if todo:
            assert main(["report", "--journal", str(journal), "--output", str(path)]) == 0
    return path.read_text(encoding="utf-8")


PDFTOTEXT = shutil.which("pdftotext")
needs_pdftotext = pytest.mark.skipif(not PDFTOTEXT and not os.environ.get("CI"),
                                     reason="pdftotext is not installed (Debian's poppler-utils)")


def pdf_pages(path) -> list[str]:
    """Each page's text as poppler reads it back (`pdftotext -layout`)."""
    assert PDFTOTEXT, "pdftotext is not installed (apt-get install poppler-utils)"
    out = subprocess.run([PDFTOTEXT, "-layout", str(path), "-"], capture_output=True,
                         text=True, check=True).stdout
    return out.split("\f")[:-1]


def pdf_words(path) -> list[list[tuple[float, float, float, str]]]:
    """Each page's words with where they are: (x min, x max, y min, word)."""
    out = subprocess.run([PDFTOTEXT, "-bbox", str(path), "-"], capture_output=True, text=True,
                         check=True).stdout
    pages = []
    for page in out.split("<page ")[1:]:
        pages.append([(float(a), float(c), float(b), html.unescape(w)) for a, b, c, w in
                      re.findall(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" '
                                 r'yMax="[\d.]+">([^<]*)</word>', page)])
    return pages


@needs_pdftotext
def test_the_pdf_shows_the_shoe_its_roads_and_charts(journal, tmp_path, capsys):
    out = tmp_path / "shoe.pdf"
    capsys.readouterr()
    assert main(["report", "--journal", str(journal), "--shoe", "1", "--output", str(out)]) == 0
    said = capsys.readouterr().out
    assert re.search(r"shoe 1: written to \S+shoe.pdf \(PDF, \d+ pages\)", said), said
    pages = pdf_pages(out)
    # no page without something on it
    assert all(len(p.split()) > 5 for p in pages), [len(p.split()) for p in pages]
    first = " ".join(pages[0].split())
    # the first page: what, whose, when, simulated, and the totals
    for said in ("Table report: shoe 1", "Table T1", "Game Punto Banco (profile macau)",
                 "SIMULATOR: these shoes were dealt on the simulator", "Rounds 78 rounds",
                 "Holds 1 hold", "Overrides 1", "Irregularities 1", "Records Journal"):
        assert said in first, said
    assert re.search(r"From – to \(UTC\) \d{4}-\d\d-\d\d \d\d:\d\d – \d{4}", first)
    assert re.search(r"Results Player \d+ \([\d.]+%\) · Banker \d+", first)
    tables = "\n".join(pages[1:3])
    for heading in ("Shoes", "Results per bet", "Outcomes against the exact odds",
                    "Irregularities", "Holds", "Overrides", "Devices"):
        assert heading in tables, heading
    assert "Punto Banco" in tables and "the cut card came out" in tables
    text = "\n".join(pages)
    # the misread: its hold, how long, who cleared it and why
    assert "The shoe could not read a card" in text and "(Enter card)" in text
    assert "card read by eye" in text
    assert "SIM-SHUFFLER-12" in text                      # the shuffler that shuffled the shoe
    pictures = "\n".join(pages[2:])
    for title in ("Shoe 1: roads", "Bead plate", "Big road", "Big eye boy", "Small road",
                  "Cockroach pig", "Rounds per hour", "Hold time by cause",
                  "Results against the exact odds"):
        assert title in pictures, title
    assert len(pages) >= 5


def test_the_roads_are_drawn_as_on_the_board(journal):
    """Beads filled with their letters, the big road's rings, the big eye boy's rings, the
    small road's filled dots, the cockroach pig's slashes, every mark of the shoe."""
    from matplotlib.collections import LineCollection, PathCollection

    from controller.report.charts import roads_figure
    with Journal.open_readonly(journal) as j:
        roads = collect(j).shoes[0].roads
    fig = roads_figure(1, roads)
    axes = {ax.get_title(loc="left"): ax for ax in fig.axes}
    marks = {}
    for name, title in (("bead_plate", "Bead plate"), ("big_road", "Big road"),
                        ("big_eye_boy", "Big eye boy"), ("small_road", "Small road"),
                        ("cockroach_pig", "Cockroach pig")):
        ax = axes[title]
        dots = [c for c in ax.collections if isinstance(c, PathCollection)]
        filled = sum(len(c.get_offsets()) for c in dots if c.get_facecolors().any())
        rings = sum(len(c.get_offsets()) for c in dots if not c.get_facecolors().any())
        # the grid is two sets of lines across the road; the slashes are one a cell
        lines = sum(len(c.get_segments()) for c in ax.collections
                    if isinstance(c, LineCollection) and c.get_linewidths()[0] > 0.5)
        marks[name] = (filled, rings, lines, len(ax.texts))
    entries = {r: len(roads[r]["entries"]) for r in ("big_road", "big_eye_boy", "small_road",
                                                      "cockroach_pig")}
    ties = sum(1 for c in roads["big_road"]["entries"] if c["ties"])
    assert marks["bead_plate"] == (len(roads["bead_plate"]), 0, 0, len(roads["bead_plate"]))
    assert marks["big_road"][:3] == (0, entries["big_road"], ties)
    assert marks["big_eye_boy"] == (0, entries["big_eye_boy"], 0, 0)
    assert marks["small_road"] == (entries["small_road"], 0, 0, 0)
    assert marks["cockroach_pig"] == (0, 0, entries["cockroach_pig"], 0)


@needs_pdftotext
def test_a_shoe_in_play_is_counted_and_the_columns_keep_straight_in_thai(journal, tmp_path,
                                                                        capsys):
    """The shoe cut short after 16 rounds, as a shoe still in play: its rounds so far are
    counted and it is said to be in progress, no page is blank, and in Thai every column of a
    table ends where it ends on the row above."""
    path = tmp_path / "in-play.db"
    shutil.copy(journal, path)
    with Journal.open_readonly(path) as j:
        results = list(j.records(kinds=["round_result"]))
    with sqlite3.connect(path) as conn:
        conn.execute("DELETE FROM records WHERE seq > ?", (results[15].seq,))
        conn.execute("DELETE FROM snapshots")
    with Journal.open_readonly(path) as j:
        [shoe] = collect(j, start=parse_time("2000-01-01", "--from")).shoes
    assert (shoe.rounds, shoe.end) == (16, None)
    capsys.readouterr()
    thai = tmp_path / "shift-th.pdf"
    assert main(["report", "--journal", str(path), "--from", "2000-01-01", "--language", "th",
                 "--output", str(thai)]) == 0
    pages = pdf_pages(thai)
    assert all(len(p.split()) > 5 for p in pages)
    assert "T1" in pages[0] and "macau" in pages[0]          # whose, and which game's profile
    shoe_row = next(line.split() for line in pages[1].splitlines() if "macau" in line)
    assert "16" in shoe_row and len([w for w in shoe_row if re.fullmatch(
        r"\d{4}-\d\d-\d\d", w)]) == 1, shoe_row                # started, not ended
    # the shoe's row as the reader reads it (a PDF's Thai text layer repeats some letters)
    html_out = tmp_path / "shift.html"
    assert main(["report", "--journal", str(path), "--from", "2000-01-01", "--language", "th",
                 "--output", str(html_out)]) == 0
    page = html_out.read_text(encoding="utf-8")
    assert "<td>16</td>" in page and "<td>กำลังดำเนินอยู่</td>" in page
    rows: dict = {}
    for x0, x1, y, word in pdf_words(thai)[1]:
        rows.setdefault(round(y), []).append((x0, x1, word))
    # the outcomes' figures (after each outcome's Thai name): each column's numbers end at
    # the same place, row after row
    figure_rows = [sorted(r) for r in rows.values()
                   if sum(bool(re.fullmatch(r"0\.\d{6}", w)) for _, _, w in r) == 2]
    assert len(figure_rows) >= 8
    ends = [[x1 for _, x1, w in r if re.fullmatch(r"0\.\d{6}", w)] for r in figure_rows]
    assert all(abs(e[0] - ends[0][0]) < 0.5 and abs(e[1] - ends[0][1]) < 0.5 for e in ends)


def test_the_html_has_the_same_tables_and_the_pictures_inline(english_html):
    page = english_html
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
    capsys.readouterr()
    # where it cannot be written: one line, no traceback
    assert main(["report", "--journal", str(journal), "--output",
                 str(tmp_path / "no" / "x.pdf")]) == 2
    assert "no folder" in capsys.readouterr().err
    (tmp_path / "taken.pdf").mkdir()
    assert main(["report", "--journal", str(journal), "--output",
                 str(tmp_path / "taken.pdf")]) == 2
    err = capsys.readouterr().err
    assert "taken.pdf: is a directory" in err and err.count("\n") == 1   # before any page


# ---- in the reader's language ----------------------------------------------------------------

def _headings(page: str) -> set[str]:
    return set(re.findall(r"<(?:h1|h2|th|title)>([^<]*)</", page))


def test_the_html_speaks_the_readers_language(journal, english_html, tmp_path):
    chinese = tmp_path / "zh.html"
    assert main(["report", "--journal", str(journal), "--language", "zh-hant", "--output",
                 str(chinese)]) == 0
    page = chinese.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html><html lang='zh-Hant'>")
    assert "<h1>牌桌報告：最近一靴（第 1 靴）</h1>" in page
    for heading in ("牌靴", "結果", "各注項結果（每局每注一單位）", "結果與理論機率對照", "異常情況",
                    "暫停", "覆核操作", "設備", "設備警報", "路單與圖表"):
        assert f"<h2>{heading}</h2>" in page, heading
    for cell in ("莊", "閒", "和", "閒對", "莊對", "莊家以 6 點勝", "共發四張牌", "百家樂（Punto Banco）",
                 "切牌卡已出", "相符", "是", "主管", "輸入牌", "洗牌機"):
        assert f"<td>{cell}</td>" in page, cell
    assert "牌靴無法讀取一張牌" in page and "virtual-supervisor (輸入牌)" in page
    assert page.count("<img alt='圖表' src='data:image/png;base64,") == 4
    # no heading, column or label of the English report is left in English
    left = _headings(english_html) & _headings(page)
    assert not left, left
    for word in ("Banker", "Player", "reconciled", "void rounds", "Net is", "None.", "yes<",
                 "the cut card came out", "Enter card", "<td>supervisor</td>"):
        assert word not in page, word


def test_the_report_takes_the_tables_language_and_refuses_an_unknown_one(journal, tmp_path,
                                                                         monkeypatch, capsys):
    out = tmp_path / "shoe.html"
    monkeypatch.setenv("TABLECTL_TABLE_LANGUAGE", "bn")       # [table] language
    assert main(["report", "--journal", str(journal), "--output", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "<html lang='bn'>" in page and "<h2>থামানো</h2>" in page
    assert "<td>৭৮</td>" in page                              # rounds in Bengali digits
    capsys.readouterr()
    assert main(["report", "--journal", str(journal), "--language", "klingon", "--output",
                 str(tmp_path / "x.pdf")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--language" in err and "klingon" in err
    assert not (tmp_path / "x.pdf").exists()


def test_numbers_are_written_for_the_locale():
    from controller.report.language import Speaker
    assert Speaker("en").fixed(-0.01234, 4, sign=True) == "-0.0123"
    assert Speaker("hi").fixed(123456.789, 2, sign=True) == "+1,23,456.79"   # Indian grouping
    assert Speaker("bn").percent(0.5) == "৫০.০০%"
    assert Speaker("zh_Hant").bet("cards_6_10") == "發出 6–10 張牌"


@pytest.mark.slow     # a whole PDF again, in Chinese: the HTML and the English PDF are quick
def test_the_pdf_in_chinese_is_written_with_its_text_whatever_the_fonts(journal, tmp_path,
                                                                         monkeypatch):
    from pypdf import PdfReader

    from controller.report import fonts
    out = tmp_path / "shoe.pdf"
    warned: list[dict] = []

    class Log:
        def warning(self, event, **fields):
            warned.append({"event": event, **fields})

    monkeypatch.setattr(fonts, "log", Log())
    assert main(["report", "--journal", str(journal), "--language", "zh_Hant", "--output",
                 str(out)]) == 0
    reader = PdfReader(out)
    assert reader.metadata.title == "牌桌報告：最近一靴（第 1 靴）"
    text = "\n".join(p.extract_text() for p in reader.pages)
    for said in ("牌靴", "各注項結果", "閒對", "暫停", "覆核操作", "珠盤路", "大路", "第 1 靴：路單",
                 "每小時局數（UTC）", "結果與理論機率對照"):
        assert said in text, said
    for english in ("SHOES", "HOLDS", "RESULTS PER BET", "Bead plate", "Rounds per hour"):
        assert english not in text, english
    # a font for Chinese or not, never more than the one warning that names what to install
    assert len(warned) <= 1
    assert not warned or warned[0]["install"] == "Debian's fonts-noto-cjk"
    # a machine without one: the PDF is written all the same, and the log says so once
    warned.clear()
    monkeypatch.setattr(fonts, "font_for", lambda language: None)
    assert main(["report", "--journal", str(journal), "--language", "zh_Hant", "--output",
                 str(out)]) == 0
    assert len(PdfReader(out).pages) >= 5
    [warning] = warned
    assert warning["font"] == "Noto Sans CJK TC" and "fonts-noto-cjk" in warning["install"]
