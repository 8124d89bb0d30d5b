"""What people read: one message catalogue, in every language, with no name of the machine in it.

- every message renders in every language with its placeholders filled, and each translation
  has the English's placeholders (no more, no fewer);
- no message, in any language, and no console screen of a real table (every hold a shoe can
  meet) shows a state, trigger, step, action or problem as the program spells it;
- refusals carry their words; the machine's own refusal text stays in the log;
- the gettext catalogues are in step with the catalogue, and `[table] language` reaches the
  dealer's prompts (`TABLECTL_TABLE_LANGUAGE=zh_Hant tablectl run`).
"""
from __future__ import annotations

import os
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest

from controller.access import roles
from controller.console import text
from controller.errors import CommandRefused
from controller.settings.profile import load_profile
from controller.table import Table
from controller.games import get_rules
from controller.table.handlers import HANDLERS
from controller.table.legal import KINDS
from controller.table.machine import machine_for, moves_for, state_names
from controller.words import LANGUAGES, SOURCE, Words, normalise, render, words_of
from controller.words.catalogue import MESSAGES
from controller.words.fields import template, translations
from controller.words.problems import problem_words

ROOT = Path(__file__).resolve().parents[1]
#: a value for each placeholder name the catalogue uses
SAMPLE = {
    "n": 3, "card": "TH", "cards": ["9H", "KD"], "extra": ["6S"], "missing": ["TD", "2C"],
    "state": "dealing.P2", "step": "player_third",
    "decision": "player_draw", "choices": [True, False], "problem": Words("problem.hold"),
    "counted": 415, "expected": 416, "device": "shoe", "alarm": "E3", "note": "dispute",
    "action": "enter_card", "actions": ["resume", "void_round"], "kind": "card_not_due",
    "seat": 5, "banker": 2, "player": 3, "least": 1, "user": "olga", "role": "auditor",
    "roles": ["supervisor"], "arg": "Card", "table": "T1", "profile": "macau",
    "game": "punto_banco", "mode": "default", "decks": 8, "shoe": 4, "out": 57,
    "broker": "mqtt://floor", "decisions": {"player_draw": True}, "why": "no controller",
    "seconds": 1.0, "time": "12:00:00", "text": "head dirty", "label": "Note", "what": "Hold",
    "rank": "A", "suit": "S", "winner": "BANKER",
    "start": "2026-12-01 08:00", "end": "2026-12-01 14:00", "path": "var/journal.db",
    "low": 1, "high": 5, "min": 100, "max": 10000, "done": 2000, "total": 30000,
    "cut": 402, "shown": "9♥ K♦", "reason": Words("end.cut_card"),
    "kinds": [Words("kind.foreign_card")], "round": 12, "seq": "118", "sha": "b1979dd8b22c",
    "first": "109", "last": "127", "result": "2026-12-01 08:01:02.345 UTC",
    "revealed": "2026-12-01 08:01:09.000 UTC", "asked": 10, "source": "var/journal.db",
    "bets": "Banker +0.95", "before": "on hold", "after": "between rounds", "code": "E3",
    "count": 416, "model": "SIM-SHUFFLER-12", "serial": "SIM-000001", "firmware": "sim-1.0.0",
    "status": "complete", "void": 0, "demo": 1, "hint": "the card, e.g. 9H", "all": 45,
    "by": "sam",
}


def _profile(game: str = "macau"):
    return load_profile(game)


def internal_names() -> set[str]:
    """Every name of the machine a person must never read: states (dealing.<step>), triggers,
    steps, actions and kinds of problem as the program spells them."""
    names: set[str] = set()
    for profile in ("macau", "andar-bahar", "chemin-de-fer", "baccarat-banque"):
        rules = get_rules(_profile(profile).game)
        names |= set(state_names(rules.procedure))
        names |= {m.trigger for m in moves_for(rules.game)}
        names |= set(rules.procedure.steps)
    names |= set(HANDLERS) | set(roles.ACTIONS) | set(KINDS)
    names |= {"card_while_betting", "player_third", "banker_third", "open_bets"}
    # plain English words that are also names (hold, burn, idle…) are sentences' words;
    # only a name no sentence would use is sought: with '_' or '.', or a step like P1
    return {n for n in names if "_" in n or "." in n or re.fullmatch(r"[A-Z]\d", n)}


