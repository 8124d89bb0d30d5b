"""The published event contract: a faulted run's every event, the floor feed's views and the
web display's JSON validate against the shipped schema, and docs/events.md is its rendering.
(The golden runs are validated where they run: test_cli, test_games_pipeline.)"""
import json
from pathlib import Path

import pytest

from controller.cli import main
from controller.schema import SCHEMA_VERSION, event_kinds, schema
from controller.schema.render import render
from tests.eventcheck import check_events, check_payload

ROOT = Path(__file__).resolve().parents[1]
#: faults of the shoe, the link and the dealer in one shoe, and a shuffler that miscounts
FAULTS = ["misread@40", "double_draw@30", "triple_draw@90", "skip_burn@20", "noise@25",
          "foreign_card@70", "drop@120", "split@150", "count_mismatch@0"]
# one worker runs the module, so that its shoe is dealt once (`--dist loadgroup`)
pytestmark = pytest.mark.xdist_group("faulted_shoe")


def simulate(capsys, *args):
    assert main(["simulate", *args, "--json"]) == 0
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


@pytest.fixture(scope="module")
def faulted(tmp_path_factory):
    """One shoe on the framed protocol (face-up cards are signalled) with every fault above,
    the anchor key signing it, and an Andar Bahar deck with its own."""
    import contextlib
    import io
    tmp = tmp_path_factory.mktemp("faulted")
    assert main(["anchor-key", str(tmp / "key")]) == 0
    runs = [["--profile", "macau", "--seed", "5", "--shoe-protocol", "framed",
             "--fault", "face_up@33", "--journal", str(tmp / "j.db"), "--anchor-key",
             str(tmp / "key"), *[a for f in FAULTS for a in ("--fault", f)]],
            ["--profile", "andar-bahar", "--seed", "2", "--fault", "misread@10",
             "--fault", "foreign_card@20"]]
    events = []
    for args in runs:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["simulate", *args, "--json"]) == 0
        events += [json.loads(line) for line in out.getvalue().splitlines()]
    return events


def test_every_event_of_a_faulted_run_follows_the_contract(faulted):
    kinds = check_events(faulted)
    # the faults were met: holds, irregularities, overrides, a lost link reviewed, anchors
    assert {"hold", "irregularity", "override", "resume", "alarm", "link_review", "anchor",
            "reconciliation", "round_result", "card"} <= kinds, kinds
    assert kinds <= set(event_kinds())


def test_a_field_or_an_event_type_the_contract_does_not_know_is_caught(faulted):
    import jsonschema
    card = next(e for e in faulted if e["event"] == "card")
    with pytest.raises(AssertionError, match="does not describe"):
        check_payload({**card, "colour": "red"}, "event.card")
    with pytest.raises(jsonschema.ValidationError):
        check_payload({**card, "code": "1X"}, "event.card")
    with pytest.raises(jsonschema.ValidationError):
        check_events([{**card, "event": "teleport"}])
    result = next(e for e in faulted if e["event"] == "round_result")
    with pytest.raises(jsonschema.ValidationError):
        check_payload({k: v for k, v in result.items() if k != "bets"}, "event.round_result")


def test_the_floor_feeds_view_and_the_displays_json_follow_the_contract(faulted):
    from controller.display.hub import DisplayHub
    from controller.display.public import PublicView
    from controller.feed.view import TableView
    from controller.settings.profile import load_profile
    from controller.schema import stamped
    views = []
    view = TableView("T1", load_profile("macau"), views.append)
    hub = DisplayHub(PublicView("on_read", "en"))
    for e in faulted:
        if e.get("game", "punto_banco") != "punto_banco" or e["event"] == "shoe_started" \
                and e["profile"] != "macau":
            break                       # the Andar Bahar deck is another table's
        view.publish(e)
        hub.feed([e])
        view.on_event({"event": "status", "state": "idle", "shoe": e.get("shoe"),
                           "round": e.get("round")})
    assert views
    for v in views:
        check_payload(stamped({**v, "feed_behind": 0, "utc": "2026-01-01T00:00:00Z"}),
                      "feed.state")
    for name, definition in (("roads", "web.roads"), ("dealer", "web.dealer"),
                             ("scoreboard", "web.scoreboard")):
        payload = json.loads(hub.json(name))
        assert payload["schema_version"] == SCHEMA_VERSION
        check_payload(payload, definition)


def test_the_contract_is_shipped_and_rendered_in_docs():
    assert schema()["version"] == SCHEMA_VERSION
    assert (ROOT / "docs" / "events.md").read_text() == render(), \
        "docs/events.md is not the schema's rendering: python -m controller.schema.render " \
        "docs/events.md"


def test_the_live_tables_output_follows_the_contract(tmp_path, capsys):
    """`tablectl run --json` adds the dealer's prompts (not journaled) to the same events."""
    assert main(["run", "--config", str(ROOT / "config" / "table.toml"), "--shoes", "1",
                 "--pace", "0", "--no-control", "--journal", str(tmp_path / "j.db"),
                 "--json"]) == 0
    events = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    kinds = check_events(events)
    assert {"prompt", "shoe_started", "round_result", "shoe_ended"} <= kinds


def test_the_floor_feeds_events_under_on_reveal_follow_the_contract(tmp_path, capsys):
    """What the events topic sends of a journal (controller.feed.public), cards face down and
    results pending until the dealer's reveal, as the broker would carry it."""
    from controller.feed.public import PublicRecords
    from controller.journal import Journal
    from controller.schema import stamped
    text = (ROOT / "config" / "profiles" / "macau.toml").read_text()
    profile = tmp_path / "reveal.toml"
    profile.write_text(text.replace('name = "macau"', 'name = "macau-reveal"')
                       + '\n[display]\nreveal = "on_reveal"\n')
    journal = tmp_path / "j.db"
    assert main(["simulate", "--profile", str(profile), "--seed", "4", "--journal",
                 str(journal)]) == 0
    capsys.readouterr()
    from controller.service.recovery import NOTE_KINDS
    with Journal.open_readonly(str(journal)) as j:
        public = PublicRecords(j, 0)
        sent = [stamped({**public.public(r.seq, r.data), "seq": r.seq, "table": "T1",
                         "utc": r.utc}) for r in j.records()
                if r.kind != "input" and r.kind not in NOTE_KINDS]
    assert any(e["event"] == "card" and e["code"] is None for e in sent)
    assert any(e["event"] == "round_result" and e.get("reveal") == "pending"
               and "bets" not in e for e in sent)
    assert any(e["event"] == "reveal" and "bets" in e.get("result", {}) for e in sent)
    check_events(sent)
