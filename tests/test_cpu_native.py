"""The one-pass loop's sum in C (codegen/cpu/native.py): the numpy path's bits (one f32
rounding per product and per add, each lane's adds in order) on every operand layout
`accumulate` hands it, built once and kept in the disk cache, and never required."""

import os
import subprocess

import numpy as np
import pytest

from goldy_import import cache
from goldy_import.codegen.cpu import ckernel, native
from goldy_import.codegen.cpu import loops as L

import test_cpu_loops
from test_cpu_loops import specials
from oracle import c_compiler_or_skip
from test_differential_fuzz import assert_bits

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf among the values



@pytest.fixture(autouse=True)
def numpy_form_only(monkeypatch):
    """These tests are about the numpy form: no dispatch may move to its C form."""
    monkeypatch.setattr(ckernel, "PREFER", False)


def numpy_path(monkeypatch, fn):
    with monkeypatch.context() as m:
        m.setattr(native, "library", lambda: None)
        return fn()


def sequential(acc, count, x, op, y, lanes):
    """The SIMT loop's definition: one add per iteration over all lanes, in order."""
    xs = np.broadcast_to(x, (count,) + lanes)
    ys = None if op is None else np.broadcast_to(y, (count,) + lanes)
    s = np.broadcast_to(np.float32(acc), lanes).astype(np.float32)
    for j in range(count):
        s = s + (xs[j] if op is None else op(xs[j], ys[j]))
    return s


def layouts(r, count: int, H: int, S: int):
    """Operands as accumulate sees them: a transposed copy's rows (lanes contiguous), a
    strided run per lane (a row-major GEMV row), one value per iteration, one per lane,
    and a uniform scalar."""
    lanes = H * S
    big = specials(r, (count + 3) * (lanes + 5))
    T = big[: count * (lanes + 5)].reshape(count, lanes + 5)[:, 2:2 + lanes].reshape(count, H, S)
    d = count + 3
    runs = L.run_view(big, 1, (count, lanes), d).reshape(count, H, S)
    return {"transposed": T, "runs": runs, "per_iteration": specials(r, count).reshape(count, 1, 1),
            "per_lane": specials(r, lanes).reshape(1, H, S), "scalar": np.float32(r.standard_normal())}


@pytest.fixture
def c_compiler():
    c_compiler_or_skip()  # fails instead where GOLDY_REQUIRE_BACKENDS names cc (CI)


needs_cc = pytest.mark.usefixtures("c_compiler")


@needs_cc
@pytest.mark.parametrize("count", [1, 3, 4, 7, 288])
@pytest.mark.parametrize("H,S", [(1, 1), (5, 64), (3, 7), (1, 40)])
@pytest.mark.parametrize("op", [None, np.multiply, np.add, np.subtract])
def test_the_c_sums_are_the_numpy_paths_bits(monkeypatch, count, H, S, op):
    assert native.library() is not None
    r = np.random.default_rng(count * 131 + H * 7 + S)
    ops = layouts(r, count, H, S)
    accs = [np.float32(0), specials(r, H * S).reshape(H, S)]
    for xname in ("transposed", "runs", "per_iteration"):
        for yname in (["-"] if op is None else ops):
            for acc in accs:
                x, y = ops[xname], (None if op is None else ops[yname])
                args = (acc, count, x, op) if op is None else (acc, count, x, op, y)
                calls = []
                real = native.accumulate
                monkeypatch.setattr(native, "accumulate", lambda *a: calls.append(1) or real(*a))
                got = L.accumulate(*args)
                monkeypatch.setattr(native, "accumulate", real)
                want = numpy_path(monkeypatch, lambda: L.accumulate(*args))
                what = f"{xname} {getattr(op, '__name__', None)} {yname} count={count} lanes=({H}, {S})"
                assert calls, what  # the C helper took it
                assert_bits(np.asarray(got), np.asarray(want), what)
                assert_bits(np.asarray(got), sequential(acc, count, x, op, y, (H, S)), what + " (sequential)")


