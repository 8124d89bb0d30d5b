"""`tablectl report`: a simulated shoe (with a misread the supervisor clears) to a PDF whose
pages hold the tables, the roads and the charts, read back with pypdf; and to HTML. In the
reader's language: the Chinese HTML and PDF (its text layer: the machine may have no font to
draw Chinese with), the table's language by default, an unknown one refused."""
from __future__ import annotations

import re

import pytest

from controller.cli import main
from controller.journal import Journal
from controller.report.collect import collect, parse_time


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


def test_the_html_speaks_the_readers_language(journal, tmp_path):
    english, chinese = tmp_path / "en.html", tmp_path / "zh.html"
    assert main(["report", "--journal", str(journal), "--output", str(english)]) == 0
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
    left = _headings(english.read_text(encoding="utf-8")) & _headings(page)
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
