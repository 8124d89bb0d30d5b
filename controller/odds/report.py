"""The odds as a lab-style table (text) or a JSON document, exact fractions beside decimals."""
from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any, Mapping

from controller.odds import BetOdds, OddsReport

if TYPE_CHECKING:
    from controller.settings.profile import BetRule

_OPTION_TEXT = {"on_six": "on a winning 6", "on_first": "on the 1st card"}
_PATTERN_ABBREV = {"straight_flush": "SF", "straight": "S", "flush": "F"}


def exact_text(x: Fraction) -> str:
    """A Fraction as `p/q` (or the integer)."""
    return str(x.numerator) if x.denominator == 1 else f"{x.numerator}/{x.denominator}"


def payout_number(x: Fraction) -> str:
    """A payout as a terminating decimal when it has one (0.95), else p/q."""
    d = x.denominator
    while d % 2 == 0:
        d //= 2
    while d % 5 == 0:
        d //= 5
    if d != 1:
        return exact_text(x)
    text = f"{float(x):.10f}".rstrip("0").rstrip(".")
    return text


def payout_text(rule: BetRule) -> str:
    """`0.95:1`, `1:1; 0.5:1 on a winning 6`, `SF 120:1 / S 8:1 / F 5:1`."""
    parts = []
    if rule.pays is not None:
        parts.append(f"{payout_number(rule.pays)}:1")
    pattern_parts = [f"{_PATTERN_ABBREV[name]} {payout_number(v)}:1"
                     for name, v in rule.options.items() if name in _PATTERN_ABBREV]
    if pattern_parts:
        parts.append(" / ".join(pattern_parts))
    for name, v in rule.options.items():
        if name not in _PATTERN_ABBREV:
            parts.append(f"{payout_number(v)}:1 {_OPTION_TEXT.get(name, name)}")
    return "; ".join(parts)


def decks_text(decks: int | None) -> str:
    return "an infinite deck" if decks is None else f"{decks} deck{'s' if decks != 1 else ''}"


def to_json(report: OddsReport) -> dict[str, Any]:
    """The `--json` document: rtp and house_edge as fractions of 1, probabilities as numbers."""
    return {
        "profile": report.profile,
        "game": report.game,
        "mode": report.mode,
        "decks": "inf" if report.decks is None else report.decks,
        "outcomes": {name: {"p": float(p), "fraction": exact_text(p)}
                     for name, p in report.outcomes.items()},
        "bets": {bet: dict(_bet_json(o), **({"by_game_card": [
            {"ranks": ranks, "rtp": float(rtp), "rtp_fraction": exact_text(rtp)}
            for ranks, rtp in rank_classes(report.by_game_card[bet])]}
            if bet in report.by_game_card else {})) for bet, o in report.bets.items()},
    }


def rank_classes(by_rank: Mapping[str, Fraction]) -> list[tuple[list[str], Fraction]]:
    """Ranks grouped by equal return, in rank order of their first member."""
    groups: dict[Fraction, list[str]] = {}
    for rank, rtp in by_rank.items():
        groups.setdefault(rtp, []).append(rank)
    return [(ranks, rtp) for rtp, ranks in groups.items()]


def _bet_json(o: BetOdds) -> dict[str, Any]:
    return {"payout": payout_text(o.rule), "p_win": float(o.p_win), "p_push": float(o.p_push),
            "p_loss": float(o.p_loss), "rtp": float(o.rtp), "house_edge": float(o.house_edge),
            "rtp_fraction": exact_text(o.rtp), "p_win_fraction": exact_text(o.p_win)}


def table(headers: list[str], rows: list[list[str]], right: set[int]) -> list[str]:
    """Aligned columns (indices in `right` right-aligned) under a header and a rule."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        out = [c.rjust(w) if i in right else c.ljust(w)
               for i, (c, w) in enumerate(zip(cells, widths))]
        return "  ".join(out).rstrip()
    return [line(headers), line(["-" * w for w in widths])] + [line(r) for r in rows]


def to_text(report: OddsReport) -> str:
    """The odds table: outcomes, then every bet with P(win/push/loss), RTP and house edge."""
    source = ("drawn with replacement" if report.decks is None
              else "off the top of a full shoe")
    lines = [f"Exact odds: profile {report.profile} ({report.game}, paytable {report.mode}), "
             f"{decks_text(report.decks)}, {source}",
             "Computed by complete enumeration in exact rational arithmetic; RTP includes the "
             "stake returned, house edge = 1 - RTP, per bet placed.", ""]
    rows = [[name, f"{float(p):.8f}", exact_text(p)] for name, p in report.outcomes.items()]
    lines += table(["Outcome", "Probability", "Exact"], rows, {1})
    lines.append("")
    rows = [[bet, payout_text(o.rule), f"{float(o.p_win):.8f}", f"{float(o.p_push):.8f}",
             f"{float(o.p_loss):.8f}", f"{float(o.rtp) * 100:.4f}",
             f"{float(o.house_edge) * 100:.4f}", exact_text(o.rtp)]
            for bet, o in report.bets.items()]
    lines += table(["Bet", "Payout", "P(win)", "P(push)", "P(loss)", "RTP %", "House edge %",
                     "RTP (exact)"], rows, {2, 3, 4, 5, 6})
    for bet, by_rank in report.by_game_card.items():
        lines += ["", f"{bet} is bet after the game card is shown, so its return depends on it "
                  f"(the RTP above is the average):"]
        for ranks, rtp in rank_classes(by_rank):
            lines.append(f"  game card {', '.join(ranks)}: RTP {float(rtp) * 100:.4f} % "
                         f"({exact_text(rtp)})")
    return "\n".join(lines)
