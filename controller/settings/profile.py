"""Table profiles: TOML files of game rules, shoe procedures and paytable → typed, frozen objects.

A bad file raises ProfileError whose message is one line naming the file, the key and the fix.
Unknown keys are errors. Payouts are exact fractions (0.95 → 19/20) so odds can be computed.

`load_profile` reads and validates a file; `load_profile_for_use` also holds the paytable to
its `[rtp_band]` by exact odds (a mistyped payout), and is what a table or command deals with.
"""
from __future__ import annotations

import hashlib
import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any, Mapping

from controller.errors import InputError, ProfileError   # ProfileError: also from here
from controller.games import get_rules, known_bets, validate_options
from controller.odds import check_rtp_bands
from controller.settings.tomlcheck import Section

GAMES = ("punto_banco", "andar_bahar", "chemin_de_fer", "baccarat_banque")
#: allowed deck counts per game (docs/rules.md)
DECK_RANGE = {"punto_banco": (6, 12), "andar_bahar": (1, 1), "chemin_de_fer": (6, 12),
              "baccarat_banque": (6, 12)}
#: why a banking game's shoe has at least six decks (said when a profile asks for fewer)
_BANKING_DECKS = "Chemin de Fer and Baccarat en Banque are dealt from at least six full decks"
BURN_RULES = ("first_card", "decks", "fixed", "none")
CUT_AFTER = ("finish", "one_more", "no_more_coup")
FACE_UP = ("valid", "burn", "void")
STRAY_CARD = ("burn", "void")
HOUSE_BURN = ("supervisor", "dealer")
INVALID_SHOE_ROUNDS = ("stand", "void")
#: when the players' display shows a round: as the shoe reads it, or on the dealer's reveal
REVEAL = ("on_read", "on_reveal")


@dataclass(frozen=True)
class BetRule:
    """One paytable entry: the payout (to 1) and any named special payouts (e.g. on_six)."""
    pays: Fraction | None
    options: Mapping[str, Fraction] = field(default_factory=dict)

    def option(self, name: str) -> Fraction | None:
        return self.options.get(name)

    def paid(self, game: str, bet: str) -> Fraction:
        """The payout, for figures that need one: InputError naming the bet when it has none."""
        if self.pays is None:
            raise InputError(f"{game}: bet {bet!r} needs a payout (pays)")
        return self.pays


@dataclass(frozen=True)
class BurnRule:
    rule: str = "first_card"     # first_card | decks | fixed | none
    count: int = 0               # for `fixed`: 1–8
    between_rounds: int = 0      # cards burned before every round but the shoe's first
    #: who makes a house burn at a round's start: the dealer announces it and a supervisor
    #: confirms it ("supervisor"), or the dealer's announcement alone ("dealer")
    house_burn: str = "supervisor"
    #: a shoe declared invalid after rounds were dealt from it: those rounds' results
    #: "stand" (a new shoe is all the remedy), or are all "void"
    invalid_shoe_rounds: str = "stand"


@dataclass(frozen=True)
class CutCardRule:
    min_from_end: int = 12       # at least this many cards behind the cut card
    #: at most this many behind it (a house's own limit); None: only the shoe's own, the
    #: cut card may go anywhere in the shoe that leaves min_from_end behind it
    max_from_end: int | None = None
    default_from_end: int = 14
    after: str = "finish"        # finish | one_more | no_more_coup
    enabled: bool = True

    def upper(self, shoe_cards: int) -> int:
        """The most cards that may lie behind the cut card in a shoe of `shoe_cards`."""
        return shoe_cards if self.max_from_end is None else min(self.max_from_end, shoe_cards)


@dataclass(frozen=True)
class Profile:
    name: str
    game: str
    decks: int
    burn: BurnRule
    cut_card: CutCardRule
    demo_rounds_max: int
    face_up_card: str
    card_when_none_due: str
    paytables: Mapping[str, Mapping[str, BetRule]]
    mode: str
    path: str
    sha256: str
    description: str = ""
    game_options: Mapping[str, Any] = field(default_factory=dict)
    rtp_band: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    continuous_shuffler: bool = False
    reveal: str = "on_read"      # [display] reveal: on_read | on_reveal

    @property
    def paytable(self) -> Mapping[str, BetRule]:
        return self.paytables[self.mode]

    @property
    def cards(self) -> int:
        return 52 * self.decks

    def with_mode(self, mode: str) -> "Profile":
        if mode not in self.paytables:
            raise ProfileError(self.path, "mode", f"unknown mode {mode!r}",
                               f"use one of {', '.join(self.paytables)}")
        return replace(self, mode=mode)


