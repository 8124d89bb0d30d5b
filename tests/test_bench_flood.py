"""The flood benchmark runs a shoe through the production loop with the control socket open,
quiet then flooded, and every card is decided and every kind of request answered; its figures
are printed, not asserted."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
import flood  # noqa: E402
import pytest  # noqa: E402

SMALL = ["--cards", "6", "--rate", "10", "--prefill-shoes", "1", "--recall-rounds", "20",
         "--kdf", "fast"]

# one worker runs them, so that the journal prefilled by the first run serves the others
pytestmark = pytest.mark.xdist_group("bench_flood")


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    """A short run that prefills its journal and keeps it in a cache file (made here)."""
    cache = tmp_path_factory.mktemp("flood") / "prefill.db"
    assert not cache.exists()
    r = flood.run(cards=6, rate=10, prefill_shoes=1, prefill_cache=str(cache),
                  recall_rounds=20, kdf="fast")
    return r, cache


def test_short_run_decides_every_card_and_answers_every_kind(first):
    r, cache = first
    assert cache.exists()                          # kept for the next run
    assert r["decided"] == 12                      # both phases, every card
    assert r["rounds_in_journal"] > 0              # the prefill reached the journal
    assert r["quiet"]["cards"] == r["flood"]["cards"] == 6
    for kind in ("state", "recall", "audit"):
        k = r["requests"][kind]
        assert k["answered_total"] >= 1 and not k["errors"], (kind, k)
    signin = r["requests"]["signin"]
    assert signin["answered_total"] >= 1
    assert set(signin["errors"]) <= {"auth_failed"} and signin["ok"] == 0
    for key in ("pace_quiet", "pace_flood", "added_p99_ms_quiet", "added_p99_ms_flood"):
        assert isinstance(r[key], (int, float)), key
    assert r["requests_served"] == sum(k["answered"] for k in r["requests"].values())
    # the prefilled journal is reused as it is (a copy: the cache is not written to)
    again = flood.run(cards=3, rate=10, prefill_cache=str(cache), recall_rounds=5,
                      kdf="fast", kinds=["recall"])
    assert again["decided"] == 6 and again["rounds_in_journal"] == r["rounds_in_journal"]


def test_main_json_line(first, capsys):
    _, cache = first                               # its prefill is the first run's
    assert flood.main(SMALL + ["--kinds", "state,signin", "--prefill-cache", str(cache),
                               "--json"]) == 0
    captured = capsys.readouterr()
    doc = json.loads(captured.out.strip().splitlines()[-1])
    for key in ("pace_quiet", "pace_flood", "added_p99_ms_quiet", "added_p99_ms_flood",
                "requests_served"):
        assert key in doc
    assert doc["decided"] == 12
    assert set(doc["requests"]) == {"state", "signin"}
    assert "pace under the flood" in captured.err          # the table, on stderr


def test_bad_arguments():
    assert flood.main(["--cards", "1"]) == 2
    assert flood.main(["--kinds", "nonsense"]) == 2
