"""The console's roads: the supervisor's memory keeps them from every published result (no
waiting for a reveal), and the panel draws the big road and bead plate."""
from controller.console import text
from controller.service.control import Memory


def test_memory_keeps_the_roads_of_the_shoe_including_unrevealed_results():
    memory = Memory()
    memory.publish({"event": "shoe_started", "shoe": 2, "game": "punto_banco"})
    for n, (winner, pending) in enumerate([("banker", False), ("banker", False),
                                           ("tie", False), ("player", True)], start=1):
        memory.publish({"event": "round_result", "shoe": 2, "round": n, "winner": winner,
                        "player": ["9H", "KD"], "banker": ["2C", "3C"],
                        **({"reveal": "pending"} if pending else {})})
    roads = memory.roads_view()
    assert set(roads) == {"shoe", "game", "bead_plate", "big_road", "counts"}
    assert [c["winner"] for c in roads["bead_plate"]] == ["banker", "banker", "tie", "player"]
    assert roads["big_road"]["columns"] == [["banker", "banker"], ["player"]]
    assert memory.roads_view() is roads                # made once per change
    shown = text.roads_panel_text(roads).plain
    lines = shown.splitlines()
    # Banker, Banker (a tie on it: its count drawn) down column 0; Player in column 1
    assert lines[:3] == ["Big road", "● ● ", "1 · "]
    assert "Bead plate" in shown and lines[lines.index("Bead plate") + 1].startswith("B ")
    assert "Banker 2   Player 1   Tie 1" in shown
    assert text.roads_panel_text(None).plain == "No result yet in this shoe."