@needs_cc
def test_a_row_repeated_per_workgroup_goes_the_numpy_way(monkeypatch):
    """A (1, S) operand over (H, S) lanes, H > 1, has no single lane stride: numpy's path."""
    r = np.random.default_rng(2)
    x = specials(r, 4 * 8).reshape(4, 1, 8)
    y = specials(r, 3 * 8).reshape(1, 3, 8)
    assert native.accumulate(np.float32(0), 4, [x, np.broadcast_to(y[:, :1], (1, 1, 8))[:, :, :]], np.multiply,
                             (3, 8)) is None
    got = L.accumulate(np.float32(0), 4, x, np.multiply, y)
    assert_bits(got, sequential(np.float32(0), 4, x, np.multiply, y, (3, 8)), "broadcast rows")


@needs_cc
@pytest.mark.parametrize("blocks", [None, 1 << 10])
def test_random_kernels_without_the_c_helper_still_match_the_simt_loop(monkeypatch, blocks):
    """tests/test_cpu_loops.py's random kernels (which use the C helper) on numpy's path."""
    monkeypatch.setattr(native, "library", lambda: None)
    test_cpu_loops.test_one_pass_loops_match_the_simt_loop_on_random_kernels(monkeypatch, blocks)


@needs_cc
def test_built_once_then_read_from_the_disk_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("GOLDY_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("GOLDY_CACHE", "1")
    monkeypatch.setattr(native, "_tried", False)
    monkeypatch.setattr(native, "_lib", None)
    assert native.library() is not None
    entries = os.listdir(tmp_path / "cpu-native")
    assert len(entries) == 1
    # a second process: no compiler run
    monkeypatch.setattr(native, "_tried", False)
    monkeypatch.setattr(native, "_lib", None)

    def no_compiler(*a, **k):
        raise AssertionError("compiled again")
    monkeypatch.setattr(subprocess, "run", no_compiler)
    assert native.library() is not None
    # a corrupt entry is a miss: rebuilt (the compiler runs) and rewritten
    path = tmp_path / "cpu-native" / entries[0]
    path.write_bytes(path.read_bytes()[:-100])
    monkeypatch.undo()
    monkeypatch.setenv("GOLDY_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(native, "_tried", False)
    monkeypatch.setattr(native, "_lib", None)
    assert native.library() is not None
    assert cache.get("cpu-native", entries[0]) is not None


def test_off_or_without_a_compiler_the_sums_stay_in_numpy(monkeypatch, tmp_path):
    for env in ({"GOLDY_CPU_NATIVE": "0"}, {"CC": str(tmp_path / "no-such-cc")}):
        with monkeypatch.context() as m:
            for k, v in env.items():
                m.setenv(k, v)
            m.setattr(native, "_tried", False)
            m.setattr(native, "_lib", None)
            assert native.library() is None
            x = np.arange(12, dtype=np.float32).reshape(3, 1, 4)
            got = L.accumulate(np.float32(1), 3, x)
            assert_bits(got, sequential(np.float32(1), 3, x, None, None, (1, 4)), "numpy path")


def test_a_failing_compiler_is_not_an_error(monkeypatch, tmp_path):
    bad = tmp_path / "cc"
    bad.write_text("#!/bin/sh\necho 'cc: broken' >&2\nexit 1\n")
    bad.chmod(0o755)
    monkeypatch.setenv("CC", str(bad))
    monkeypatch.setenv("GOLDY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(native, "_tried", False)
    monkeypatch.setattr(native, "_lib", None)
    assert native.library() is None
    assert not (tmp_path / "cache" / "cpu-native").exists()  # a failed build is never cached


@needs_cc
@pytest.mark.parametrize("H,S", [(5, 64), (3, 7), (1, 300)])
def test_a_sum_split_between_two_cores_is_the_same(monkeypatch, H, S):
    """Big sums go half to a helper thread (native.SPLIT_TERMS): the lanes are independent."""
    monkeypatch.setattr(native, "SPLIT_TERMS", 0)
    if native._helpers() is None:
        pytest.skip("one core")
    r = np.random.default_rng(H * S)
    ops = layouts(r, 37, H, S)
    for xname in ("transposed", "runs"):
        x, y = ops[xname], ops["per_iteration"]
        got = L.accumulate(np.float32(0.5), 37, x, np.multiply, y)
        assert_bits(got, sequential(np.float32(0.5), 37, x, np.multiply, y, (H, S)), f"{xname} split")
