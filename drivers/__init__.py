"""Device drivers: bytes ↔ typed device events. Never imports controller/ or simulators/."""
