"""Settings: the table's configuration, game profiles, their TOML checking, command-line value
types, and where files are found."""
