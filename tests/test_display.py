"""The web display without a browser: what may be shown (the reveal rule), the HTTP and SSE
endpoints of a real server, and the listening address."""
import http.client
import json
import re
import socket
from dataclasses import replace
from pathlib import Path

import pytest

from controller import display
from controller.cli import main
from controller.display.pages import labels, page
from controller.display.public import PublicView, hand_of
from controller.reveal import RevealGate
from controller.display.server import Repeats, bind
from controller.settings.listen import parse_listen
from controller.errors import InputError
from controller.settings.profile import load_profile
from controller.table import Table
from controller.words import LANGUAGES, Words, render
from tests.tablekit import BURN_TWO, deal, new_shoe, of

ASSETS = Path(display.__file__).with_name("assets")


@pytest.fixture(scope="module")
def reveal_events(tmp_path_factory):
    """A shoe's first rounds as an on_reveal table publishes them (the dealer reveals each)."""
    t = Table(replace(load_profile("macau"), reveal="on_reveal"))
    events = new_shoe(t, cut_position=300) + deal(t, BURN_TWO)
    codes = "9H 4S 7H KS 2D  AD 8S 8H 9H  3C 3D KD TC 5S 6H  QH 2S JS 7D".split()
    for code in codes:
        events += deal(t, [code])
        if t.expects() == "reveal":
            events += t.apply({"type": "command", "action": "reveal", "user": "dee",
                               "role": "dealer"})
    assert len(of(events, "reveal")) == 4
    return [dict(e, seq=i + 1) for i, e in enumerate(events)]


def test_nothing_of_an_unrevealed_round_is_shown(reveal_events):
    view = PublicView()
    read: set = set()          # rounds whose result is read but not revealed
    revealed: set = set()
    for e in reveal_events:
        view.publish(e)
        key = (e.get("shoe"), e.get("round"))
        if e["event"] == "round_result":
            read.add(key)
        elif e["event"] == "reveal":
            read.discard(key)
            revealed.add(key)
        roads, dealer = view.roads_json(), view.dealer()
        assert {(roads["shoe"], c["round"]) for c in roads["bead_plate"]} == revealed
        assert roads["counts"]["rounds"] == len(revealed)
        last = dealer["last_result"]
        assert last is None or (last["shoe"], last["round"]) in revealed
        assert view.scoreboard()["last_result"] == last
        if (view.shoe, view.round) not in revealed:
            assert all(c["code"] is None for c in dealer["cards"]), e
        elif e["event"] == "reveal":          # turned over: the dealer's page shows them
            assert dealer["cards"] and all(c["code"] for c in dealer["cards"])


def test_on_read_shows_cards_and_results_at_once():
    view = PublicView()
    view.publish({"event": "shoe_started", "shoe": 1, "game": "punto_banco", "seq": 1})
    view.publish({"event": "round_started", "shoe": 1, "round": 1, "seq": 2})
    view.publish({"event": "card", "shoe": 1, "round": 1, "slot": "P1", "code": "9H", "seq": 3})
    assert view.dealer()["cards"] == [{"hand": "player", "code": "9H"}]
    view.publish({"event": "round_result", "shoe": 1, "round": 1, "winner": "player",
                  "player": ["9H", "KD"], "banker": ["2C", "3C"], "bets": {"player": 1},
                  "irregularities": ["x"], "seq": 4})
    assert view.last_result == {"shoe": 1, "round": 1, "winner": "player",
                                "player": ["9H", "KD"], "banker": ["2C", "3C"]}
    assert view.publish({"event": "round_result", "shoe": 1, "round": 1, "seq": 4}) == set()


def test_events_read_back_and_republished_after_a_restart_count_once(reveal_events):
    once, twice = PublicView(), PublicView()
    for e in reveal_events:
        once.publish(e)
    half = len(reveal_events) // 2
    for e in reveal_events[:half + 10] + reveal_events[half:]:   # the journal, then the live
        twice.publish(e)
    assert twice.roads_json() == once.roads_json() and once.roads_json()["counts"]["rounds"] == 4


