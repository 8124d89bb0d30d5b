"""Table controller: the domain (cards, games, table machine, journal) and the application."""

__version__ = "0.1.0"
