"""The release: the software's identity and approval, and the table PC's lock file."""