def test_a_hold_is_told_in_words_never_with_its_detail():
    view = PublicView()
    view.publish({"event": "prompt", "text": "Deal Player's second card (P2)"})
    view.publish({"event": "status", "state": "hold", "hold": {
        "kind": "restart_review", "detail": "check {'player': ['9H']}", "layout": {}}})
    dealer = view.dealer()
    assert "9H" not in json.dumps(dealer) and dealer["hold"]
    assert dealer["prompt"] == dealer["hold"]


def test_the_views_say_simulator_and_the_hold_in_the_tables_words():
    view = PublicView(language="zh_Hant", simulator=True)
    view.publish({"event": "prompt", "words": {"code": "prompt.deal", "fields": {"step": "P2"}}})
    assert view.dealer()["prompt"] == "發閒家第二張牌" and view.dealer()["hold"] is None
    view.publish({"event": "status", "state": "hold", "hold": {"kind": "unreadable_card"}})
    dealer, scoreboard = view.dealer(), view.scoreboard()
    said = render(Words("dealer.unreadable_card"), "zh_Hant")
    assert dealer["prompt"] == dealer["hold"] == said == "牌靴無法讀牌。請等候主管。"
    assert dealer["simulator"] is scoreboard["simulator"] is True
    plain = PublicView()
    assert plain.dealer()["simulator"] is plain.scoreboard()["simulator"] is False


def test_the_players_view_names_the_table_counts_down_the_bets_and_says_a_hold():
    view = PublicView(table="T7", game="punto_banco", limits={"min": 100, "max": 5000})
    board = view.scoreboard()
    assert (board["table"], board["game"], board["limits"]) == ("T7", "punto_banco",
                                                               {"min": 100, "max": 5000})
    assert board["betting"] is None and board["hold"] is False
    # bets open for 20 s, received at t=1000: they close at 1020 on the server's clock
    assert view.publish({"event": "bets_open", "shoe": 1, "round": 4, "closes_in_s": 20.0,
                         "seq": 5}, now=1000.0) == {"scoreboard"}
    assert view.scoreboard()["betting"] == {"round": 4, "closes_at": 1020.0}
    # a window read back from the journal (no arrival time) is long past: not counted down
    replay = PublicView()
    replay.publish({"event": "bets_open", "shoe": 1, "round": 4, "closes_in_s": 20.0})
    assert replay.scoreboard()["betting"] is None
    # a hold: the players are told so (never why), and no bet is taken meanwhile
    changed = view.publish({"event": "status", "state": "hold", "shoe": 1, "round": 4,
                            "hold": {"kind": "unreadable_card", "detail": "E3"}})
    assert "scoreboard" in changed
    board = view.scoreboard()
    assert board["hold"] is True and board["betting"] is None
    assert "unreadable_card" not in str(board) and "E3" not in str(board)
    view.publish({"event": "status", "state": "betting", "shoe": 1, "round": 4, "hold": None})
    assert view.scoreboard()["hold"] is False
    view.publish({"event": "bets_open", "shoe": 1, "round": 5, "closes_in_s": 20.0, "seq": 9},
                 now=1100.0)
    view.publish({"event": "bets_closed", "shoe": 1, "round": 5, "seq": 10}, now=1105.0)
    assert view.scoreboard()["betting"] is None


