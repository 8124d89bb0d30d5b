"""The players' scoreboard in a real browser: headless Chromium (Debian's chromium and
chromium-driver, through Selenium) watches `tablectl run` deal on the embedded simulator (in
Traditional Chinese, `TABLECTL_TABLE_LANGUAGE=zh_Hant`), sees new results arrive without a
reload, every drawn road cell agree with /api/roads and the SIMULATOR ribbon on both pages; and
the dealer's page of a table on hold says the hold in the table's words, never in English.

Skipped where Chromium is not installed, except in CI (`CI` set), where .ci/run installs it."""
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
ROADS = ("bead_plate", "big_road", "big_eye_boy", "small_road", "cockroach_pig")
NEW_RESULTS = 4            # results the page must take live, one after another
# a headless Chromium drives the pages: the slow run (test_display checks what they serve)
pytestmark = pytest.mark.slow


def _missing() -> str:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install '.[test]')"
    if not (CHROMIUM and DRIVER):
        return "chromium and chromium-driver are not installed (apt-get install them)"
    return ""


if _missing() and not os.environ.get("CI"):
    pytest.skip(_missing(), allow_module_level=True)


@pytest.fixture
def table(tmp_path):
    """`tablectl run` on the embedded simulator with the display on a free loopback port, the
    table's language Traditional Chinese."""
    cmd = [sys.executable, "-m", "controller.cli", "run", "--config", "config/table.toml",
           "--pace", "0.02", "--seed", "3", "--no-control", "--journal", str(tmp_path / "j.db"),
           "--http", "127.0.0.1:0", "--json"]
    log = tmp_path / "run.err"      # a file, not a pipe: nobody must have to keep reading it
    env = dict(os.environ, TABLECTL_TABLE_LANGUAGE="zh_Hant")
    with open(log, "w") as err:
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err, env=env)
    try:
        def url():
            found = re.search(r"web display at (http://\S+)", log.read_text())
            return found.group(1) if found else proc.poll() is not None and "exited"
        found = wait("the display's URL", url)
        assert found != "exited", log.read_text()
        yield found
    finally:
        proc.terminate()
        try:
            assert proc.wait(timeout=15) == 0, log.read_text()   # SIGTERM: a clean stop
        finally:
            proc.kill()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """One headless Chromium for every test of the module."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    assert not _missing(), _missing()
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={tmp_path_factory.mktemp('chromium')}",
                 "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def wait(what, until, timeout=20.0, every=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = until()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out waiting for {what}")


DRAWN = """
const out = {};
for (const g of document.querySelectorAll('[data-road]')) {
  (out[g.dataset.road] = out[g.dataset.road] || []).push(
    [+g.dataset.col, +g.dataset.row, g.dataset.winner || g.dataset.colour]);
}
return {cells: out, roads: window.scoreboard.data && window.scoreboard.data.roads,
        renders: window.scoreboard.renders, marker: window.__sameLoad || null};
"""


def expected_cells(roads: dict) -> dict:
    out = {"bead_plate": [[c["col"], c["row"], c["winner"]] for c in roads["bead_plate"]]}
    for road in ROADS[1:]:
        key = "winner" if road == "big_road" else "colour"
        out[road] = [[c["col"], c["row"], c[key]] for c in roads[road]["entries"]]
    return {k: v for k, v in out.items() if v}


#: a word written in Latin letters (a card's rank is one letter: K♦, 10♠)
ENGLISH = re.compile(r"[A-Za-z]{2,}")


def ribbon(browser) -> str:
    """The SIMULATOR ribbon's words while it is shown, else ""."""
    node = browser.find_element("id", "simulator")
    return node.text if node.is_displayed() else ""


