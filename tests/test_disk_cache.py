"""The disk cache (goldy_import/cache.py, ircache.py): a changed kernel, option, version or
device never serves a stale entry; corrupt or foreign entries are rewritten; failed builds
are not stored; concurrent writers do not corrupt; `goldy-import cache info|clear`."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import goldy_import as gi
from goldy_import import cache, ircache
from goldy_import.cli import main

SAXPY = """
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn saxpy(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i] + y[i]; }
}
"""
RACY = """
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn racy(out: &mut [u32]) {
    out[0] = gpu::global_id().x;
}
"""


@pytest.fixture
def tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GOLDY_CACHE", raising=False)
    monkeypatch.delenv("GOLDY_CACHE_MB", raising=False)
    return tmp_path / "cache"


def _files(kind: str, root) -> list:
    folder = root / kind
    return sorted(folder.iterdir()) if folder.exists() else []


def _fresh_import(monkeypatch) -> list:
    """Count the importer's runs (a cache hit runs none)."""
    from goldy_import import importer
    calls = []
    real = importer.import_source
    monkeypatch.setattr(importer, "import_source", lambda *a, **k: calls.append(a[1]) or real(*a, **k))
    return calls


def _run_saxpy(mod) -> np.ndarray:
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(200).astype(np.float32), rng.standard_normal(200).astype(np.float32)
    with gi.Device("cpu") as dev:
        bx, by = dev.buffer(x), dev.buffer(y)
        s = gi.Scheme(dev)
        mod.saxpy.prepare(dev).record(s, "saxpy", bx, by, 1.5).over_1d(200)
        s.submit()
        got = by.numpy()
    np.testing.assert_array_equal(got, (np.float32(1.5) * x + y).astype(np.float32))
    return got


def test_warm_load_reads_the_stored_ir(tmp_cache, monkeypatch):
    calls = _fresh_import(monkeypatch)
    cold = gi.load_source(SAXPY, "k.rs")
    warm = gi.load_source(SAXPY, "k.rs")
    assert calls == ["k.rs"] and len(_files("ir", tmp_cache)) == 1
    assert warm.saxpy.IR_JSON == cold.saxpy.IR_JSON and warm.source_hash == cold.source_hash
    assert warm.result.kernel_regions == cold.result.kernel_regions
    _run_saxpy(warm)


def test_warnings_come_back_from_the_cache(tmp_cache, monkeypatch):
    cold = gi.load_source(RACY, "racy.rs").result
    calls = _fresh_import(monkeypatch)
    warm = gi.load_source(RACY, "racy.rs").result
    assert not calls and cold.diagnostics and warm.diagnostics == cold.diagnostics
    assert warm.render() == cold.render()


def test_changed_source_or_name_is_a_miss(tmp_cache, monkeypatch):
    calls = _fresh_import(monkeypatch)
    a = gi.load_source(SAXPY, "k.rs")
    b = gi.load_source(SAXPY.replace("a * x[i]", "a * x[i] * 2.0"), "k.rs")
    c = gi.load_source(SAXPY, "other.rs")  # the file name is in every span
    assert calls == ["k.rs", "k.rs", "other.rs"]
    assert a.saxpy.IR_JSON != b.saxpy.IR_JSON and c.saxpy.definition().ir.source_file == "other.rs"


def test_file_with_errors_is_not_stored(tmp_cache, monkeypatch):
    calls = _fresh_import(monkeypatch)
    for _ in range(2):
        with pytest.raises(gi.DiagnosticError):
            gi.load_source(SAXPY.replace("a: f32", "a: f64"), "bad.rs")
    assert len(calls) == 2 and not _files("ir", tmp_cache)


def test_version_or_toolchain_change_is_a_miss(tmp_cache, monkeypatch):
    gi.load_source(SAXPY, "k.rs")
    calls = _fresh_import(monkeypatch)
    monkeypatch.setattr(cache, "_fingerprint", "another-build")
    gi.load_source(SAXPY, "k.rs")
    assert calls == ["k.rs"] and len(_files("ir", tmp_cache)) == 2


