"""What the table's displays may show, kept from the table's published events (pure, no I/O).

The players' scoreboard and the dealer's page are public: anyone near the table may see them.
So everything they show passes through here, and only named fields of named events pass:

- a round's result enters the roads and the "last result" when it is shown at the table: at
  once (profile `[display] reveal = "on_read"`), or — `"on_reveal"`, the result carries
  `reveal: "pending"` — only with the dealer's `reveal` event for that round. A result never
  revealed (the shoe ended first) never appears;
- with `on_reveal` the cards of a round are shown face down (their slot, not their code) until
  that round is revealed;
- the dealer's prompt names only the step due; on hold it is replaced by plain words for the
  kind of hold (a hold's own detail may name cards, so it is never shown). Both are written in
  the table's language (`[table] language`) from the message catalogue (controller.words);
- both views say whether the table runs on the simulator (`simulator`), so the pages can say so;
- the dealer's view also names its prompt by its message code (`prompt_code`, e.g.
  `prompt.count_back_shuffler`), so that a program can follow the dealer's display without
  reading its words (the rig's dealer does);
- the players' page names the table, its game and its limits, counts down the betting window
  while bets are open (`betting.closes_at`, the server's clock) and says when the table is on
  hold (`hold`: true or false, never why).

The supervisor's console, the `--json` feed and the journal see everything at once; they do
not go through here.
"""
from __future__ import annotations

from typing import Any, Mapping

from controller.reveal import RevealGate
from controller.roads import ShoeRoads
from controller.words import render
from controller.words.problems import dealer_words

#: the fields of a round result a display may show (never bets or irregularities)
RESULT_FIELDS = (
    "shoe", "round", "game", "player", "banker", "player_total", "banker_total", "winner",
    "natural", "demo", "game_card", "andar", "bahar", "cards_dealt", "right", "left", "bank",
    "right_total", "left_total", "bank_total", "right_winner", "left_winner", "naturals",
    "burned_before")
#: the hand lists of a result, in the order the dealer's page lists them
HANDS = ("game_card", "player", "banker", "andar", "bahar", "right", "left", "bank")

_INITIALS = {"P": "player", "B": "banker", "R": "right", "L": "left"}


def hand_of(slot: Any, game: Any = None) -> str:
    """The hand a card slot belongs to: P2 → player, banker_third → banker, B1 → bank in
    Baccarat en Banque; burn and Andar Bahar's slots are their own."""
    slot = str(slot)
    if slot.endswith("_third"):
        return slot[:-len("_third")]
    if len(slot) == 2 and slot[1].isdigit() and slot[0] in _INITIALS:
        return "bank" if slot[0] == "B" and game == "baccarat_banque" else _INITIALS[slot[0]]
    return slot


def public_result(result: Mapping[str, Any]) -> dict[str, Any]:
    """A round result as a display shows it; a void round without its cards."""
    if result.get("void"):
        return {"shoe": result.get("shoe"), "round": result.get("round"),
                "game": result.get("game"), "void": True, "reason": result.get("reason", "")}
    return {k: result[k] for k in RESULT_FIELDS if k in result}


