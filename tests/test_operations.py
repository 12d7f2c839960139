"""The operations users reach for (issue 19): integer bit operations, signs and float
predicates, wrapping arithmetic, `f32::NAN`, `normalize`, `cross`, the atomics (on buffers
and workgroup arrays, f32 `atomic_add` where the target has it), `bool` fields in
`#[goldy::gpu]` structs, and the help line an unknown operation gets.

Each runs on every backend against the CPU oracle, bit for bit, over fresh random data
with edge values, outputs poisoned; the oracle itself is checked against Rust's
definitions written in plain Python. (tanh, atan2 and hypot are in tests/test_mathlib.py
with the rest of the math library.)"""

from __future__ import annotations

import math

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.errors import TargetUnsupported
from goldy_import.importer import import_source
from goldy_import.ir import nodes as N
from goldy_import.ir.serialize import from_json, to_json
from goldy_import.ir.verify import VerifyError, verify
from goldy_import.runtime.dtypes import struct_host_dtype
from oracle import assert_same, device, kernel_ir, run_kernel, rust_loc, same_bits
from test_ptx import ptxas  # noqa: F401  (the fixture: required in CI, else skipped)

BACKENDS = ["cpu", "wgpu", "slang", "cuda"]
POISON = 0xDEADBEEF


def seed() -> int:
    return int(np.random.SeedSequence().entropy % 2 ** 32)


def poison(n: int, dtype) -> np.ndarray:
    return np.full(n, POISON, np.uint32).view(dtype)


