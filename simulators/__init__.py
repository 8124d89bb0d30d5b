"""Hardware simulators: pure device models behind the same wire protocols and URLs."""