def test_the_pages_words_come_from_the_catalogue_in_every_language():
    english = labels("en")
    # every label a script asks for (by name, or by a prefix and a hand, winner, count…) exists
    scripts = "".join(f.read_text() for f in ASSETS.glob("*.js"))
    asked = set(re.findall(r'label\("([\w.]+)"\)', scripts)) | \
        set(re.findall(r'label\("([\w.]+)", \{', scripts))
    prefixes = set(re.findall(r'label\("([\w.]+\.)" \+', scripts))
    assert {"on_hold", "round", "shoe", "live", "waiting_result", "wins"} <= asked
    assert {"hand.", "winner.", "count.", "bead.", "colour."} <= prefixes
    assert asked <= set(english), asked - set(english)
    for prefix in prefixes:
        assert [k for k in english if k.startswith(prefix)], prefix
    for key in {"player", "banker", "burn", "game_card", "andar", "bahar", "right", "left", "bank"}:
        assert f"hand.{key}" in english
    assert english["simulator"] == "SIMULATOR" and english["on_hold"] == "TABLE ON HOLD"
    # no sentence the dealer's page once wrote itself
    assert "Stop: wait for the supervisor" not in scripts and "HOLD —" not in scripts
    for language in LANGUAGES:
        said = labels(language)
        assert set(said) == set(english)
        for key, text in said.items():
            if language != "en":
                assert text != english[key], (language, key)
    chinese = labels("zh_Hant")
    assert chinese["simulator"] == "模擬器" and chinese["hand.player"] == "閒"
    assert chinese["bead_plate"] == "珠盤路" and chinese["round"] == "第 {n} 局"
    assert not [t for t in chinese.values() if re.search(r"[A-Za-z]", re.sub(r"\{\w+\}", "", t))]
    # the pages: their lang, their fixed words and the labels for the scripts, nothing left over
    dealer = page("dealer.html", "zh_Hant")
    assert '<html lang="zh-Hant">' in dealer and "<title>荷官</title>" in dealer
    assert "{{" not in dealer and "等待牌桌…" in dealer and "模擬器" in dealer
    found = re.search(r'<script id="labels" type="application/json">(.*?)</script>', dealer)
    assert found and json.loads(found.group(1)) == dict(chinese)
    index = page("index.html", "zh_Hant")
    assert "{{" not in index and ">大路 <" in index and "曱甴路" in index
    assert '<html lang="en">' in page("index.html", "en")


def test_the_reveal_gate_drops_what_a_shoe_ended_before_revealing():
    gate = RevealGate()
    assert gate.publish({"event": "round_result", "shoe": 1, "round": 5, "reveal": "pending"}) == []
    assert gate.publish({"event": "shoe_ended", "shoe": 1}) == []
    assert gate.publish({"event": "reveal", "shoe": 1, "round": 5}) == []
    assert hand_of("B1", "baccarat_banque") == "bank" and hand_of("banker_third") == "banker"