class PublicView:
    """The displays' state: the roads, the last result shown and the dealer's page.

    `publish(event)` takes the table's published events (and its `status` dicts) in order and
    returns which views changed: "scoreboard" (roads, last result) and/or "dealer". Events
    already seen (a seq at or below the last one) are ignored, so a journal read at start and
    the events republished after a restart can overlap."""

    def __init__(self, reveal: str = "on_read", language: str = "en", simulator: bool = False,
                 *, table: str = "", game: str | None = None,
                 limits: Mapping[str, Any] | None = None):
        self.reveal = reveal
        self.language = language          # the table's ([table] language)
        self.simulator = simulator        # a simulated table: the pages say SIMULATOR
        self.table = table                # the table's name ([table] name)
        self.limits = dict(limits) if limits else None    # {"min": …, "max": …}: the bets'
        self.betting: dict[str, Any] | None = None        # {"round", "closes_at"} while open
        self.held = False
        self.roads = ShoeRoads()
        self.last_seq = 0
        self.gate = RevealGate()
        self.last_result: dict[str, Any] | None = None
        self.shown_at: float | None = None   # when the last result reached the display
        self.shoe: Any = None
        self.game: Any = game             # the profile's, then each shoe's
        self.round: Any = None
        self.cards: list[dict[str, Any]] = []   # the current round's, maybe face down
        self.prompt = ""
        self.prompt_code: str | None = None     # the prompt's message code, language-neutral
        self.status: dict[str, Any] = {}

    def publish(self, e: Mapping[str, Any], now: float | None = None) -> set[str]:
        kind = e.get("event")
        seq = e.get("seq")
        if seq is not None:
            if seq <= self.last_seq:
                return set()
            self.last_seq = seq
        if kind == "status":
            return self._status(e)
        if kind == "prompt":
            words = e.get("words")
            self.prompt = render(words, self.language) if words else str(e.get("text", ""))
            self.prompt_code = words.get("code") if isinstance(words, Mapping) else None
            return {"dealer"}
        if kind == "shoe_started":
            self.reveal = e.get("reveal", "on_read")
            self.game = e.get("game")
            self.roads.publish(e)
            self.gate.publish(e)
            self.shoe, self.round, self.cards = e.get("shoe"), None, []
            if e.get("game") != "andar_bahar":
                self.last_result = None
            return {"scoreboard", "dealer"}
        if kind == "shoe_ended":
            self.gate.publish(e)
            return set()
        if kind == "round_started":
            self.shoe, self.round, self.cards = e.get("shoe"), e.get("round"), []
            return {"dealer"}
        if kind == "bets_open":
            return self._bets(e, now)
        if kind == "bets_closed":
            return self._bets(None, now)
        if kind in ("hold", "resume"):
            return self._held(kind == "hold")
        if kind == "card":
            return self._card(e)
        if kind in ("round_result", "reveal"):
            changed: set[str] = set()
            for result in self.gate.publish(e):
                changed |= self._show(result, now)
            return changed
        return set()

    def _status(self, e: Mapping[str, Any]) -> set[str]:
        hold = e.get("hold")
        status = {"state": e.get("state"), "expects": e.get("expects"), "shoe": e.get("shoe"),
                  "round": e.get("round"), "step": e.get("step"),
                  "hold": hold.get("kind") if isinstance(hold, Mapping) else None}
        if status == self.status:
            return set()
        self.status = status
        return {"dealer"} | self._held(status["state"] == "hold" or status["hold"] is not None)

    def _held(self, held: bool) -> set[str]:
        if held == self.held:
            return set()
        self.held = held
        if held:
            self.betting = None           # no bet is taken on hold
        return {"scoreboard"}

    def _bets(self, e: Mapping[str, Any] | None, now: float | None) -> set[str]:
        """Bets opened (with the seconds they stay open) or closed. A window read back from
        the journal (`now` unknown) is long past: only a live one is counted down."""
        closes_in = e.get("closes_in_s") if e is not None else None
        betting = None
        if (e is not None and isinstance(closes_in, (int, float)) and closes_in > 0
                and now is not None):
            betting = {"round": e.get("round"), "closes_at": round(now + closes_in, 3)}
        if betting == self.betting:
            return set()
        self.betting = betting
        return {"scoreboard"}

    def _card(self, e: Mapping[str, Any]) -> set[str]:
        if e.get("round") is None:
            return set()                   # the shoe-start burn is not a round's card
        if (e.get("shoe"), e.get("round")) != (self.shoe, self.round):
            self.shoe, self.round, self.cards = e.get("shoe"), e.get("round"), []
        face_down = self.reveal == "on_reveal"
        self.cards.append({"hand": hand_of(e.get("slot"), self.game),
                           "code": None if face_down else e.get("code")})
        return {"dealer"}

    def _show(self, result: Mapping[str, Any], now: float | None) -> set[str]:
        shown = public_result(result)
        self.roads.add_result(shown)
        self.last_result, self.shown_at = shown, now
        if (shown.get("shoe"), shown.get("round")) == (self.shoe, self.round) \
                and not shown.get("void"):
            self.cards = revealed_cards(shown)
        return {"scoreboard", "dealer"}

    # ------------------------------------------------------------------ the views
    def roads_json(self) -> dict[str, Any]:
        return self.roads.to_json()

    def scoreboard(self) -> dict[str, Any]:
        """The players' page: the table, its game and limits, the roads, the last result shown
        and when it reached us, the betting window while bets are open, and whether the table
        is on hold."""
        return {"table": self.table, "game": self.game, "limits": self.limits,
                "roads": self.roads_json(), "last_result": self.last_result,
                "shown_at": self.shown_at, "betting": self.betting, "hold": self.held,
                "simulator": self.simulator}

    def dealer(self) -> dict[str, Any]:
        """The dealer's page (and `/api/state`): the prompt, or on hold the hold in words (then
        `prompt` and `hold` are the same words), the round's cards (face down until revealed),
        the last result shown."""
        st = self.status
        hold = st.get("hold")
        words = render(dealer_words(hold), self.language) \
            if hold or st.get("state") == "hold" else None
        return {"state": st.get("state"), "expects": st.get("expects"), "shoe": self.shoe,
                "round": self.round, "prompt": words or self.prompt, "hold": words,
                "prompt_code": self.prompt_code,
                "cards": list(self.cards), "last_result": self.last_result,
                "simulator": self.simulator}


def revealed_cards(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The cards of a shown result, hand by hand, for the dealer's page."""
    out = [{"hand": "burn", "code": code} for code in result.get("burned_before") or ()]
    for hand in HANDS:
        cards = result.get(hand)
        if isinstance(cards, str):
            cards = [cards]
        for code in cards if isinstance(cards, list) else ():
            out.append({"hand": hand, "code": code})
    return out
