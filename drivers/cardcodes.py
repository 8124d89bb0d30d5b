"""The card alphabet of every wire and file: rank A23456789TJQK + suit SHDC ("AS", "TD").

Dependency-free, the bottom layer: the shoe codecs, the shuffler protocol and the controller's
Card all spell cards with it.
"""

RANKS = "A23456789TJQK"
SUITS = "SHDC"
#: the 52 codes in factory order, suit-major (S, H, D, C), each ace to king
CARD_CODES: tuple[str, ...] = tuple(r + s for s in SUITS for r in RANKS)