# --------------------------------------------------------------------------- a real server
def get(port: int, path: str) -> tuple[int, dict, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", path)
    resp = conn.getresponse()
    return resp.status, dict(resp.getheaders()), resp.read()


def sse(port: int, path: str, messages: int) -> list[dict]:
    """The first `messages` events of a stream, parsed."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    conn.request("GET", path)
    resp = conn.getresponse()
    assert resp.status == 200 and resp.getheader("content-type").startswith("text/event-stream")
    out = []
    while len(out) < messages:
        line = resp.fp.readline().decode()
        if line.startswith("data: "):
            out.append(json.loads(line[len("data: "):]))
    conn.close()
    return out


def test_the_server_shows_nothing_of_an_unrevealed_round(reveal_events):
    first = next(i for i, e in enumerate(reveal_events) if e["event"] == "round_result")
    result = reveal_events[first]
    assert result["reveal"] == "pending" and result["round"] == 1
    codes = result["player"] + result["banker"]
    sock = bind("127.0.0.1:0")
    port = sock.getsockname()[1]
    hub, server = display.start(sock)
    try:
        for e in reveal_events[:first + 1]:
            hub.publish(e)
        hub.on_status({"event": "status", "state": "idle", "expects": "reveal", "shoe": 1,
                       "round": 1})
        hub.publish({"event": "prompt", "text": "Reveal the cards"})
        hub.flush()
        pages = [get(port, p) for p in ("/", "/dealer", "/api/roads", "/api/state")]
        assert [status for status, _, _ in pages] == [200] * 4
        streamed = sse(port, "/events", 1) + sse(port, "/dealer/events", 1)
        seen = b"".join(body for _, _, body in pages) + json.dumps(streamed).encode()
        assert not [c for c in codes if c.encode() in seen]      # round 1's cards: nowhere
        roads = json.loads(pages[2][2])
        assert roads["bead_plate"] == [] and roads["counts"]["rounds"] == 0
        state = json.loads(pages[3][2])
        assert state["prompt"] == "Reveal the cards" and state["last_result"] is None
        assert [c["code"] for c in state["cards"]] == [None] * len(codes)
        assert pages[0][1]["content-security-policy"].startswith("default-src 'self'")
        # the reveal: the same stream brings the result, and the roads have it
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("GET", "/events")
        stream = conn.getresponse()
        assert json.loads(_next_data(stream))["last_result"] is None
        hub.publish(reveal_events[first + 1])
        hub.flush()
        shown = json.loads(_next_data(stream))
        conn.close()
        assert shown["last_result"]["player"] == result["player"]
        assert [c["round"] for c in shown["roads"]["bead_plate"]] == [1]
        assert json.loads(get(port, "/api/roads")[2]) == {**shown["roads"], "schema_version": 1}
        assert get(port, "/api/roads")[0] == 200
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        conn.request("POST", "/api/roads")
        assert conn.getresponse().status == 405                  # read-only
    finally:
        server.close()


def test_the_server_says_simulator_in_the_tables_language():
    sock = bind("127.0.0.1:0")
    port = sock.getsockname()[1]
    hub, server = display.start(sock, language="zh_Hant", simulator=True)
    try:
        hub.on_status({"event": "status", "state": "hold", "hold": {"kind": "link_lost"}})
        status, headers, body = get(port, "/dealer")
        assert status == 200 and headers["content-type"].startswith("text/html")
        assert '<html lang="zh-Hant">' in body.decode() and "模擬器" in body.decode()
        assert '<html lang="zh-Hant">' in get(port, "/")[2].decode()
        state = json.loads(get(port, "/api/state")[2])
        held = render(Words("dealer.link_lost"), "zh_Hant")
        assert state["simulator"] is True and state["prompt"] == state["hold"] == held
        streamed = sse(port, "/events", 1) + sse(port, "/dealer/events", 1)
        assert [v["simulator"] for v in streamed] == [True, True]
        assert streamed[1]["prompt"] == held and "labels" not in streamed[0]
        # only the filled-in pages are served: the templates' slots never reach a browser
        assert [get(port, f"/assets/{n}.html")[0] for n in ("index", "dealer")] == [404, 404]
        assert "{{" not in get(port, "/dealer")[2].decode()
    finally:
        server.close()


def test_a_warning_repeated_by_a_flood_is_logged_a_few_times_a_minute_with_its_count():
    import logging
    now = [0.0]
    repeats = Repeats(per_minute=3, clock=lambda: now[0])

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("uvicorn.error", logging.WARNING, __file__, 1, msg, (), None)
    let = [repeats.filter(record("Invalid HTTP request received.")) for _ in range(1000)]
    assert let[:3] == [True] * 3 and not any(let[3:])
    assert repeats.filter(record("another line"))           # each message has its own count
    now[0] = 61.0
    later = record("Invalid HTTP request received.")
    assert repeats.filter(later)
    assert later.getMessage() == ("Invalid HTTP request received. (997 more like it in the "
                                  "minute before were not logged)")


def _next_data(stream) -> str:
    while True:
        line = stream.fp.readline().decode()
        if line.startswith("data: "):
            return line[len("data: "):]


def test_listen_addresses_and_a_busy_port(tmp_path, capsys):
    assert parse_listen("8080") == ("127.0.0.1", 8080)
    assert parse_listen(":8080") == ("127.0.0.1", 8080)
    assert parse_listen("0.0.0.0:80") == ("0.0.0.0", 80)
    assert parse_listen("[::1]:8080") == ("::1", 8080)
    for bad in ("host:80", "127.0.0.1:0x", "127.0.0.1:70000"):
        with pytest.raises(InputError):
            parse_listen(bad)
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        journal = tmp_path / "j.db"
        assert main(["run", "--config", "config/table.toml", "--no-control", "--journal",
                     str(journal), "--http", f"127.0.0.1:{port}"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "already in use" in err
        assert err.endswith("give another HOST:PORT (--http or [display] listen), or stop what "
                            "listens there"), err
        assert not journal.exists()                 # nothing was dealt or journaled
    finally:
        taken.close()