def test_keys_differ_per_option_and_device():
    base = ("kernel ir", "sm_90", None, 32, "H200 (sm_90, CUDA driver 12.8)")
    keys = {cache.key("ptx", base),
            cache.key("ptx", base[:1] + ("sm_80",) + base[2:]),
            cache.key("ptx", base[:2] + ("8.0",) + base[3:]),
            cache.key("ptx", base[:4] + ("H100 (sm_90, CUDA driver 12.8)",)),
            cache.key("ptx", base[:4] + ("H200 (sm_90, CUDA driver 12.9)",)),
            cache.key("wgsl", base)}
    assert len(keys) == 6


@pytest.mark.parametrize("damage", ["truncate", "flip", "foreign", "empty"])
def test_corrupt_entry_is_ignored_and_rewritten(tmp_cache, monkeypatch, damage):
    gi.load_source(SAXPY, "k.rs")
    (entry,) = _files("ir", tmp_cache)
    good = entry.read_bytes()
    bad = {"truncate": good[:len(good) // 2], "flip": good[:-3] + b"XYZ",
           "foreign": b"not a goldy cache entry\n{}", "empty": b""}[damage]
    entry.write_bytes(bad)
    calls = _fresh_import(monkeypatch)
    _run_saxpy(gi.load_source(SAXPY, "k.rs"))
    assert calls == ["k.rs"] and entry.read_bytes() == good


def test_undecodable_entry_with_a_valid_header_is_a_miss(tmp_cache, monkeypatch):
    gi.load_source(SAXPY, "k.rs")
    (entry,) = _files("ir", tmp_cache)
    cache.put_json("ir", entry.name, {"kernels": [{"goldy_ir_version": 999}]})
    calls = _fresh_import(monkeypatch)
    gi.load_source(SAXPY, "k.rs")
    assert calls == ["k.rs"]


def test_disabled_cache_reads_and_writes_nothing(tmp_cache, monkeypatch):
    monkeypatch.setenv("GOLDY_CACHE", "0")
    calls = _fresh_import(monkeypatch)
    gi.load_source(SAXPY, "k.rs")
    gi.load_source(SAXPY, "k.rs")
    assert len(calls) == 2 and not tmp_cache.exists()


def test_size_cap_evicts_least_recently_used(tmp_cache, monkeypatch):
    for i in range(3):
        cache.put("t", f"k{i}", bytes(400))
        os.utime(tmp_cache / "t" / f"k{i}", (1000 + i, 1000 + i))
    assert cache.get("t", "k0") is not None  # a hit makes k0 the most recently used
    entry = (tmp_cache / "t" / "k0").stat().st_size  # the payload and its header line
    monkeypatch.setenv("GOLDY_CACHE_MB", str(3.5 * entry / 2**20))
    cache.put("t", "k3", bytes(400))
    assert sorted(p.name for p in _files("t", tmp_cache)) == ["k0", "k2", "k3"]


def test_no_temporary_file_is_left(tmp_cache):
    cache.put("t", "k", b"payload")
    assert [p.name for p in _files("t", tmp_cache)] == ["k"] and cache.get("t", "k") == b"payload"


_WRITER = """
import sys
from goldy_import import cache
payload = (sys.argv[1] * 20000).encode()
for i in range(200):
    cache.put("t", "shared", payload)
    got = cache.get("t", "shared")
    assert got is None or got in (b"a" * 20000, b"b" * 20000), "torn read"
"""


def test_concurrent_writers_do_not_corrupt(tmp_cache):
    env = {**os.environ, "GOLDY_CACHE_DIR": str(tmp_cache)}
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, c], env=env, stderr=subprocess.PIPE)
             for c in "ab"]
    for p in procs:
        _out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    assert cache.get("t", "shared") in (b"a" * 20000, b"b" * 20000)
    assert [p.name for p in _files("t", tmp_cache)] == ["shared"]


