"""The one reading of the GOLDY_* on/off environment variables (docs/api.md,
"Environment variables"): `0`, `false`, `off` or `no`, in any case and with spaces around,
mean off; any other value means on; unset or empty, the variable's default."""

from __future__ import annotations

import os

OFF = frozenset(("0", "false", "off", "no"))


def env_flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    return default if not raw else raw not in OFF