NAMES = internal_names()
_NAME_RE = re.compile("|".join(rf"(?<![\w.]){re.escape(n)}(?![\w.])"
                               for n in sorted(NAMES, key=len, reverse=True)))


def leaks(shown: str) -> list[str]:
    return _NAME_RE.findall(shown)


def placeholders(message: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(message) if f}


def test_the_scan_knows_the_names_it_looks_for():
    assert {"dealing.P1", "player_third", "open_bets", "card_while_betting", "void_round",
            "next_banker_third", "hold.dealing.P1", "P1", "B2"} <= NAMES
    assert leaks("Deal Player's third card (player_third)") == ["player_third"]
    assert leaks("not possible while the table is dealing.P1") == ["dealing.P1"]
    assert not leaks("Deal the Player's third card; hold on")


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_message_renders_in_every_language(language):
    assert translations(language) is not None
    for code, english in MESSAGES.items():
        forms = english if isinstance(english, tuple) else (english,)
        wanted = set().union(*(placeholders(f) for f in forms))
        for n in (1, 2, 5):
            said = template(code, language, n)
            assert said, (language, code)
            assert placeholders(said) <= wanted, (language, code, said)
            if language != SOURCE and code not in ("console.pin", "console.alarm_line"):
                # translated, not left in English (names of cards' ranks may stay letters)
                assert said not in forms or code.startswith("card.rank."), (language, code)
        missing = wanted - set(SAMPLE)
        assert not missing, (code, missing)
        shown = render(Words(code, {k: SAMPLE[k] for k in wanted}), language)
        assert "{" not in shown and "}" not in shown and "?" not in shown, (language, code)
        assert not leaks(shown), (language, code, shown)


def test_cards_and_numbers_are_written_for_the_locale():
    card = Words("problem.face_up_card", {"card": "QS"})
    assert render(card, "en") == "queen of spades came out of the shoe face up."
    assert render(card, "zh_Hant") == "黑桃Q從牌靴出來時牌面朝上。"
    assert "हुकुम का बेगम" in render(card, "hi")
    assert "ইস্কাপন-এর বিবি" in render(card, "bn")
    assert "ควีน โพดำ" in render(card, "th")
    shoe = Words("console.shoe", {"shoe": 12, "out": 1234, "n": 2})
    assert render(shoe, "en") == "Shoe 12: 1,234 cards out, 2 rounds"
    assert render(shoe, "bn") == "শু ১২: ১,২৩৪টি তাস বেরিয়েছে, ২ রাউন্ড"      # Bengali digits
    assert render(Words("prompt.burn_more", {"n": 1}), "en") == "Burn 1 more card"
    assert render(Words("prompt.deal", {"step": "B1", "game": "baccarat_banque"}), "en") == \
        "Deal the bank's first card"
    assert normalise("zh-hant") == "zh_Hant" and normalise("zh_TW") == "zh_Hant"
    with pytest.raises(ValueError):
        normalise("klingon")


def test_the_gettext_catalogues_are_in_step_with_the_catalogue():
    from controller.words import pot
    assert pot.run(check=True) == 0