def test_the_scoreboard_updates_live_and_draws_what_the_api_says(table, browser):
    browser.get(table)
    browser.execute_script("window.__sameLoad = 'yes'")
    # a simulated table says so, in its language, above everything else
    assert wait("the SIMULATOR ribbon", lambda: ribbon(browser)) == "模擬器"
    assert browser.execute_script("return document.documentElement.lang") == "zh-Hant"
    assert browser.find_element("id", "section-bead_plate").text.startswith("珠盤路")
    first = wait("a first result on the page", lambda: browser.execute_script(
        "const r = window.scoreboard.renders; return r.length && r[r.length - 1].round"))
    # new results arrive on the same page, without a reload
    rounds = wait(f"{NEW_RESULTS} new results", lambda: (lambda r: r if len(r) > NEW_RESULTS
                  else None)(sorted({x["round"] for x in browser.execute_script(
                      "return window.scoreboard.renders") if x["round"] and x["round"] >= first})))
    # the page and the API at the same moment: every drawn cell is a cell of the JSON
    def api_roads():
        roads = json.load(urllib.request.urlopen(table + "api/roads", timeout=5))
        assert roads.pop("schema_version") == 1         # the contract's version, not a road
        return roads

    def same():
        before = api_roads()
        page = browser.execute_script(DRAWN)
        after = api_roads()
        return (before, page) if before == after == page["roads"] else None
    roads, page = wait("the page and /api/roads on the same round", same)
    assert page["marker"] == "yes"
    assert roads["counts"]["rounds"] >= NEW_RESULTS
    assert page["cells"] == expected_cells(roads)
    # each new result drawn within a second of its publication (the page's first drawing, on
    # loading, shows a result published before the page existed)
    renders = page["renders"]
    late = [r["drawn_at"] - r["shown_at"] for prev, r in zip(renders, renders[1:])
            if r["shown_at"] and (r["shoe"], r["round"]) != (prev["shoe"], prev["round"])]
    assert late and max(late) < 1.0, late
    assert not ENGLISH.findall(browser.find_element("tag name", "body").text)
    # the dealer's page: the prompt the table gives, live, in the table's language
    browser.get(table + "dealer")
    link = browser.find_element("id", "link")
    prompt = wait("the dealer's prompt", lambda: (lambda text: text != "等待牌桌…" and text)(
        browser.find_element("id", "prompt").text))
    assert "up" in link.get_attribute("class").split() and link.text == "即時"
    assert ribbon(browser) == "模擬器"
    assert not ENGLISH.findall(browser.find_element("tag name", "body").text)


def test_the_dealers_page_says_a_hold_in_the_tables_words(browser):
    """A table that is not simulated, on hold in the middle of a round: the dealer's page says
    the hold as the catalogue words it, every label in Chinese, and no SIMULATOR ribbon."""
    from controller import display
    from controller.display.server import bind
    from controller.words import Words, render
    sock = bind("127.0.0.1:0")
    hub, server = display.start(sock, language="zh_Hant", simulator=False)
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/"
    events = [
        {"event": "shoe_started", "shoe": 1, "game": "punto_banco"},
        {"event": "round_started", "shoe": 1, "round": 1},
        {"event": "round_result", "shoe": 1, "round": 1, "game": "punto_banco",
         "winner": "player", "player": ["9H", "KD"], "banker": ["2C", "3C"],
         "player_total": 9, "banker_total": 5, "natural": True},
        {"event": "round_started", "shoe": 1, "round": 2},
        {"event": "card", "shoe": 1, "round": 2, "slot": "P1", "code": "KD"},
        {"event": "prompt", "words": {"code": "prompt.deal", "fields": {"step": "B1"}}},
    ]
    try:
        for seq, e in enumerate(events, 1):
            hub.publish(dict(e, seq=seq))
        hub.on_status({"event": "status", "state": "hold", "shoe": 1, "round": 2,
                       "hold": {"kind": "unreadable_card", "detail": "E3 at card 5"}})
        said = render(Words("dealer.unreadable_card"), "zh_Hant")
        browser.get(url + "dealer")
        shown = wait("the hold", lambda: browser.find_element("id", "prompt").text == said
                     and browser.find_element("tag name", "body").text)
        assert browser.find_element("id", "hold").text == "牌桌暫停"
        assert browser.find_element("id", "where").text == "第 1 靴 · 第 2 局"
        assert browser.find_element("css selector", "[data-hand=player] .hand-name").text == "閒"
        assert browser.find_element("id", "last").text == "第 1 局: 閒 (9–5)"
        assert "Stop" not in shown and "supervisor" not in shown and "E3" not in shown
        assert not ENGLISH.findall(shown) and not ENGLISH.findall(browser.title), shown
        assert ribbon(browser) == ""
        # the players' page of the same table, in the same words
        browser.get(url)
        shown = wait("the last result", lambda: browser.find_element("id", "last-winner").text
                     == "閒勝" and browser.find_element("tag name", "body").text)
        assert "莊問路" in shown and "閒 1" in shown and ribbon(browser) == ""
        assert not ENGLISH.findall(shown) and not ENGLISH.findall(browser.title), shown
    finally:
        server.close()
