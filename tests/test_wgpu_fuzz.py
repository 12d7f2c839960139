"""Random kernels: expressions mixing every operator, cast, intrinsic and `if` value of the
dialect's scalar types, generated as Rust source, imported, emitted as WGSL and run on
wgpu and on the CPU oracle with the same random inputs. Everything here is exact (no
transcendentals), so results must agree bit for bit. The seed is fresh each run and is
printed in any failure, with the kernel's source; GOLDY_FUZZ_SEED=<seed> replays it."""

import os

import numpy as np
import pytest

from goldy_import.importer import import_source
from test_wgpu_kernels import _flat, _inputs, _run, wgpu_backend  # noqa: F401 (fixture)

from goldy_import.runtime import cpu

KERNELS_PER_TEST = 6
DEPTH = 4

HEADER = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn fuzz(a: &[f32], b: &[f32], u: &[u32], v: &[i32], out_f: &mut [f32], out_u: &mut [u32],
        out_i: &mut [i32], out_b: &mut [bool], s: u32, t: i32, c: f32, flag: bool) {
    let i = gpu::global_id().x;
    if i >= out_f.len() {
        return;
    }
    let x = a[i];
    let y = b[i];
    let p = u[i];
    let q = v[i];
"""


class Gen:
    def __init__(self, rng):
        self.rng = rng

    def pick(self, xs):
        return xs[int(self.rng.integers(0, len(xs)))]

    def expr(self, ty: str, depth: int) -> str:
        if depth <= 0 or self.rng.random() < 0.2:
            return self.leaf(ty)
        return getattr(self, "e_" + ty)(depth - 1)

    def leaf(self, ty: str) -> str:
        return self.pick({
            "f32": ["x", "y", "c", "1.5f32", "(-0.25f32)", "3.0f32", "0.001f32", "0.0f32", "(-7.5f32)"],
            "u32": ["p", "s", "i", "7u32", "0u32", "1u32", "0xffffffffu32", "31u32", "32u32"],
            "i32": ["q", "t", "(-5i32)", "0i32", "3i32", "i32::MIN", "i32::MAX", "(-1i32)"],
            "bool": ["flag", "(x < y)", "(p == s)", "(q >= t)"],
        }[ty])

    def select(self, ty: str, d: int) -> str:
        return f"(if {self.expr('bool', d)} {{ {self.expr(ty, d)} }} else {{ {self.expr(ty, d)} }})"

    def e_f32(self, d: int) -> str:
        e = lambda: self.expr("f32", d)  # noqa: E731
        k = self.pick(["bin", "bin", "bin", "neg", "method", "cast", "select", "fma", "min", "bits"])
        if k == "bin":
            return f"({e()} {self.pick(['+', '-', '*', '/', '%'])} {e()})"
        if k == "neg":
            return f"(-{e()})"
        if k == "method":
            return f"{e()}.{self.pick(['abs', 'floor', 'ceil', 'trunc', 'round', 'sqrt'])}()"
        if k == "cast":
            return f"({self.expr(self.pick(['u32', 'i32']), d)} as f32)"
        if k == "select":
            return self.select("f32", d)
        if k == "fma":
            return f"{e()}.mul_add({e()}, {e()})"
        if k == "min":
            return self.pick([f"{e()}.min({e()})", f"{e()}.max({e()})", f"clamp({e()}, -1.0, 2.0)"])
        return f"f32::from_bits({self.expr('u32', d)} & 0x7f7fffff)"

    def e_u32(self, d: int) -> str:
        e = lambda: self.expr("u32", d)  # noqa: E731
        k = self.pick(["bin", "bin", "bin", "shift", "not", "cast", "select", "min", "bits"])
        if k == "bin":
            return f"({e()} {self.pick(['+', '-', '*', '/', '%', '&', '|', '^'])} {e()})"
        if k == "shift":
            return f"({e()} {self.pick(['<<', '>>'])} {self.expr(self.pick(['u32', 'i32']), d)})"
        if k == "not":
            return f"(!{e()})"
        if k == "cast":
            src = self.pick(["f32", "i32", "bool"])
            return f"({self.expr(src, d)} as u32)"
        if k == "select":
            return self.select("u32", d)
        if k == "min":
            return self.pick([f"{e()}.min({e()})", f"{e()}.max({e()})", f"clamp({e()}, 3, 100)"])
        v = self.expr("f32", d - 1)  # NaN bit patterns are unspecified in Rust: compare NaN as one value
        return f"(if {v} != {v} {{ 0x7fc00000u32 }} else {{ {v}.to_bits() }})"

    def e_i32(self, d: int) -> str:
        e = lambda: self.expr("i32", d)  # noqa: E731
        k = self.pick(["bin", "bin", "bin", "shift", "neg", "cast", "select", "abs", "min"])
        if k == "bin":
            return f"({e()} {self.pick(['+', '-', '*', '/', '%', '&', '|', '^'])} {e()})"
        if k == "shift":
            return f"({e()} {self.pick(['<<', '>>'])} {self.expr(self.pick(['u32', 'i32']), d)})"
        if k == "neg":
            return self.pick([f"(-{e()})", f"(!{e()})"])
        if k == "cast":
            return f"({self.expr(self.pick(['f32', 'u32', 'bool']), d)} as i32)"
        if k == "select":
            return self.select("i32", d)
        if k == "abs":
            return f"{e()}.abs()"
        return self.pick([f"{e()}.min({e()})", f"{e()}.max({e()})"])

    def e_bool(self, d: int) -> str:
        k = self.pick(["cmp", "cmp", "logic", "not", "eq"])
        if k == "cmp":
            ty = self.pick(["f32", "u32", "i32"])
            return f"({self.expr(ty, d)} {self.pick(['<', '<=', '>', '>=', '==', '!='])} {self.expr(ty, d)})"
        if k == "logic":
            return f"({self.expr('bool', d)} {self.pick(['&&', '||', '&', '|', '^'])} {self.expr('bool', d)})"
        if k == "not":
            return f"(!{self.expr('bool', d)})"
        return f"({self.expr('bool', d)} == {self.expr('bool', d)})"

    def kernel(self) -> str:
        lines = [HEADER]
        lines.append(f"    let f1 = {self.expr('f32', DEPTH)};")
        lines.append(f"    let u1 = {self.expr('u32', DEPTH)};")
        lines.append(f"    let i1 = {self.expr('i32', DEPTH)};")
        lines.append(f"    out_f[i] = f1 + {self.expr('f32', DEPTH - 1)};")
        lines.append(f"    out_u[i] = u1 ^ {self.expr('u32', DEPTH - 1)};")
        lines.append(f"    out_i[i] = i1 - {self.expr('i32', DEPTH - 1)};")
        lines.append(f"    out_b[i] = {self.expr('bool', DEPTH)};")
        lines.append("}")
        return "\n".join(lines)


@pytest.mark.parametrize("batch", range(3))
def test_random_kernels_match_the_cpu_oracle(wgpu_backend, batch):  # noqa: F811
    seed = int(os.environ.get("GOLDY_FUZZ_SEED") or np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    gen = Gen(rng)
    ran = 0
    while ran < KERNELS_PER_TEST:
        src = gen.kernel()
        result = import_source(src, "fuzz.rs")
        if not result.ok:  # the generator may write something the dialect rejects (it says why)
            assert all(d.code != "G0028" for d in result.errors), result.render()
            continue
        k = result.kernels[0]
        n = 700
        inputs = _inputs(k, rng, n)
        groups = (-(-n // 64), 1, 1)
        want = _run(cpu.BACKEND(), k, inputs, groups)
        got = _run(wgpu_backend, k, inputs, groups)
        for (p, _, _, _), g, w in zip(inputs, got, want):
            if g is None or p.category == "read":
                continue
            g, w = _flat(g), _flat(w)
            same = (g == w) | (np.isnan(g) & np.isnan(w)) if g.dtype.kind == "f" else g == w
            bad = np.flatnonzero(~same)
            assert not len(bad), (f"seed {seed}: `{p.name}` differs at {len(bad)} elements; first {bad[0]}: "
                                  f"wgpu {g[bad[0]]!r}, cpu {w[bad[0]]!r}\n{src}")
        ran += 1