def resolve(name_or_path: str, config: str | None = None) -> Path:
    """A profile's file: a path as given, a name looked up in the site's folders before the
    shipped ones (controller.settings.locations.profile_dirs; `config`: the --config in use)."""
    from controller.settings.locations import profile_dirs
    p = Path(name_or_path)
    if p.suffix == ".toml" or os.sep in name_or_path:
        if not p.is_file():
            raise ProfileError(name_or_path, "file", "no such profile file",
                               "give an existing .toml path or a profile name")
        return p
    dirs = profile_dirs(config)
    for d in dirs:
        cand = d / f"{name_or_path}.toml"
        if cand.is_file():
            return cand
    known = sorted({f.stem for d in dirs if d.is_dir() for f in d.glob("*.toml")})
    raise ProfileError(name_or_path, "profile", "no profile of that name",
                       f"use one of {', '.join(known) or '(none found)'} or a path to a .toml file")


def load_profile(name_or_path: str, config: str | None = None) -> Profile:
    """The profile NAME (a site's profiles, then the shipped ones) or at PATH, parsed and
    validated; no odds computed."""
    path = resolve(name_or_path, config)
    raw = path.read_bytes()
    try:
        data = tomllib.loads(raw.decode("utf-8-sig"))      # a byte-order mark is harmless
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise ProfileError(str(path), "file", f"not valid TOML ({err})",
                           "correct the syntax") from err
    return parse_profile(data, str(path), hashlib.sha256(raw).hexdigest())


def load_profile_for_use(name_or_path: str, config: str | None = None) -> Profile:
    """load_profile, then its `[rtp_band]` checked by exact odds: a mistyped payout (banker 9.5
    for 0.95) parses fine and must still never reach a table."""
    profile = load_profile(name_or_path, config)
    check_rtp_bands(profile)
    return profile


#: no bet of these games pays more (Andar Bahar's 46-49 cards pays 800); a payout above is a typo
MAX_PAYOUT = 10_000
#: named payouts a bet may carry in an inline table besides `pays` (anything else is refused)
PAYOUT_OPTIONS: Mapping[tuple[str, str], tuple[str, ...]] = {
    ("punto_banco", "banker"): ("on_six",),
    ("andar_bahar", "andar"): ("on_first",),
    ("andar_bahar", "first_three"): ("straight_flush", "straight", "flush"),
}
#: bets made only of named payouts
NO_PAYS = frozenset({("andar_bahar", "first_three")})


_QUOTED_FRACTION = re.compile(r"\s*\d+\s*/\s*[1-9]\d*\s*")


def _fraction(v: Any, r: Section, k: str) -> Fraction:
    if isinstance(v, bool) or not isinstance(v, (int, float, str)):
        raise r.fail(k, f"payout {v!r} is not a number", "write a payout to 1, e.g. 0.95 or \"19/20\"")
    if isinstance(v, str) and not _QUOTED_FRACTION.fullmatch(v):
        # quotes are for an exact fraction, which TOML cannot write as a number; "8" is a
        # number typed as text (a slip a number field would not have let through)
        raise r.fail(k, f"payout {v!r} is text, not a number", "write it without quotes "
                     f"({k.split('.')[-1]} = 8), or an exact fraction in quotes (\"19/20\")")
    try:
        f = Fraction(str(v))
    except (ValueError, ZeroDivisionError) as err:
        raise r.fail(k, f"payout {v!r} is not a number", "write e.g. 0.95 or \"19/20\"") from err
    if f <= 0:
        raise r.fail(k, f"payout {v!r} must be positive", "write a payout to 1 greater than 0")
    if f > MAX_PAYOUT:
        raise r.fail(k, f"payout {v!r} is more than any bet pays", f"write a payout to 1 of at "
                     f"most {MAX_PAYOUT}")
    return f


def _paytable(r: Section, game: str) -> dict[str, BetRule]:
    allowed = known_bets(game)
    out = {}
    for bet, v in r.data.items():
        r.used.add(bet)
        if bet not in allowed:
            raise r.fail(bet, f"{game} has no such bet", f"use bets from: {', '.join(allowed)}")
        if isinstance(v, dict):
            named = PAYOUT_OPTIONS.get((game, bet), ())
            unknown = sorted(set(v) - {"pays", *named})
            if unknown:
                raise r.fail(f"{bet}.{unknown[0]}", "unknown key", "use " + (
                    f"pays and {', '.join(named)}" if named else f"{bet} = <payout to 1>"))
            if "pays" not in v and (game, bet) not in NO_PAYS:
                raise r.fail(bet, "no pays", f"write {bet} = {{ pays = <payout to 1>"
                             + (f", {named[0]} = …" if named else "") + " }")
            opts = {k: _fraction(x, r, f"{bet}.{k}") for k, x in v.items() if k != "pays"}
            pays = _fraction(v["pays"], r, f"{bet}.pays") if "pays" in v else None
            out[bet] = BetRule(pays, opts)
        else:
            out[bet] = BetRule(_fraction(v, r, bet))
    if not out:
        raise r.fail("", "empty paytable", "list at least one bet")
    return out


