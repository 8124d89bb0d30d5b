"""Exact odds of a profile's paytable: every bet's win/push/loss probabilities, RTP, house edge.

Everything is an exact Fraction computed by enumeration (punto_banco.py, andar_bahar.py), off
the top of a full shoe of `decks` decks, or from an infinite deck (`decks=None`). RTP is the
expected return per unit staked, stake included (1 + expected net); the house edge is 1 − RTP,
both per bet placed (a push counts as a bet returned).

Chemin de Fer and Baccarat en Banque depend on the sides' choices: banking_report.py computes
them for a stated strategy (chemin_de_fer.py, baccarat_banque.py, banking.py).

`check_rtp_bands(profile)` holds a profile's computed RTPs to its `[rtp_band]`, so a mistyped
payout (banker 9.5 for 0.95) is refused (controller.settings.profile.load_profile_for_use).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from types import EllipsisType
from typing import TYPE_CHECKING, Mapping

from controller.errors import InputError, ProfileError
from controller.odds import andar_bahar as ab, punto_banco as pb

if TYPE_CHECKING:
    from controller.settings.profile import BetRule, Profile

#: games with an exact model of their paytable here
GAMES = ("punto_banco", "andar_bahar")
#: games whose exact odds depend on the sides' choices: computed for a stated strategy
#: (banking_report.py), never at profile load
BANKING_GAMES = ("chemin_de_fer", "baccarat_banque")
MAX_DECKS = 12


@dataclass(frozen=True)
class BetOdds:
    """One bet: its net result per unit staked → probability, and what follows from it."""
    bet: str
    rule: BetRule
    distribution: Mapping[Fraction, Fraction]

    @property
    def p_win(self) -> Fraction:
        return sum((p for net, p in self.distribution.items() if net > 0), Fraction(0))

    @property
    def p_push(self) -> Fraction:
        return sum((p for net, p in self.distribution.items() if net == 0), Fraction(0))

    @property
    def p_loss(self) -> Fraction:
        return sum((p for net, p in self.distribution.items() if net < 0), Fraction(0))

    @property
    def mean(self) -> Fraction:
        """Expected net result per unit staked."""
        return sum((net * p for net, p in self.distribution.items()), Fraction(0))

    @property
    def variance(self) -> Fraction:
        m = self.mean
        return sum(((net - m) ** 2 * p for net, p in self.distribution.items()), Fraction(0))

    @property
    def rtp(self) -> Fraction:
        return 1 + self.mean

    @property
    def house_edge(self) -> Fraction:
        return -self.mean


@dataclass(frozen=True)
class OddsReport:
    profile: str
    game: str
    mode: str
    decks: int | None                         # None: infinite deck
    outcomes: Mapping[str, Fraction]
    bets: Mapping[str, BetOdds]
    #: bets whose return depends on a card shown before bets are taken (Andar Bahar's game
    #: card): bet → the card's rank → RTP once it is known
    by_game_card: Mapping[str, Mapping[str, Fraction]] = field(default_factory=dict)


def parse_decks(text: str) -> int | None:
    """`--decks` text → a deck count 1–12, or None for `inf`."""
    if text.strip().lower() in ("inf", "infinite", "infinity"):
        return None
    try:
        n = int(text)
    except ValueError:
        raise InputError(f"--decks {text!r}: write a number of decks from 1 to {MAX_DECKS} "
                         "or inf") from None
    if not 1 <= n <= MAX_DECKS:
        raise InputError(f"--decks {n}: odds are computed for 1 to {MAX_DECKS} decks or inf")
    return n


def paytable_odds(game: str, paytable: Mapping, decks: int | None) -> tuple[
        dict[str, Fraction], dict[str, BetOdds]]:
    """Outcome probabilities and every bet's odds for one paytable of `game`."""
    if decks is not None and not 1 <= decks <= MAX_DECKS:
        raise InputError(f"odds are computed for 1 to {MAX_DECKS} decks or an infinite deck, "
                         f"not {decks}")
    if game == "punto_banco":
        deal = pb.deal_odds(decks)
        outcomes = pb.outcomes(deal)
        dist = {bet: pb.bet_distribution(deal, bet, rule) for bet, rule in paytable.items()}
    elif game == "andar_bahar":
        outcomes = ab.outcomes(decks)
        dist = {bet: ab.bet_distribution(decks, bet, rule) for bet, rule in paytable.items()}
    else:
        raise InputError(f"exact odds are computed for {', '.join(GAMES)}, not {game}")
    return outcomes, {bet: BetOdds(bet, paytable[bet], d) for bet, d in dist.items()}


def compute_odds(profile: Profile, decks: int | None | EllipsisType = ..., mode: str | None = None
                 ) -> OddsReport:
    """The OddsReport of a Profile: at its own decks unless `decks` is given (None = infinite),
    for its own paytable mode unless `mode` is given."""
    if mode is not None:
        profile = profile.with_mode(mode)
    n = profile.decks if decks is ... else decks
    outcomes, bets = paytable_odds(profile.game, profile.paytable, n)
    by_card = {}
    if profile.game == "andar_bahar" and "first_three" in profile.paytable:
        by_card["first_three"] = ab.first_three_rtp_by_game_card(
            n, profile.paytable["first_three"])
    return OddsReport(profile.name, profile.game, profile.mode, n, outcomes, bets, by_card)


def check_rtp_bands(profile: Profile) -> None:
    """Raise ProfileError if a bet's computed RTP lies outside its `[rtp_band]`, or, for a bet
    without a band, is 1 or more (the table would pay out more than it takes in).

    The band applies to the bet in every paytable mode that has it, at the profile's decks.
    Games without an exact model here are contests of even chances: no payout above 1.
    """
    modes = list(profile.paytables)
    for mode in modes:
        table = "paytable" if modes == ["default"] else f"paytables.{mode}"
        unbanded = {b: r for b, r in profile.paytables[mode].items()
                    if b not in profile.rtp_band}
        if profile.game not in GAMES:
            for bet, rule in unbanded.items():
                pays = [rule.pays, *rule.options.values()]
                if any(p is not None and p > 1 for p in pays):
                    raise ProfileError(profile.path, f"{table}.{bet}", f"pays more than 1 to 1 "
                                       f"on a contest of even chances",
                                       "write a payout to 1 of at most 1")
            continue
        if not unbanded:
            continue
        _, bets = paytable_odds(profile.game, unbanded, profile.decks)
        for bet, odds in bets.items():
            if odds.rtp >= 1:
                raise ProfileError(profile.path, f"{table}.{bet}",
                                   f"computed RTP {float(odds.rtp):.6g} is 1 or more (the "
                                   "table would pay out more than it takes in)",
                                   f"check the payout of {bet}, or give it an [rtp_band]")
    if not profile.rtp_band:
        return
    for bet, (lo, hi) in profile.rtp_band.items():
        where = [m for m in modes if bet in profile.paytables[m]]
        if not where:
            known = sorted({b for m in modes for b in profile.paytables[m]})
            raise ProfileError(profile.path, f"rtp_band.{bet}", "no such bet in the paytable",
                               f"band one of {', '.join(known)}")
        for mode in where:
            _, bets = paytable_odds(profile.game, {bet: profile.paytables[mode][bet]},
                                    profile.decks)
            rtp = float(bets[bet].rtp)
            if not lo <= rtp <= hi:
                table = "[paytable]" if modes == ["default"] else f"[paytables.{mode}]"
                raise ProfileError(profile.path, f"rtp_band.{bet}",
                                   f"computed RTP {rtp:.6f} is outside [{lo}, {hi}]",
                                   f"check the payout of {bet} in {table}")
