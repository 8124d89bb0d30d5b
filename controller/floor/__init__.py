"""The floor view: every table on the floor feed's broker (`tablectl floor`)."""
