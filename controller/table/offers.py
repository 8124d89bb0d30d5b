"""Which actions apply to the table as it stands: what a console offers (each person then sees
only those their role may take). On hold, the hold's remedies; otherwise what the state allows.
An action left out here may still be sent; the table refuses it in plain words."""
from __future__ import annotations

from typing import Any

from controller.table.states import BETTING, BURNING, CLOSED, HOLD, IDLE, LOADED, SHOE_ENDED


def attended(table: Any) -> bool:
    """A dealer opens or closes the bets: the table does not open rounds by itself, or bets
    stay open for a while (a dealer may close them early)."""
    return not table.auto_open or table.betting_seconds > 0


def actions_now(table: Any) -> list[str]:
    state, shoe, rnd = table.state, table.shoe, table.round
    out: list[str] = ["call_supervisor"]
    if state == HOLD:
        return table.hold_remedies() + out
    in_round = table.round_open()
    if state not in (CLOSED, SHOE_ENDED):
        out.append("hold")
    if state == IDLE and table.reveal_due is not None:
        out.append("reveal")
    elif state == IDLE and attended(table) and shoe is not None and not shoe.end_reason:
        out.append("open_bets")
    if state == BETTING and attended(table):
        out.append("close_bets")
    if table.decision_due() is not None:
        out.append("decide")
    if in_round and rnd is not None:
        if rnd.cards:
            out += ["report_misplaced", "report_face_up"]
        out.append("report_unread")
        out.append("void_round")
    if shoe is not None and state not in (CLOSED, SHOE_ENDED):
        if not shoe.cut_seen and not shoe.continuous:
            out.append("cut_card")
        if not (in_round and rnd is not None and (rnd.cards or rnd.burned_before)):
            out += ["end_shoe", "change_shoe"]
        if state in (LOADED, BURNING, IDLE) and shoe.rounds == 0:
            out.append("demo_round")
        if not in_round and len(table.profile.paytables) > 1:
            out.append("switch_mode")
    if state == SHOE_ENDED and shoe is not None and shoe.counting == "shoe":
        out.append("count_done")
    return out
