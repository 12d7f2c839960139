"""The on-disk cache: what one process computed that the next would otherwise redo (a Rust
file's imported IR, emitted target code, device probes), so a warm start skips tree-sitter
and the emitters.

    GOLDY_CACHE_DIR   where entries live (default $XDG_CACHE_HOME/goldy-import, else
                      ~/.cache/goldy-import)
    GOLDY_CACHE=0     no cache: nothing read, nothing written
    GOLDY_CACHE_MB    size cap in MiB (default 256); least recently used entries go first

An entry is one file `<dir>/<kind>/<key>`: a header line naming the format, kind, key and
the payload's SHA-256, then the payload. A key hashes everything the payload depends on:
the caller's parts (IR, target, options, device) and this toolchain (version and a
fingerprint of its own source files, so an edited checkout never reads an older build's
entries). Writes go to a temporary file renamed into place, so a reader sees a whole entry
or none, and two writers of one key leave one of their (equal) entries. A header or hash
that does not match (a torn, corrupt or foreign file) is a miss, and the next write
replaces it. The cache is best-effort: an unreadable or full disk only costs speed.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from typing import Any, Iterable, Optional

from .envflag import env_flag
from .version import __version__

FORMAT = "goldy-cache 1"
DEFAULT_MB = 256
_PACKAGE = os.path.dirname(os.path.realpath(__file__))
_SOURCE_DIRS = ("", "importer", "ir", "codegen", "runtime")  # everything an entry may depend on
_log = logging.getLogger("goldy_import.cache")
_fingerprint: Optional[str] = None


def enabled() -> bool:
    return env_flag("GOLDY_CACHE", True)


def directory() -> str:
    explicit = os.environ.get("GOLDY_CACHE_DIR")
    if explicit:
        return os.path.abspath(os.path.expanduser(explicit))
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "goldy-import")


def max_bytes() -> int:
    try:
        return max(0, int(float(os.environ.get("GOLDY_CACHE_MB", DEFAULT_MB)) * 2**20))
    except ValueError:
        return DEFAULT_MB * 2**20


def toolchain() -> str:
    """This goldy-import: its version and the size and mtime of each of its source files
    (stat only, once per process), so entries of another build or an edited tree differ."""
    global _fingerprint
    if _fingerprint is None:
        h = hashlib.sha256(f"goldy-import {__version__}".encode())
        for sub in _SOURCE_DIRS:
            top = os.path.join(_PACKAGE, sub)
            for root, dirs, files in os.walk(top):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__") if sub else []
                for f in sorted(files):
                    if f.endswith(".py"):
                        path = os.path.join(root, f)
                        st = os.stat(path)
                        h.update(f"{path[len(_PACKAGE):]} {st.st_size} {st.st_mtime_ns}\0".encode())
        _fingerprint = h.hexdigest()[:16]
    return _fingerprint


def key(kind: str, parts: Iterable[Any]) -> str:
    """The entry key of `parts` (strings, bytes or reprs) for `kind`, this toolchain's."""
    h = hashlib.sha256(f"{FORMAT}\0{kind}\0{toolchain()}\0".encode())
    for p in parts:
        h.update(p if isinstance(p, bytes) else (p if isinstance(p, str) else repr(p)).encode())
        h.update(b"\0")
    return h.hexdigest()[:40]


def _path(kind: str, k: str) -> str:
    return os.path.join(directory(), kind, k)


def get(kind: str, k: str) -> Optional[bytes]:
    """The payload stored under `k`, or None (disabled, absent, torn, corrupt or foreign)."""
    if not enabled():
        return None
    path = _path(kind, k)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    head, sep, payload = data.partition(b"\n")
    if not sep or head != _header(kind, k, payload):
        _log.debug("ignoring the corrupt or foreign cache entry %s", path)
        return None
    try:
        os.utime(path)  # least recently used goes first
    except OSError:
        pass
    return payload


