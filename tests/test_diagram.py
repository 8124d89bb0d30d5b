from pathlib import Path

from controller.table.diagram import document


def test_committed_diagram_matches_the_machine():
    doc = Path(__file__).resolve().parents[1] / "docs" / "table-machine.md"
    assert doc.read_text() == document() + "\n" or doc.read_text() == document(), \
        "docs/table-machine.md is stale: run `tablectl diagram --output docs/table-machine.md`"


def test_diagram_names_every_dealing_phase():
    text = document()
    for phase in ("P1", "B1", "P2", "B2", "player_third", "banker_third", "game_card", "andar"):
        assert phase in text