def _hold_views() -> list[dict]:
    """A real table's view at every kind of hold it can reach, and in between."""
    from controller.table.inputs import parse_input
    views = []

    def sup(action, **args):
        return {"type": "command", "action": action, "args": args, "user": "s",
                "role": "supervisor", "reason": "r"}

    t = Table(_profile(), auto_open=False)
    t.apply(sup("new_shoe"))
    views.append(t.view())
    t.apply({"type": "read_failed", "reason": "E3"})          # a misread in the shoe's burn
    views.append(t.view())
    assert "void_round" not in t.view()["hold"]["actions"]
    assert "void_round" not in text.hold_text(t.view()["hold"]).plain.replace(" ", "_")
    t.apply(sup("enter_card", code="5H"))
    burn = iter("KD 3S 8H JC 2D 9S 4H QC 7D 6S".split())
    while t.state != "idle":
        t.apply({"type": "card", "code": next(burn)})
    views.append(t.view())
    t.apply({"type": "card", "code": "9D"})                    # no card due
    views.append(t.view())
    t.apply(sup("burn_card"))
    t.apply(sup("open_bets"))
    t.apply(sup("close_bets"))
    t.apply({"type": "card", "code": "9H"})
    views.append(t.view())
    assert "end_shoe" not in t.view()["actions"]               # a round is being dealt
    t.apply(parse_input({"type": "card", "code": "AS", "flags": {"face_up": True}}))
    t.apply(sup("hold", note="dispute"))
    views.append(t.view())
    try:
        t.apply(sup("open_bets"))
    except CommandRefused as err:
        views.append({"refusal": words_of(err).as_dict()})
    t.apply({"type": "link_lost", "device": "shoe", "reason": "cable"})
    views.append(t.view())
    t.apply({"type": "alarm", "device": "shuffler", "code": "JAM", "text": "jam"})
    views.append(t.view())
    return views


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_console_screen_shows_a_name_of_the_machine(language):
    for view in _hold_views():
        if "refusal" in view:
            shown = render(view["refusal"], language)
        else:
            view = dict(view, table="T1", alarms=[{"source": "dealer", "code":
                                                   "supervisor_called", "text": "ana",
                                                   "severity": "warning"}])
            shown = "\n".join([
                text.header_text(view, language).plain, text.prompt_text(view, language),
                text.round_text(view.get("round"), view.get("hold"), language).plain,
                text.hold_text(view.get("hold"), language).plain if view.get("hold") else "",
                text.dealer_hold_text(view, language),
                text.alarms_text(view["alarms"], language).plain,
                " ".join(text.title(a, language) for a in text.offered(view))])
        assert not leaks(shown), (language, leaks(shown), shown)
        assert "Can't trigger" not in shown


def test_the_hold_problem_is_said_once_without_the_log_detail():
    held = {"problems": [{"kind": "unreadable_card", "detail": "the shoe could not read a card "
                          "(E3); enter its code or void the round", "card_index": 3}],
            "actions": ["enter_card", "void_round"], "resume_to": "dealing.P2"}
    shown = text.hold_text(held).plain
    assert shown.count("could not read a card") == 1 and "E3" not in shown
    assert text.hold_text(held, role="dealer").plain.count("[") == 0     # nothing for a dealer
    assert "Wait for a supervisor" in text.hold_text(held, role="dealer").plain


def test_refusals_carry_plain_words_and_the_library_text_goes_to_the_log(caplog):
    t = Table(_profile(), auto_open=False)
    refused = t.apply_safely({"type": "command", "action": "close_bets", "args": {},
                              "user": "d", "role": "dealer"})    # no move from where it is
    said = words_of(refused.refused)
    assert said is not None and said.code == "refuse.not_now"
    assert "trigger" not in str(refused.refused) and not leaks(str(refused.refused))
    for language in LANGUAGES:
        assert not leaks(render(said, language))
    t.apply({"type": "command", "action": "new_shoe", "args": {}, "user": "s",
             "role": "supervisor", "reason": "r"})
    out = t.apply_safely({"type": "command", "action": "resume", "args": {}, "user": "s",
                          "role": "supervisor", "reason": "r"})
    assert words_of(out.refused).code == "refuse.not_on_hold"
    assert render(words_of(out.refused), "zh_Hant") == "本桌沒有暫停（牌靴已裝入，等待燒牌）。"


def test_the_forbidden_refusal_names_the_role_in_plain_words():
    said = Words("refuse.forbidden", {"user": "olga", "role": "auditor", "roles": ["supervisor"]})
    assert render(said, "en") == "olga has the role auditor; this needs the role supervisor."
    assert "a auditor" not in render(said, "en")


def test_problem_words_use_what_the_table_recorded():
    assert render(problem_words({"kind": "count_mismatch", "counted": 415, "expected": 416}),
                  "en") == "The shuffler counted 415 cards; this shoe must hold 416."
    assert problem_words({"kind": "no such kind"}).code == "problem.unknown"
    assert problem_words({"kind": "unreadable_card", "during": "burn"}).code == \
        "problem.unreadable_card_burn"


