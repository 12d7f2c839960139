"""Accuracy of the PTX transcendental sequences, measured on their bit-exact numpy twin
(codegen/ptx_math.NumpyOps evaluates the same operation list the emitter renders)."""

from __future__ import annotations

import numpy as np
import pytest

from goldy_import.codegen import ptx_math as PM

RTOL, ATOL = 2e-6, 1e-6  # docs/semantics.md


def ulps(got: np.ndarray, ref: np.ndarray) -> float:
    """Largest error in units of the last place of the rounded reference (normal results)."""
    with np.errstate(over="ignore"):
        r32 = ref.astype(np.float32)
    ok = np.isfinite(r32) & (np.abs(r32) >= np.finfo(np.float32).tiny)
    err = np.abs(got.astype(np.float64) - ref) / np.spacing(np.abs(r32)).astype(np.float64)
    return float(np.max(np.where(ok, err, 0.0)))


def within_semantics(got, ref):
    g = got.astype(np.float64)
    with np.errstate(invalid="ignore"):
        return np.all((g == ref) | (np.abs(g - ref) <= RTOL * np.abs(ref) + ATOL))


@pytest.fixture(scope="module")
def rng():
    return np.random.default_rng(20261117)


@pytest.mark.parametrize("name,ref,bound", [
    ("exp", np.exp, 2), ("exp2", np.exp2, 2), ("sin", np.sin, 2), ("cos", np.cos, 2), ("tan", np.tan, 4)])
def test_unary_bounds(name, ref, bound, rng):
    x = np.concatenate([rng.uniform(-100, 100, 400_000), rng.uniform(-1, 1, 100_000),
                        np.linspace(-100, 100, 100_001)]).astype(np.float32)
    if name in ("sin", "cos", "tan"):
        x = np.concatenate([x, rng.uniform(-1e5, 1e5, 100_000).astype(np.float32)])
    got = PM.evaluate(name, x)
    want = ref(x.astype(np.float64))
    assert ulps(got, want) <= bound
    with np.errstate(over="ignore"):
        keep = (np.abs(x) <= 100) & np.isfinite(want.astype(np.float32))  # finite results only
    assert within_semantics(got[keep], want[keep])


@pytest.mark.parametrize("name,ref,bound", [("sin", np.sin, 2), ("cos", np.cos, 2), ("tan", np.tan, 4)])
def test_huge_arguments_reduce_exactly(name, ref, bound, rng):
    x = (np.exp(rng.uniform(np.log(1e5), 88.7, 300_000)) * rng.choice([-1, 1], 300_000)).astype(np.float32)
    x = np.concatenate([x, np.float32([1e30, -1e30, 3.4e38, 100001.0, 99999.0])])
    assert ulps(PM.evaluate(name, x), ref(x.astype(np.float64))) <= bound


@pytest.mark.parametrize("name,ref", [("log", np.log), ("log2", np.log2)])
def test_log_bounds(name, ref, rng):
    x = np.concatenate([rng.uniform(0, 100, 300_000), np.exp(rng.uniform(-87, 88, 300_000)),
                        1 + rng.uniform(-1e-3, 1e-3, 100_000)]).astype(np.float32)
    x = x[x > 0]
    got = PM.evaluate(name, x)
    want = ref(x.astype(np.float64))
    assert ulps(got, want) <= 2
    assert within_semantics(got, want)
    p2 = (2.0 ** np.arange(-126, 128)).astype(np.float32)
    if name == "log2":  # exact on powers of two
        assert np.array_equal(PM.evaluate("log2", p2), np.arange(-126, 128).astype(np.float32))


def test_pow_bound(rng):
    x = rng.uniform(0, 10, 300_000).astype(np.float32)
    y = rng.uniform(-30, 30, 300_000).astype(np.float32)
    got = PM.evaluate("pow", x, y)
    assert ulps(got, np.power(x.astype(np.float64), y.astype(np.float64))) <= 1


SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, np.inf, -np.inf, np.nan,
                    1e-30, 1e30, -1e30], dtype=np.float32)


def test_special_values_follow_numpy():
    with np.errstate(all="ignore"):
        for name, ref in (("exp", np.exp), ("exp2", np.exp2), ("log", np.log), ("log2", np.log2),
                          ("sin", np.sin), ("cos", np.cos), ("tan", np.tan)):
            got, want = PM.evaluate(name, SPECIAL), ref(SPECIAL)
            same = (np.isnan(got) & np.isnan(want)) | np.isclose(got, want, rtol=RTOL, atol=ATOL)
            assert same.all(), (name, SPECIAL[~same], got[~same], want[~same])
        x, y = np.meshgrid(SPECIAL, SPECIAL)
        got, want = PM.evaluate("pow", x, y), np.power(x, y)
        same = (np.isnan(got) & np.isnan(want)) | np.isclose(got, want, rtol=RTOL, atol=ATOL)
        same &= (np.signbit(got) == np.signbit(want)) | np.isnan(want)
        assert same.all(), list(zip(x[~same], y[~same], got[~same], want[~same]))


def test_fmod_is_exact(rng):
    a = np.concatenate([rng.uniform(-100, 100, 200_000), rng.standard_normal(50_000) * 1e30,
                        SPECIAL.repeat(16)]).astype(np.float32)
    b = np.concatenate([rng.uniform(-10, 10, 200_000), rng.standard_normal(50_000) * 1e-3,
                        np.tile(SPECIAL, 16)]).astype(np.float32)
    with np.errstate(all="ignore"):
        want = np.fmod(a, b)
    got = PM.evaluate("fmod", a, b)
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), list(zip(a[~same], b[~same], got[~same], want[~same]))[:5]


def test_immediates_are_exact():
    assert PM.fimm(1.0) == "0f3F800000" and PM.fimm(-0.0) == "0f80000000"
    assert PM.dimm(1.0) == "0d3FF0000000000000"[:2] + "3FF0000000000000"