def check(what: str, got: np.ndarray, want: np.ndarray, width: int, *inputs) -> None:
    ok = same_bits(got, want)
    if not ok.all():
        bad = np.flatnonzero(~ok)[:5]
        rows = [(j % width, tuple(x[j // width].item() for x in inputs), got[j].item(), want[j].item()) for j in bad]
        raise AssertionError(f"{what}: {int((~ok).sum())} of {got.size} differ (slot, inputs, got, want): {rows}")


# ---------------------------------------------------------------- bits, signs, predicates

SCALARS = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn scalar_ops(a: &[i32], u: &[u32], x: &[f32], y: &[f32], oi: &mut [i32], ou: &mut [u32], of: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < a.len() {
        let s = a[i];
        let w = u[i];
        let p = x[i];
        let o = 8 * i;
        ou[o] = w.count_ones();
        ou[o + 1] = w.leading_zeros();
        ou[o + 2] = w.trailing_zeros();
        ou[o + 3] = w.rotate_left(s as u32);
        ou[o + 4] = u32::rotate_right(w, s as u32);
        ou[o + 5] = w.wrapping_add(u[(i + 1) % u.len()]).wrapping_mul(w).wrapping_sub(7);
        ou[o + 6] = s.count_ones() | (s.leading_zeros() << 8) | (s.trailing_zeros() << 16);
        ou[o + 7] = (p.is_nan() as u32) | ((p.is_finite() as u32) << 1) | ((p.is_infinite() as u32) << 2);
        oi[4 * i] = s.signum();
        oi[4 * i + 1] = s.rotate_left(w);
        oi[4 * i + 2] = i32::rotate_right(s, 3);
        oi[4 * i + 3] = s.wrapping_mul(s).wrapping_add(i32::MAX);
        of[4 * i] = p.signum();
        of[4 * i + 1] = if p > 100.0 { f32::NAN } else { p };
        let v = gpu::float3(p, y[i], 0.5).normalize();
        let c = gpu::float3(p, y[i], 2.0).cross(gpu::float3(y[i], 0.25, p));
        of[4 * i + 2] = v.x + v.y * v.z;
        of[4 * i + 3] = c.x - c.y + c.z;
    }
}
"""

INT_EDGES = [0, 1, -1, 2, 31, 32, 33, -31, -32, 63, 64, 255, 1 << 16, -(2 ** 31), 2 ** 31 - 1, -(1 << 30)]
F32_EDGES = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, -math.nan, 1e-45, -1e-45, 3.4028235e38, 1e3, -1e3]


def wrap(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - 2 ** 32 if v >= 2 ** 31 else v


def rotl(a: int, s: int) -> int:
    a &= 0xFFFFFFFF
    s %= 32
    return ((a << s) | (a >> (32 - s))) & 0xFFFFFFFF


def tz(a: int) -> int:
    a &= 0xFFFFFFFF
    return 32 if a == 0 else (a & -a).bit_length() - 1


def f32(x: float) -> float:
    """x rounded to f32 (once: every operand here is an f32, so the f64 step is exact or
    rounds only once); beyond the range, infinity."""
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.float32(x))


def rust_scalar_ops(a, u, x, y):
    """Rust's definitions (core's integer and f32 methods, glam's normalize and cross)."""
    n = len(a)
    ou, oi, of = [], [], []
    for i in range(n):
        s, w, p, q = int(a[i]), int(u[i]), float(x[i]), float(y[i])
        nxt = int(u[(i + 1) % n])
        pop = lambda v: bin(v & 0xFFFFFFFF).count("1")  # noqa: E731
        lz = lambda v: 32 - (v & 0xFFFFFFFF).bit_length()  # noqa: E731
        ou += [pop(w), lz(w), tz(w), rotl(w, s & 0xFFFFFFFF), rotl(w, 32 - (s & 0xFFFFFFFF) % 32),
               (((w + nxt) * w) - 7) & 0xFFFFFFFF, pop(s) | (lz(s) << 8) | (tz(s) << 16),
               int(math.isnan(p)) | (int(math.isfinite(p)) << 1) | (int(math.isinf(p)) << 2)]
        oi += [(s > 0) - (s < 0), wrap(rotl(s, w)), wrap(rotl(s, 29)), wrap(s * s + 2 ** 31 - 1)]
        sig = math.nan if math.isnan(p) else math.copysign(1.0, p)
        # normalize: v / sqrt(dot(v, v)), each step rounded to f32
        ln = f32(math.sqrt(f32(f32(f32(p * p) + f32(q * q)) + 0.25)))
        vx, vy, vz = (f32(c / ln) for c in (p, q, 0.5))
        a3, b3 = (p, q, 2.0), (q, 0.25, p)

        def term(i1, j1):
            return f32(f32(a3[i1] * b3[j1]) - f32(a3[j1] * b3[i1]))
        cx, cy, cz = term(1, 2), term(2, 0), term(0, 1)
        of += [sig, math.nan if p > 100.0 else p, f32(vx + f32(vy * vz)), f32(f32(cx - cy) + cz)]
    return (np.array(oi, np.int64).astype(np.int32), np.array(ou, np.uint64).astype(np.uint32),
            np.array(of, np.float64).astype(np.float32))


def scalar_inputs(rng, n: int):
    a = np.concatenate([np.array(INT_EDGES, np.int64), rng.integers(-2 ** 31, 2 ** 31, n)]).astype(np.int32)
    m = a.size
    u = rng.integers(0, 2 ** 32, m, dtype=np.uint64).astype(np.uint32)
    u[:4] = [0, 1, 0x80000000, 0xFFFFFFFF]
    x = np.concatenate([np.array(F32_EDGES, np.float32), rng.standard_normal(m - len(F32_EDGES)).astype(np.float32)])
    x[len(F32_EDGES):len(F32_EDGES) + 20] *= np.float32(300.0)
    y = rng.standard_normal(m).astype(np.float32)
    return a, u, x, y


def scalar_args(a, u, x, y):
    m = a.size
    return [a, u, x, y, poison(4 * m, np.int32), poison(8 * m, np.uint32), poison(4 * m, np.float32)]


def test_oracle_follows_rust_for_bits_signs_and_vectors():
    s = seed()
    a, u, x, y = scalar_inputs(np.random.default_rng(s), 500)
    got = run_kernel("cpu", SCALARS, "scalar_ops", scalar_args(a, u, x, y), ("over_1d", a.size))
    want_i, want_u, want_f = rust_scalar_ops(a, u, x, y)
    check(f"cpu i32 (seed {s})", got[4], want_i, 4, a, u, x)
    check(f"cpu u32 (seed {s})", got[5], want_u, 8, a, u, x)
    check(f"cpu f32 (seed {s})", got[6], want_f, 4, a, u, x, y)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bits_signs_and_vectors_match_the_oracle(backend):
    s = seed()
    a, u, x, y = scalar_inputs(np.random.default_rng(s), 2000)
    args = scalar_args(a, u, x, y)
    want = run_kernel("cpu", SCALARS, "scalar_ops", args, ("over_1d", a.size))
    got = run_kernel(backend, SCALARS, "scalar_ops", args, ("over_1d", a.size))
    for j, width in ((4, 4), (5, 8), (6, 4)):
        check(f"{backend} output {j} (seed {s})", got[j], want[j], width, a, u, x, y)


def test_nan_constant_and_signum_of_zeros():
    src = """
#[goldy::compute]
fn k(out: &mut [f32]) {
    out[0] = f32::NAN;
    out[1] = 0.0f32.signum();
    out[2] = (-0.0f32).signum();
    out[3] = f32::NAN.signum();
}
"""
    for backend in ("cpu", "wgpu", "slang"):
        out = run_kernel(backend, src, "k", [poison(4, np.float32)], ("groups", (1, 1, 1)))[0]
        assert out.view(np.uint32)[0] == 0x7FC00000, backend  # Rust's f32::NAN
        assert out[1:3].tolist() == [1.0, -1.0] and np.isnan(out[3]), backend


# ---------------------------------------------------------------- atomics

ATOMICS = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn atomics(keys: &[u32], vals: &[i32], umin: &mut [u32], imax: &mut [i32], bits: &mut [u32], swap: &mut [u32],
           slots: &mut [u32], claimed: &mut [u32], imin: &mut [i32]) {
    let i = gpu::global_id().x;
    if i < keys.len() {
        let k = keys[i] % 8;
        gpu::atomic_min(umin, k, keys[i]);
        let before = gpu::atomic_max(imax, k, vals[i]);
        gpu::atomic_min(imin, k, vals[i]);
        gpu::atomic_and(bits, k, keys[i] | 0x0f0f0f0f);
        gpu::atomic_or(bits, k + 8, keys[i] & 0x00ff00ff);
        gpu::atomic_xor(bits, k + 16, keys[i]);
        gpu::atomic_sub(bits, k + 24, vals[i] as u32);
        let old = gpu::atomic_exchange(swap, i, keys[i]);
        swap[i + keys.len()] = old;
        // one thread per slot wins the compare-exchange from 0
        let got = gpu::atomic_compare_exchange(slots, k, 0, i + 1);
        if got == 0 {
            gpu::atomic_add(claimed, 0, 1);
        }
        if before > vals[i] {
            gpu::atomic_add(claimed, 1, 0);
        }
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn wg_histogram(keys: &[u32], hist: &mut [u32], first: &mut [u32], mixed: &mut [i32]) {
    let h = gpu::workgroup_array::<u32, 16>();
    let f = gpu::workgroup_array::<u32, 16>();
    let m = gpu::workgroup_array::<i32, 4>();
    let l = gpu::local_id().x;
    if l < 16 {
        h[l] = 0;
        f[l] = u32::MAX;
    }
    if l < 4 {
        m[l] = 0;
    }
    gpu::workgroup_barrier();
    let i = gpu::global_id().x;
    if i < keys.len() {
        let k = keys[i] % 16;
        gpu::atomic_add(h, k, 1);
        gpu::atomic_min(f, k, i);
        gpu::atomic_max(m, 0, keys[i] as i32);
        gpu::atomic_xor(m, 1, keys[i] as i32);
        gpu::atomic_or(m, 2, 1 << (k % 31));
        gpu::atomic_compare_exchange(m, 3, 0, 1);
    }
    gpu::workgroup_barrier();
    if l < 16 {
        gpu::atomic_add(hist, l, h[l]);
        first[gpu::workgroup_id().x * 16 + l] = f[l];
    }
    if l < 4 {
        mixed[gpu::workgroup_id().x * 4 + l] = m[l];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn float_sum(xs: &[f32], acc: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < xs.len() {
        gpu::atomic_add(acc, i % 4, xs[i]);
    }
}
"""


def atomic_inputs(rng, n: int):
    keys = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    vals = rng.integers(-2 ** 31, 2 ** 31, n).astype(np.int32)
    return [keys, vals, np.full(8, 0xFFFFFFFF, np.uint32), np.full(8, -2 ** 31, np.int32),
            rng.integers(0, 2 ** 32, 32, dtype=np.uint64).astype(np.uint32),
            rng.integers(0, 2 ** 32, 2 * n, dtype=np.uint64).astype(np.uint32), np.zeros(8, np.uint32),
            np.zeros(2, np.uint32), np.full(8, 2 ** 31 - 1, np.int32)]


def rust_atomics(args):
    """The atomics one after another (any order gives these totals)."""
    keys, vals, umin, imax, bits, swap, slots, claimed, imin = [a.copy() for a in args]
    n = keys.size
    b = bits.astype(np.int64)
    for i in range(n):
        k = int(keys[i]) % 8
        umin[k] = min(umin[k], keys[i])
        imax[k] = max(imax[k], vals[i])
        imin[k] = min(imin[k], vals[i])
        b[k] &= int(keys[i]) | 0x0F0F0F0F
        b[k + 8] |= int(keys[i]) & 0x00FF00FF
        b[k + 16] ^= int(keys[i])
        b[k + 24] = (b[k + 24] - (int(vals[i]) & 0xFFFFFFFF)) & 0xFFFFFFFF
    swap[n:] = args[5][:n]
    swap[:n] = keys
    used = sorted({int(k) % 8 for k in keys})
    claimed[0] = len(used)
    return umin, imax, b.astype(np.uint32), swap, claimed, imin, used


def test_oracle_atomics_follow_rust():
    s = seed()
    args = atomic_inputs(np.random.default_rng(s), 1000)
    got = run_kernel("cpu", ATOMICS, "atomics", args, ("over_1d", 1000))
    umin, imax, bits, swap, claimed, imin, used = rust_atomics(args)
    for j, want in ((2, umin), (3, imax), (4, bits), (5, swap), (8, imin)):
        assert_same(got[j], want, what=f"cpu atomics output {j} (seed {s})")
    assert got[7][0] == claimed[0]
    # the oracle applies lanes in thread order: slot k goes to the first thread with that key
    keys = args[0]
    for k in used:
        assert got[6][k] == int(np.flatnonzero(keys % 8 == k)[0]) + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_atomics_match_the_oracle(backend):
    s = seed()
    n = 3000
    args = atomic_inputs(np.random.default_rng(s), n)
    want = run_kernel("cpu", ATOMICS, "atomics", args, ("over_1d", n))
    got = run_kernel(backend, ATOMICS, "atomics", args, ("over_1d", n))
    for j in (2, 3, 4, 5, 7, 8):  # totals and per-thread exchanges: the same in any order
        assert_same(got[j], want[j], what=f"{backend} atomics output {j} (seed {s})")
    keys = args[0]
    for k, g in enumerate(got[6]):  # which thread wins a slot depends on the order; one with that key does
        assert (g == 0) == (want[6][k] == 0) and (g == 0 or keys[g - 1] % 8 == k), (backend, k, g)


@pytest.mark.parametrize("backend", BACKENDS)
def test_workgroup_array_atomics_match_the_oracle(backend):
    s = seed()
    n = 5000
    keys = np.random.default_rng(s).integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    groups = (n + 63) // 64
    args = [keys, np.zeros(16, np.uint32), poison(16 * groups, np.uint32), poison(4 * groups, np.int32)]
    want = run_kernel("cpu", ATOMICS, "wg_histogram", args, ("over_1d", n))
    assert want[1].tolist() == np.bincount(keys % 16, minlength=16).tolist()
    first = want[2].reshape(groups, 16)
    for g in range(groups):
        ids = np.arange(64 * g, min(64 * g + 64, n))
        for k in range(16):
            hit = ids[keys[ids] % 16 == k]
            assert first[g, k] == (hit[0] if hit.size else 0xFFFFFFFF)
    got = run_kernel(backend, ATOMICS, "wg_histogram", args, ("over_1d", n))
    for j in (1, 2, 3):
        assert_same(got[j], want[j], what=f"{backend} wg_histogram output {j} (seed {s})")


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_float_atomic_add_where_the_target_has_it(backend):
    """Multiples of 1/4 below 2^20: every partial sum is exact, so any order gives the
    oracle's bits."""
    s = seed()
    xs = (np.random.default_rng(s).integers(-400, 400, 4096) * 0.25).astype(np.float32)
    got = run_kernel(backend, ATOMICS, "float_sum", [xs, np.zeros(4, np.float32)], ("over_1d", xs.size))[1]
    assert got.tolist() == [float(xs[j::4].astype(np.float64).sum()) for j in range(4)]


@pytest.mark.parametrize("backend", ["wgpu", "slang"])
def test_float_atomic_add_is_refused_where_the_target_lacks_it(backend):
    device(backend)  # skips where the backend is missing
    with pytest.raises(TargetUnsupported) as e:
        run_kernel(backend, ATOMICS, "float_sum", [np.ones(64, np.float32), np.zeros(4, np.float32)], ("over_1d", 64))
    target = {"wgpu": "wgsl", "slang": "slang"}[backend]
    assert str(e.value) == (
        f"kernel `float_sum` ({rust_loc(ATOMICS, 'gpu::atomic_add(acc', 'test_kernel.rs')}): `atomic_add` on the f32 buffer `acc` needs float atomics, "
        f"which the {backend} backend ({target}) does not have; run it on the cpu and cuda backends, or "
        "accumulate in `u32`/`i32` (fixed point)")


def test_ptx_assembles_the_new_operations(ptxas, tmp_path):
    from test_ptx import assemble
    from goldy_import.codegen.ptx import emit_ptx
    exe = ptxas
    for src, name in ((ATOMICS, "atomics"), (ATOMICS, "wg_histogram"), (ATOMICS, "float_sum"),
                      (SCALARS, "scalar_ops"), (BOOLS, "step")):
        text = emit_ptx(kernel_ir(src, name))
        assemble(exe, text, tmp_path)
        if name == "wg_histogram":
            assert "atom.shared.min.u32" in text and "atom.shared.cas.b32" in text


def test_atomic_ir_round_trips_and_old_files_load():
    k = kernel_ir(ATOMICS, "atomics")
    assert from_json(to_json(k)) == k
    cas = next(s for s in N.walk_stmts(k.body) if isinstance(s, N.Atomic) and s.op == "compare_exchange")
    assert cas.compare is not None
    text = to_json(kernel_ir(ATOMICS, "float_sum"))
    old = text.replace('"node": "Atomic"', '"node": "AtomicAdd"')  # IR written before the other ops
    assert from_json(old) == from_json(text)


def test_verifier_rejects_what_no_target_has():
    k = kernel_ir(ATOMICS, "float_sum")
    bad = from_json(to_json(k))
    atomic = next(s for s in N.walk_stmts(bad.body) if isinstance(s, N.Atomic))
    atomic.op = "min"  # f32 atomics are additions only
    with pytest.raises(VerifyError):
        verify(bad)


# ---------------------------------------------------------------- bool fields

BOOLS = """
use goldy::gpu;

#[goldy::gpu]
struct Particle {
    pos: [f32; 3],
    alive: bool,
    mass: f32,
    frozen: bool,
}

#[goldy::gpu]
struct Params {
    gravity: f32,
    enabled: bool,
    count: u32,
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn step(p: gpu::Uniform<Params>, ps: &[Particle], out: &mut [f32], flags: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < p.count {
        let mut q = ps[i];
        if q.alive && !q.frozen && p.enabled {
            out[i] = q.pos.y - p.gravity * q.mass;
        } else {
            out[i] = q.pos.y;
        }
        q.frozen = q.mass > 1.0;
        flags[i] = (q.alive as u32) | ((q.frozen as u32) << 1) | ((p.enabled as u32) << 2);
    }
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_bool_struct_fields(backend):
    s = seed()
    rng = np.random.default_rng(s)
    module = gi.load_source(BOOLS, "bools.rs")
    kdef = module.step.definition()
    n = 1000
    ps = np.zeros(n, struct_host_dtype(kdef.ir.struct("Particle")))
    assert ps.dtype["alive"] == np.dtype(bool)
    ps["pos"] = rng.standard_normal((n, 3))
    ps["mass"] = rng.uniform(0, 2, n)
    ps["alive"] = rng.integers(0, 2, n).astype(bool)
    ps["frozen"] = rng.integers(0, 2, n).astype(bool)
    for enabled in (True, False):
        results = []
        for b in ("cpu", backend):
            dev = device(b)
            out, flags = dev.buffer(poison(n, np.float32)), dev.buffer(poison(n, np.uint32))
            scheme = gi.Scheme(dev)
            kdef.prepare(dev).record(scheme, "step", {"gravity": 9.8, "enabled": enabled, "count": n},
                                     dev.buffer(ps), out, flags).over_1d(n)
            scheme.submit()
            results.append((out.numpy(), flags.numpy()))
        (want_out, want_flags), (got_out, got_flags) = results
        rust_flags = ps["alive"].astype(np.uint32) | ((ps["mass"] > 1).astype(np.uint32) << 1) | (int(enabled) << 2)
        assert want_flags.tolist() == rust_flags.tolist()
        moves = ps["alive"] & ~ps["frozen"] & enabled
        rust_out = np.where(moves, ps["pos"][:, 1] - np.float32(9.8) * ps["mass"], ps["pos"][:, 1]).astype(np.float32)
        assert_same(want_out, rust_out, what="cpu")
        assert_same(got_out, want_out, what=f"{backend} out (seed {s})")
        assert_same(got_flags, want_flags, what=f"{backend} flags (seed {s})")


# ---------------------------------------------------------------- help lines


def help_of(body: str, params: str = "xs: &mut [f32], us: &mut [u32]") -> list[str]:
    result = import_source(f"use goldy::gpu;\n#[goldy::compute]\nfn k({params}) {{\n{body}\n}}\n", "t.rs")
    assert result.kernels == [] and len(result.errors) == 1, result.render()
    return result.errors[0].help


@pytest.mark.parametrize("body,help", [
    ("xs[0] = xs[1].atan();", "the dialect has no `atan`: write `y.atan2(1.0)` for atan(y)"),
    ("xs[0] = xs[1].recip();", "the dialect has no `recip`: write `1.0 / x`"),
    ("xs[0] = xs[1].tahn();", "a method with a similar name exists: `tanh`"),
    ("xs[0] = xs[1].sqr();", "a method with a similar name exists: `sqrt`"),
    ("us[0] = us[1].count_zeros();", "the dialect has no `count_zeros`: write `32 - x.count_ones()`"),
    ("us[0] = us[1].saturating_add(1);",
     "the dialect has no `saturating_add`: integer arithmetic wraps (`wrapping_add`); saturate with `min`/`max`"),
    ("xs[0] = gpu::sinh(xs[1]);", "the dialect has no `sinh`: write `(x.exp() - (-x).exp()) * 0.5` for sinh(x)"),
    ("xs[0] = gpu::atan_2(xs[1], 1.0);", "a builtin with a similar name exists: `gpu::atan2`"),
    ("xs[0] = f32::lerp(xs[1], 1.0, 0.5);", "the dialect has no `lerp`: write `a + (b - a) * t`"),
])
def test_unknown_operations_name_the_closest_real_one(body, help):
    assert help_of(body) == [help]


def test_no_suggestion_from_names_that_merely_share_letters():
    # before issue 19 `atan2` suggested `tan` and `signum` `sin`; a name this far from any
    # operation gets no suggestion at all
    assert help_of("xs[0] = xs[1].sgn();") == []
    assert help_of("xs[0] = xs[1].sinus();") == []


def test_new_operations_are_typed_as_rust_types_them():
    errs = import_source("#[goldy::compute]\nfn k(xs: &mut [f32], is: &mut [i32], us: &mut [u32]) {\n"
                         "    is[0] = is[1].rotate_left(is[2]);\n"          # the amount is u32
                         "    xs[0] = xs[1].wrapping_add(1.0);\n"           # integers only
                         "    us[0] = us[1].signum();\n"                    # u32 has no signum
                         "    let v = gpu::float2(1.0, 2.0).cross(gpu::float2(1.0, 2.0));\n"
                         "}\n", "t.rs").errors
    assert [(d.code, d.message) for d in errs] == [
        ("G0019", "mismatched types"),
        ("G0018", "no method `wrapping_add` on `f32`"),
        ("G0018", "no method `signum` on `u32`"),
        ("G0019", "`cross` needs `float3` vectors"),
    ]


OUT_OF_RANGE = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn oob(idx: &[u32], out: &mut [u32]) {
    let s = gpu::workgroup_array::<u32, 8>();
    let i = gpu::global_id().x;
    if gpu::local_id().x < 8 { s[gpu::local_id().x] = 0; }
    gpu::workgroup_barrier();
    let old = gpu::atomic_max(s, idx[i], 5);
    gpu::atomic_min(out, idx[i], old);
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_workgroup_array_atomic_out_of_range_is_a_fault(backend):
    idx = np.array([1] * 63 + [9], np.uint32)
    with pytest.raises(gi.KernelFault) as e:
        run_kernel(backend, OUT_OF_RANGE, "oob", [idx, np.zeros(8, np.uint32)], ("over_1d", 64))
    where = rust_loc(OUT_OF_RANGE, "gpu::atomic_max(s", "test_kernel.rs")
    assert (f"index out of bounds at {where}: workgroup array `s` indexed at 9, but its length is 8"
            in str(e.value).splitlines()[0])