def test_run_prompts_in_the_tables_language(tmp_path):
    env = dict(os.environ, TABLECTL_TABLE_LANGUAGE="zh_Hant", TABLECTL_CONFIG="/nonexistent")
    env.pop("TABLECTL_CONFIG")
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "run", "--config",
         str(ROOT / "config" / "table.toml"), "--journal", str(tmp_path / "j.db"),
         "--shoes", "1", "--pace", "0", "--no-control", "--seed", "3"],
        cwd=tmp_path, env=dict(env, PYTHONPATH=str(ROOT)), capture_output=True, text=True,
        timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    # the embedded simulator deals: every prompt says so first
    prompts = [line[len("   > 模擬器: "):] for line in done.stdout.splitlines()
               if line.startswith("   > ")]
    assert all(line.startswith("   > 模擬器: ") for line in done.stdout.splitlines()
               if line.startswith("   > "))
    assert "裝入新牌靴" in prompts and "翻開第一張燒牌" in prompts
    assert any(p.startswith("發閒家") for p in prompts)
    assert not any(leaks(p) for p in prompts)
    # the journal stays language-neutral: no Chinese in it
    from controller.journal import Journal
    with Journal.open_readonly(tmp_path / "j.db") as j:
        assert not any(re.search(r"[\u4e00-\u9fff]", str(r.data)) for r in j.records())


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_service_condition_is_told_in_words_not_by_its_name(language):
    """No shoe yet, or software not accepted: the prompt event, the console's state, its
    header and its prompt say so in the reader's language; the log line keeps the port."""
    from controller.journal import Journal
    from controller.service.clock import VirtualClock
    from controller.service.conditions import Gate
    from controller.service.control import ControlAdapter, Memory
    from controller.service.inputs import Query
    from controller.service.loop import TableService
    from controller.service.parts import Tap
    from controller.service.tablepc import NO_DEVICES, NO_SHOE_WORDS, waiting_line
    from controller.service.recovery import open_table

    class Prompts:
        def __init__(self) -> None:
            self.seen: list[dict] = []

        def publish(self, e: dict) -> None:
            if e.get("event") == "prompt":
                self.seen.append(e)

    with Journal(":memory:") as journal:
        table, _ = open_table(_profile(), journal)
        svc = TableService(table, journal, VirtualClock())
        prompts = Prompts()
        svc.connect(prompts, Tap.OUTWARD)
        adapter = ControlAdapter(svc, ":memory:", Memory())

        def state() -> dict:
            query = Query(lambda t: adapter._state(t))
            svc.submit(query)
            svc.run()                       # on a virtual clock: until nothing is left to do
            return query.reply.result(timeout=5)

        line = waiting_line("/dev/ttyNOPE: no such port")
        svc.conditions.set(NO_DEVICES, line, NO_SHOE_WORDS)
        assert prompts.seen[-1]["text"] == line and "/dev/ttyNOPE" in line    # for the log
        assert prompts.seen[-1]["words"] == NO_SHOE_WORDS.as_dict()
        view = state()
        shown = text.header_text(view, language).plain + "\n" + text.prompt_text(view, language)
        assert render(NO_SHOE_WORDS, language) in shown
        assert template("console.condition.no_devices", language) in shown
        assert "no_devices" not in shown.lower() and "/dev/tty" not in shown
        svc.conditions.shut(Gate("software", "HELD: not approved", "accept_software",
                           Words("prompt.software_held")))
        svc.conditions.set(NO_DEVICES, None)                # the shoe is there; the gate is not
        view = state()
        shown = text.header_text(view, language).plain + "\n" + text.prompt_text(view, language)
        assert render(Words("prompt.software_held"), language) in shown
        assert template("console.condition.software", language) in shown
        assert "accept_software" not in shown and "HELD" not in shown
        svc.conditions.open()
        assert prompts.seen[-1]["words"] == table.prompt_words().as_dict()
        assert text.prompt_text(state(), language) == render(table.prompt_words(), language)
