"""Where the table's events go out: JSON Lines and readable lines on stdout (`lines`), and the
floor feed to an MQTT broker (`outbox`, from the journal)."""
from controller.feed.lines import JsonFeed, TextFeed, format_round

__all__ = ["JsonFeed", "TextFeed", "format_round"]
