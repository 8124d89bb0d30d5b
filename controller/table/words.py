"""What the dealer is told: the table's prompt in plain words, from its state."""
from __future__ import annotations

#: the dealer's words for the card due at each step
STEP_WORDS = {
    "P1": "Player's first card", "B1": "Banker's first card", "P2": "Player's second card",
    "B2": "Banker's second card", "player_third": "Player's third card",
    "banker_third": "Banker's third card", "game_card": "the game card",
    "andar": "the next card to Andar", "bahar": "the next card to Bahar",
    "R1": "Right hand's first card", "L1": "Left hand's first card",
    "R2": "Right hand's second card", "L2": "Left hand's second card",
    "right_third": "Right hand's third card", "left_third": "Left hand's third card",
    "bank_third": "the bank's third card",
}


def deal_words(step: str) -> str:
    return f"Deal {STEP_WORDS.get(step, step)} ({step})"


def choice_words(name: str, values: tuple) -> str:
    words = "/".join(("draw" if v else "stand") if isinstance(v, bool) else str(v)
                     for v in values)
    return f"Decide: {name} ({words})"
