"""The shuffle battery over recorded shoes: the order the shoe read its cards, from the journal.

A shuffler that does not report the order it delivered can still be judged by what the table
dealt from it. Each recorded shoe is the read order of its cards (burns included) up to where
dealing stopped, d decks of n = 52·d cards. Nothing about the order the cards went in is known,
so each test asks only what a uniform shuffle implies for the order that came out, for any
input; every expectation is exact for a uniformly shuffled shoe, read to any stopping point:

- position × card chi-square: read-position bins × card bins (the card's place in a new deck,
  ace of spades to king of clubs); each cell's expectation is the cards read in that position
  bin × the bin's share of a deck. Reading without replacement makes the counts a little less
  variable than the χ² reference, so the test errs on the quiet side.
- factory successors kept: consecutive reads where the second card is the one that follows the
  first in a new deck (A♠ then 2♠ …); for a uniform shoe each consecutive pair is one with
  probability (51/52)·d/(n − 1). New decks that were barely shuffled keep many.
- pairs kept from the previous shoe: consecutive reads that were also consecutive in the
  previous recorded shoe of the same size (a shuffler loaded with that shoe's discards); each
  pair of codes (u, v) comes up with probability d²/(n(n − 1)), or d(d − 1)/(n(n − 1)) for u = v.
- runs of rank parity (Wald–Wolfowitz), exact given each shoe's counts of odd and even ranks.
The counts are referred to Poisson laws, the statistics to χ² and the normal law as in
`controller.shuffle.stats`, and the p-values are adjusted together by Holm–Bonferroni.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from controller.shoe.cards import ordered_shoe, parse_card
from controller.errors import InputError
from controller.shuffle.stats import (MIN_EXPECTED, TestResult, adjust, battery_text, chi2_sf,
                                      correction_json, overall_verdict, poisson_two_sided,
                                      runs_test)

#: a recorded shoe with fewer reads than this says too little to be tested
MIN_READS = 20
#: a card code's place in a new deck (0 = ace of spades … 51 = king of clubs)
FACTORY_INDEX = {c.code: i for i, c in enumerate(ordered_shoe(1))}


@dataclass(frozen=True)
class RecordedShoe:
    number: int
    decks: int
    codes: tuple[str, ...]          # read order, canonical codes


@dataclass(frozen=True)
class RecordedReport:
    shoes: list[RecordedShoe]
    tests: list[TestResult]

    @property
    def verdict(self) -> str:
        return overall_verdict(self.tests)

    def to_json(self) -> dict[str, Any]:
        return {"source": "journal", "shoes": [s.number for s in self.shoes],
                "cards": sum(len(s.codes) for s in self.shoes), "verdict": self.verdict,
                "correction": correction_json(len(self.tests)),
                "tests": [{"name": t.name, "statistic": t.statistic, "p_value": t.p_value,
                           "adjusted": t.adjusted, "detail": t.detail, "verdict": t.verdict}
                          for t in self.tests]}

    def to_text(self) -> str:
        numbers = ", ".join(str(s.number) for s in self.shoes)
        reads = sum(len(s.codes) for s in self.shoes)
        return battery_text(f"Shuffle test of {len(self.shoes)} recorded shoe(s) ({numbers}): "
                            f"{reads} cards in the order the shoe read them", self.tests,
                            self.verdict)


def read_shoes(journal: Any, last: int) -> tuple[list[RecordedShoe], RecordedShoe | None]:
    """The last `last` recorded shoes with at least MIN_READS reads (oldest first), and the
    shoe recorded just before the first of them (for the previous-shoe test), if any."""
    decks: dict[int, int] = {}
    order: list[int] = []
    reads: dict[int, list[str]] = {}
    for rec in journal.records(kinds=["shoe_started", "card"]):
        d = rec.data
        number = d.get("shoe")
        if rec.kind == "shoe_started":
            decks[number] = int(d.get("decks") or 0)
            order.append(number)
            reads[number] = []
        elif number in reads and d.get("code"):
            reads[number].append(parse_card(str(d["code"])).code)
    shoes = [RecordedShoe(n, decks[n], tuple(reads[n])) for n in order
             if len(reads[n]) >= MIN_READS and decks[n] > 0]
    if not shoes:
        raise InputError(f"journal {journal.path}: no shoe with {MIN_READS} or more cards read")
    chosen = shoes[-last:]
    before = shoes[-last - 1] if len(shoes) > last else None
    return chosen, before


def position_card_chi_square(shoes: Sequence[RecordedShoe]) -> TestResult:
    total = sum(len(s.codes) for s in shoes)
    # as many bins as keep every expected count ≥ 5; card bins divide the 52 of a deck evenly
    b = max([k for k in (2, 4, 13, 26, 52) if total / (k * k) >= MIN_EXPECTED] or [2])
    longest = max(len(s.codes) for s in shoes)
    table = [[0] * b for _ in range(b)]
    for s in shoes:
        for pos, code in enumerate(s.codes):
            table[pos * b // longest][FACTORY_INDEX[code] * b // 52] += 1
    x2, df = 0.0, 0
    for row in table:
        seen = sum(row)
        if not seen:
            continue
        df += b - 1
        x2 += sum((n - seen / b) ** 2 / (seen / b) for n in row)
    return TestResult("position x card chi-square", x2, chi2_sf(x2, max(df, 1)),
                      f"{b} read-position bins x {b} card bins, df {df}")


def factory_successors(shoes: Sequence[RecordedShoe]) -> TestResult:
    kept, mean = 0, 0.0
    for s in shoes:
        n = 52 * s.decks
        kept += sum(1 for a, b in zip(s.codes, s.codes[1:])
                    if FACTORY_INDEX[b] == FACTORY_INDEX[a] + 1)
        mean += (len(s.codes) - 1) * (51 / 52) * s.decks / (n - 1)
    return TestResult("factory successors kept", kept, poisson_two_sided(kept, mean),
                      f"{kept} kept, expected {mean:.2f}")


def previous_pairs(shoes: Sequence[RecordedShoe], before: RecordedShoe | None
                   ) -> TestResult | None:
    """Pairs kept from the previous recorded shoe of the same size; None when no shoe has one."""
    kept, mean, compared = 0, 0.0, 0
    previous = before
    for s in shoes:
        if previous is not None and previous.decks == s.decks:
            d, n = s.decks, 52 * s.decks
            pairs = set(zip(previous.codes, previous.codes[1:]))
            chance = sum(d * (d - 1 if u == v else d) for u, v in pairs) / (n * (n - 1))
            kept += sum(1 for pair in zip(s.codes, s.codes[1:]) if pair in pairs)
            mean += (len(s.codes) - 1) * chance
            compared += 1
        previous = s
    if not compared:
        return None
    return TestResult("pairs kept from the previous shoe", kept, poisson_two_sided(kept, mean),
                      f"{kept} kept in {compared} shoe(s), expected {mean:.2f}")


def recorded_tests(shoes: Sequence[RecordedShoe], before: RecordedShoe | None = None
                   ) -> RecordedReport:
    """The battery on recorded shoes, Holm-adjusted."""
    tests = [position_card_chi_square(shoes), factory_successors(shoes)]
    prev = previous_pairs(shoes, before)
    if prev is not None:
        tests.append(prev)
    parity = [[parse_card(c).rank_index % 2 == 1 for c in s.codes] for s in shoes]
    if all(any(p) and not all(p) for p in parity):
        tests.append(runs_test(parity, "rank parity"))
    return RecordedReport(list(shoes), adjust(tests))


def judge_journal(path: str, last: int) -> RecordedReport:
    """The battery over the last `last` shoes of the journal at `path`."""
    from controller.journal import Journal
    if last < 1:
        raise InputError(f"--last-shoes {last}: give 1 or more")
    journal = Journal.open_readonly(path)
    try:
        shoes, before = read_shoes(journal, last)
    finally:
        journal.close()
    return recorded_tests(shoes, before)