def test_cli_cache_info_and_clear(tmp_cache, capsys):
    gi.load_source(SAXPY, "k.rs")
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert str(tmp_cache) in out and "ir" in out and "1 files" in out
    assert main(["cache", "clear"]) == 0
    assert "removed 1 files" in capsys.readouterr().out
    assert cache.info()["entries"] == 0


def test_warm_process_loads_no_tree_sitter(tmp_cache, tmp_path):
    src = tmp_path / "saxpy.rs"
    src.write_text(SAXPY)
    code = ("import sys, goldy_import as gi; gi.load(sys.argv[1]); "
            "print('tree_sitter' in sys.modules, 'goldy_import.importer' in sys.modules)")
    env = {**os.environ, "GOLDY_CACHE_DIR": str(tmp_cache)}
    runs = [subprocess.run([sys.executable, "-c", code, str(src)], env=env, capture_output=True, text=True,
                           check=True).stdout.split() for _ in range(2)]
    assert runs == [["True", "True"], ["False", "False"]]


def test_ircache_round_trip_keeps_structs(tmp_cache):
    src = """
#[goldy::gpu]
struct P { pos: [f32; 2], mass: f32 }
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(ps: &mut [P]) {
    let i = gpu::global_id().x;
    if i < ps.len() { ps[i].mass = ps[i].mass * 2.0; }
}
"""
    cold = ircache.import_cached(src.encode(), "s.rs")
    warm = ircache.import_cached(src.encode(), "s.rs")
    assert warm.structs == cold.structs and warm.kernels == cold.kernels


def _run_on(backend: str, mod, checks: bool = True) -> None:
    """saxpy on `backend` from a fresh device (no in-memory kernel cache), against numpy,
    outputs poisoned first."""
    rng = np.random.default_rng(11)
    n = 300
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    with gi.Device(backend) as dev:
        bx, by = dev.buffer(x), dev.buffer(np.full(n, np.nan, np.float32))
        by.write(y)
        s = gi.Scheme(dev)
        mod.saxpy.prepare(dev, checks=checks).record(s, "saxpy", bx, by, -0.75).over_1d(n)
        s.submit()
        np.testing.assert_array_equal(by.numpy(), (np.float32(-0.75) * x + y).astype(np.float32))


@pytest.mark.cuda
def test_ptx_entries_per_kernel_and_option(tmp_cache):
    from oracle import backend_or_skip
    backend_or_skip("cuda")
    mod = gi.load_source(SAXPY, "k.rs")
    _run_on("cuda", mod)
    (entry,) = _files("ptx", tmp_cache)
    _run_on("cuda", mod)  # a new device: the PTX is read back
    assert _files("ptx", tmp_cache) == [entry]
    _run_on("cuda", mod, checks=False)  # another option: another entry
    assert len(_files("ptx", tmp_cache)) == 2
    good = entry.read_bytes()
    entry.write_bytes(good[:-40])
    _run_on("cuda", mod)  # corrupt: emitted again and rewritten
    assert entry.read_bytes() == good
    changed = gi.load_source(SAXPY.replace("[64, 1, 1]", "[128, 1, 1]"), "k.rs")
    _run_on("cuda", changed)
    assert len(_files("ptx", tmp_cache)) == 3


def test_wgpu_subnormal_probe_is_stored_per_adapter(tmp_cache):
    from oracle import backend_or_skip
    backend_or_skip("wgpu")
    mod = gi.load_source(SAXPY, "k.rs")
    _run_on("wgpu", mod)
    (entry,) = _files("probe", tmp_cache)
    _run_on("wgpu", mod)
    assert _files("probe", tmp_cache) == [entry]
    entry.write_bytes(b"garbage")
    _run_on("wgpu", mod)
    assert cache.get_json("probe", entry.name) in (True, False)
