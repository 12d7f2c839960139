"""Runtime: device-independent core plus one module per backend."""