def parse_profile(data: Mapping, where: str, sha256: str = "") -> Profile:
    r = Section(data, where, ProfileError)
    name = r.get("name", str, default=Path(where).stem)
    if not name.strip() or len(name) > 64 or not name.isprintable():
        raise r.fail("name", f"{name!r} cannot name a profile", "give 1 to 64 printable "
                     "characters (the name the journal and the reports show)")
    description = r.get("description", str, default="")
    game = r.get("game", str, choices=GAMES)
    lo, hi = DECK_RANGE[game]
    if game in ("chemin_de_fer", "baccarat_banque"):
        asked = data.get("decks")
        if isinstance(asked, int) and not isinstance(asked, bool) and asked < lo:
            raise ProfileError(where, "decks", f"{asked} decks: {_BANKING_DECKS}",
                               f"set decks between {lo} and {hi}")
    decks = r.get("decks", int, lo=lo, hi=hi)

    b = r.table("burn")
    burn = BurnRule(rule=b.get("rule", str, "first_card", choices=BURN_RULES),
                    count=b.get("count", int, 0, lo=0, hi=8),
                    between_rounds=b.get("between_rounds", int, 0, lo=0, hi=8),
                    house_burn=b.get("house_burn", str, "supervisor", choices=HOUSE_BURN),
                    invalid_shoe_rounds=b.get("invalid_shoe_rounds", str, "stand",
                                              choices=INVALID_SHOE_ROUNDS))
    if burn.rule == "fixed" and burn.count < 1:
        raise b.fail("count", "a fixed burn needs a count", "set count from 1 to 8")
    b.done()

    c = r.table("cut_card")
    cards = 52 * decks
    cut = CutCardRule(enabled=c.get("enabled", bool, True),
                      min_from_end=c.get("min_from_end", int, 12, lo=1, hi=cards - 1),
                      max_from_end=c.get("max_from_end", int, None, lo=1, hi=cards),
                      default_from_end=c.get("default_from_end", int, 14, lo=1, hi=cards - 1),
                      after=c.get("after", str, "finish", choices=CUT_AFTER))
    upper = cut.upper(cards)
    if cut.min_from_end > upper:
        raise c.fail("min_from_end", "is above max_from_end", "make min_from_end ≤ max_from_end")
    if cut.min_from_end > cut.default_from_end:
        raise c.fail("min_from_end", "is above default_from_end",
                     "make min_from_end ≤ default_from_end")
    if cut.default_from_end > upper:
        raise c.fail("default_from_end", "is above max_from_end",
                     f"use a value from {cut.min_from_end} to {upper}")
    c.done()

    d = r.table("demo_rounds")
    demo_max = d.get("max", int, 0, lo=0, hi=3)
    d.done()

    i = r.table("irregularities")
    face_up = i.get("face_up_card", str, "valid", choices=FACE_UP)
    stray = i.get("card_when_none_due", str, "burn", choices=STRAY_CARD)
    i.done()

    if "paytables" in data:
        pts = r.table("paytables")
        paytables = {}
        for mode in list(pts.data):
            paytables[mode] = _paytable(pts.table(mode), game)
        if not paytables:
            raise r.fail("paytables", "no paytable in it", "add [paytables.MODE] with its bets, "
                         "or write one [paytable]")
        mode = r.get("mode", str, next(iter(paytables)), choices=tuple(paytables))
        if "paytable" in data:
            raise r.fail("paytable", "given together with [paytables]", "keep one of the two")
    else:
        paytables = {"default": _paytable(r.table("paytable"), game)}
        mode = "default"

    band_r = r.table("rtp_band")
    bands = {}
    for bet, v in band_r.data.items():
        band_r.used.add(bet)
        if (not isinstance(v, list) or len(v) != 2
                or not all(isinstance(x, (int, float)) for x in v) or v[0] > v[1]):
            raise band_r.fail(bet, f"{v!r} is not a band", "write [low, high] as fractions of 1, e.g. [0.98, 0.99]")
        bands[bet] = (float(v[0]), float(v[1]))
    band_r.done()

    opts = r.get("game_options", dict, {})
    csm = r.get("continuous_shuffler", bool, False)
    disp = r.table("display")
    reveal = disp.get("reveal", str, "on_read", choices=REVEAL)
    disp.done()
    r.done()

    validate_options(game, opts, where)
    for m, table in paytables.items():
        get_rules(game).validate_paytable(
            table, f"{where} [paytables.{m}]" if "paytables" in data else where)
    return Profile(name=name, game=game, decks=decks, burn=burn, cut_card=cut,
                   demo_rounds_max=demo_max, face_up_card=face_up, card_when_none_due=stray,
                   paytables=paytables, mode=mode, path=where, sha256=sha256,
                   description=description, game_options=opts, rtp_band=bands,
                   continuous_shuffler=csm, reveal=reveal)