def put(kind: str, k: str, payload: bytes) -> None:
    """Store `payload` under `k` atomically, then keep the cache under its cap."""
    if not enabled():
        return
    import tempfile  # only a write needs it: a warm start reads
    folder = os.path.join(directory(), kind)
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(_header(kind, k, payload) + b"\n" + payload)
            os.replace(tmp, os.path.join(folder, k))
        except BaseException:
            _unlink(tmp)
            raise
        evict(max_bytes())
    except OSError as e:
        _log.debug("cannot write the cache entry %s/%s: %s", kind, k, e)


def _header(kind: str, k: str, payload: bytes) -> bytes:
    return f"{FORMAT} {kind} {k} {hashlib.sha256(payload).hexdigest()}".encode()


def get_json(kind: str, k: str) -> Any:
    data = get(kind, k)
    if data is None:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def put_json(kind: str, k: str, value: Any) -> None:
    put(kind, k, json.dumps(value, separators=(",", ":")).encode())


def get_text(kind: str, k: str) -> Optional[str]:
    data = get(kind, k)
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _entries() -> list[tuple[str, str, int, float, bool]]:
    """(kind, path, bytes, last use, whether it is one of ours) of every file in the cache;
    files deeper than `<kind>/<key>` belong to a compiler's own cache (Slang's)."""
    out = []
    top = directory()
    for root, dirs, files in os.walk(top):
        rel = os.path.relpath(root, top)
        if rel == ".":
            continue
        parts = rel.split(os.sep)
        for f in files:
            path = os.path.join(root, f)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            out.append((parts[0], path, st.st_size, st.st_mtime, len(parts) == 1))
    return out


def evict(limit: int) -> int:
    """Delete our least recently used entries until they hold at most `limit` bytes (the
    Slang folder is Slang's to size); returns how many went."""
    entries = [e for e in _entries() if e[4]]  # Slang sizes its own cache
    total = sum(e[2] for e in entries)
    gone = 0
    for _kind, path, size, _t, _ours in sorted(entries, key=lambda e: e[3]):
        if total <= limit:
            break
        gone += _unlink(path)
        total -= size
    return gone


def info() -> dict:
    """Where the cache is, whether it is on, its cap, and its files and bytes per kind."""
    kinds: dict[str, dict[str, int]] = {}
    for kind, _path, size, _t, _ours in _entries():
        k = kinds.setdefault(kind, {"entries": 0, "bytes": 0})
        k["entries"] += 1
        k["bytes"] += size
    return {"directory": directory(), "enabled": enabled(), "max_bytes": max_bytes(),
            "entries": sum(k["entries"] for k in kinds.values()),
            "bytes": sum(k["bytes"] for k in kinds.values()), "kinds": dict(sorted(kinds.items()))}


def clear() -> int:
    """Delete every file in the cache (Slang's included); returns how many went."""
    gone = sum(_unlink(path) for _kind, path, _size, _t, _ours in _entries())
    for root, dirs, _files in os.walk(directory(), topdown=False):
        for d in dirs:
            try:
                os.rmdir(os.path.join(root, d))
            except OSError:
                pass
    return gone


def _unlink(path: str) -> bool:
    try:
        os.unlink(path)
        return True
    except OSError:
        return False


def main(command: str) -> int:
    """`goldy-import cache info|clear`."""
    if command == "clear":
        print(f"removed {clear()} files from {directory()}")
        return 0
    i = info()
    print(f"directory: {i['directory']}")
    print(f"enabled:   {'yes' if i['enabled'] else 'no (GOLDY_CACHE=0)'}")
    print(f"cap:       {i['max_bytes'] / 2**20:.0f} MiB (GOLDY_CACHE_MB)")
    print(f"holds:     {i['entries']} files, {i['bytes'] / 2**20:.2f} MiB")
    for kind, k in i["kinds"].items():
        print(f"  {kind:8} {k['entries']:6} files {k['bytes'] / 2**20:10.2f} MiB")
    return 0
