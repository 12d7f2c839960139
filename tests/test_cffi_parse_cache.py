"""runtime/cffi_parse_cache.py: cffi's C parses (wgpu-py's webgpu.h and each type it names)
come from the disk cache in a warm process, give the same types, and a damaged entry, a
failed parse or GOLDY_CACHE=0 never gives a wrong one. Each run is a fresh interpreter:
cffi keeps what it parsed for the life of a process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from goldy_import.runtime.cffi_parse_cache import KIND

HEADER = """
typedef enum { RED, GREEN = 5, BLUE } color_t;
typedef struct pt { float x; unsigned char tag; double z; color_t c; } pt_t;
struct pt *make(int n, ...);
#define WIDTH 42
"""

COUNTING = r"""
import pycparser
real = pycparser.CParser.parse
count = [0]
def counting(self, *a, **k):
    count[0] += 1
    return real(self, *a, **k)
pycparser.CParser.parse = counting  # what reaches pycparser itself: a cache miss
"""

CHILD = COUNTING + r"""
import json, sys
from goldy_import.runtime import cffi_parse_cache
cffi_parse_cache.install()
import cffi
ffi = cffi.FFI()
ffi.cdef(sys.argv[1])
lib = ffi.dlopen(None)
out = {"sizeof": ffi.sizeof("pt_t"), "offset_z": ffi.offsetof("struct pt", "z"),
       "fields": [f for f, _ in ffi.typeof("struct pt").fields], "green": lib.GREEN,
       "width": lib.WIDTH, "func": ffi.typeof("struct pt *(*)(int, ...)").cname,
       "new": ffi.sizeof(ffi.new("pt_t *")[0]), "array": ffi.sizeof(ffi.new("color_t[3]"))}
try:
    ffi.typeof("struct pt * (")  # a parse error: raised as before, stored nowhere
    out["bad"] = "parsed"
except cffi.CDefError as e:
    out["bad"] = type(e).__name__
out["real_parses"] = count[0]
print(json.dumps(out))
"""


def run_child(cache_dir, **env) -> dict:
    e = {**os.environ, "GOLDY_CACHE_DIR": str(cache_dir), **env}
    if "GOLDY_CACHE" not in env:
        e.pop("GOLDY_CACHE", None)
    r = subprocess.run([sys.executable, "-c", CHILD, HEADER], env=e, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def entries(cache_dir) -> list:
    folder = cache_dir / KIND
    return sorted(folder.iterdir()) if folder.exists() else []


def types_of(out: dict) -> dict:
    return {k: v for k, v in out.items() if k != "real_parses"}


@pytest.fixture
def cache_dir(tmp_path):
    return tmp_path / "cache"


def test_warm_process_parses_nothing_and_gets_the_same_types(cache_dir):
    cold = run_child(cache_dir)
    assert cold["real_parses"] >= 4 and cold["bad"] == "CDefError"
    stored = entries(cache_dir)
    assert len(stored) == cold["real_parses"] - 1  # every parse but the failed one
    warm = run_child(cache_dir)
    assert warm["real_parses"] == 1  # only the parse error, which is never stored
    assert types_of(warm) == types_of(cold)
    assert cold["fields"] == ["x", "tag", "z", "c"] and cold["green"] == 5 and cold["width"] == 42


@pytest.mark.parametrize("damage", ["truncated", "valid header, not a pickle"])
def test_damaged_entry_is_parsed_again_and_rewritten(cache_dir, damage, monkeypatch):
    cold = run_child(cache_dir)
    victim = entries(cache_dir)[0]
    if damage == "truncated":
        victim.write_bytes(victim.read_bytes()[:40])
    else:
        from goldy_import import cache
        monkeypatch.setenv("GOLDY_CACHE_DIR", str(cache_dir))
        monkeypatch.delenv("GOLDY_CACHE", raising=False)
        cache.put(KIND, victim.name, b"not a pickle")
    again = run_child(cache_dir)
    assert again["real_parses"] == 2  # the damaged entry and the parse error
    assert types_of(again) == types_of(cold)
    assert run_child(cache_dir)["real_parses"] == 1  # rewritten


def test_disabled_cache_parses_every_time_and_stores_nothing(cache_dir):
    first = run_child(cache_dir, GOLDY_CACHE="0")
    second = run_child(cache_dir, GOLDY_CACHE="0")
    assert first["real_parses"] == second["real_parses"] >= 4
    assert entries(cache_dir) == []


def test_warm_wgpu_process_parses_no_c(cache_dir, tmp_path):
    """The case it exists for: a second process opening wgpu and running saxpy (checked
    against numpy) hands pycparser nothing."""
    from oracle import backend_or_skip
    backend_or_skip("wgpu")
    code = COUNTING + r"""
import sys
import numpy as np
import goldy_import as gi
dev = gi.Device("wgpu")
mod = gi.load(sys.argv[1])
x = np.random.default_rng(3).standard_normal(1000).astype(np.float32)
y = np.full(1000, np.nan, np.float32)
bx, by = dev.buffer(x), dev.buffer(y)
s = gi.Scheme(dev)
mod.saxpy.prepare(dev).record(s, "s", bx, by, 2.0).over_1d(1000)
s.submit()
assert np.isnan(by.numpy()).all()  # y was NaN: 2x + NaN stays NaN everywhere written
y2 = np.ones(1000, np.float32)
by2 = dev.buffer(y2)
s2 = gi.Scheme(dev)
mod.saxpy.prepare(dev).record(s2, "s", bx, by2, 2.0).over_1d(1000)
s2.submit()
assert np.array_equal(by2.numpy(), np.float32(2.0) * x + y2)
print(count[0])
"""
    saxpy = os.path.join(os.path.dirname(__file__), "..", "rust_examples", "saxpy.rs")
    env = {**os.environ, "GOLDY_CACHE_DIR": str(cache_dir)}
    env.pop("GOLDY_CACHE", None)
    runs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", code, saxpy], env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        runs.append(int(r.stdout.split()[-1]))
    assert runs[0] > 10 and runs[1] == 0
