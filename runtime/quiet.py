"""Driver noise that looks like an error is not shown to users: what the drivers print
goes to Python logging (logger `goldy_import.driver`), or the driver gets what it needs.

- Mesa's Vulkan drivers print `error: XDG_RUNTIME_DIR is invalid or not set` from their
  Wayland probe when the variable is unset (containers, CI, ssh sessions). Before the
  first wgpu adapter query, an unset or invalid XDG_RUNTIME_DIR is set to a private
  temporary directory (removed at exit), which is all the probe needs.
- slangpy logs `[WARN] No supported shader model found, ...` when it opens a CPU device;
  while goldy-import opens a slang device or compiles for it, slangpy's log lines go to
  logging instead of the console (slangpy's console output is restored afterwards).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import shutil
import sys
import tempfile
import threading
from typing import Any, Iterator

log = logging.getLogger("goldy_import.driver")
_lock = threading.Lock()
_xdg_done = False


def ensure_xdg_runtime_dir() -> None:
    """Give Mesa's Wayland probe a valid XDG_RUNTIME_DIR if the environment has none (Linux)."""
    global _xdg_done
    with _lock:
        if _xdg_done or not sys.platform.startswith("linux"):
            return
        _xdg_done = True
        current = os.environ.get("XDG_RUNTIME_DIR", "")
        if current and os.path.isabs(current) and os.path.isdir(current):
            return
        path = tempfile.mkdtemp(prefix="goldy-xdg-")  # mode 0700, as the spec asks
        atexit.register(shutil.rmtree, path, True)
        os.environ["XDG_RUNTIME_DIR"] = path
        log.debug("XDG_RUNTIME_DIR was %s; set it to %s for the Vulkan driver",
                  repr(current) if current else "unset", path)


_LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR,
           "fatal": logging.CRITICAL}


_slang = {"depth": 0, "output": None}


@contextlib.contextmanager
def slang_log_to_logging(spy: Any) -> Iterator[None]:
    """slangpy's log lines as `goldy_import.driver` records while the block runs (nested
    and concurrent uses share one forwarder). slangpy's own messages are advice for its
    users (shader models, hot reload), not errors of ours, so they are logged one level
    lower than slangpy gives them."""
    with _lock:
        if _slang["depth"] == 0:
            try:
                class _Forward(spy.LoggerOutput):  # type: ignore[misc, name-defined]
                    def write(self, level: Any, name: str, msg: str) -> None:
                        lvl = _LEVELS.get(str(getattr(level, "name", level)).lower(), logging.INFO)
                        log.log(max(logging.DEBUG, lvl - 10), "slangpy: %s", msg.rstrip())

                fwd = _Forward()
                spy.Logger.get().remove_all_outputs()
                spy.Logger.get().add_output(fwd)
                _slang["output"] = fwd
            except Exception:  # another slangpy: leave its logging alone
                _slang["output"] = None
        _slang["depth"] += 1
    try:
        yield
    finally:
        with _lock:
            _slang["depth"] -= 1
            if _slang["depth"] == 0 and _slang["output"] is not None:
                spy.Logger.get().remove_output(_slang["output"])
                spy.Logger.get().add_console_output()
                _slang["output"] = None
