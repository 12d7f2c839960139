"""Differential fuzzing: random well-typed kernels (tests/kernel_gen.py) run on every
backend with random inputs and poisoned outputs, compared with the CPU oracle.

- every generated kernel imports with no diagnostic at all (the generator writes only
  valid, race-free programs: collectives, workgroup arrays and barriers in uniform control
  flow, threads writing only their own elements);
- wgpu, slang (and cuda where a GPU is present) agree with the CPU oracle bit for bit on
  every buffer, transcendentals, collectives and softmax included (docs/semantics.md makes
  every operation exact or one shared math library); NaN compares as NaN, -0.0 as itself;
- the emitted PTX assembles with ptxas.

Budgets are small and fixed (CI has 2 cores, these files stay under a minute);
GOLDY_FUZZ_EXAMPLES=N runs N examples in each test instead, for a long run. Runs are random
by default; a failure prints its seed and the shrunk kernel, and GOLDY_FUZZ_SEED=<seed>
replays it. Cases found are kept in tests/data/fuzz_corpus/ (tests/test_fuzz_regressions.py).
"""

from __future__ import annotations

import os
import random
import re
import subprocess
from contextlib import contextmanager

import numpy as np

import pytest
from hypothesis import HealthCheck, given, note, seed, settings
from hypothesis import strategies as st

from goldy_import.codegen.ptx import emit_ptx
from goldy_import.importer import import_source

import kernel_gen as G
from oracle import assert_same, backend_or_skip, run_kernel, same_bits

SEED = int(os.environ.get("GOLDY_FUZZ_SEED") or random.randrange(2**32))
EXAMPLES = int(os.environ.get("GOLDY_FUZZ_EXAMPLES") or 0)  # 0: the CI budget of each test
SIZES = (1, 37, 70)  # threads: one, one partial workgroup, two workgroups (the last partial)


def budget(n: int) -> settings:
    return settings(max_examples=EXAMPLES or n, deadline=None, derandomize=False, database=None,
                    print_blob=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def reproduce(extra: str = "") -> str:
    return f"reproduce with GOLDY_FUZZ_SEED={SEED} pytest {os.path.relpath(__file__)}{extra}"


def import_clean(gk: G.GenKernel):
    note(reproduce())
    note(gk.source)
    r = import_source(gk.source, "fuzz.rs")
    assert r.diagnostics == [], f"the generator wrote an invalid kernel:\n{r.render()}\n{gk.source}"
    (k,) = r.kernels
    return k


@contextmanager
def trapping_checks(on: bool):
    """Kernels drawn `unchecked` divide by zero: they run with trapping checks off
    (GOLDY_BOUNDS_CHECKS=0 when they are prepared), as division by zero then gives 0."""
    old = os.environ.get("GOLDY_BOUNDS_CHECKS")
    if not on:
        os.environ["GOLDY_BOUNDS_CHECKS"] = "0"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("GOLDY_BOUNDS_CHECKS", None)
        else:
            os.environ["GOLDY_BOUNDS_CHECKS"] = old


def assert_bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Equal bits (floats: -0.0 is not 0.0; NaN equals NaN, whatever its payload)."""
    if want.dtype.kind != "f":
        return assert_same(got, want, what=what)
    same = same_bits(got, want)
    if not same.all():
        bad = np.flatnonzero(~same)
        j = bad[0]
        raise AssertionError(f"{what}: {len(bad)} of {got.size} elements differ; first at {j}: "
                             f"got {got[j]!r} ({got.view(np.uint32)[j]:#010x}), "
                             f"want {want[j]!r} ({want.view(np.uint32)[j]:#010x})")


def compare(backend: str, gk: G.GenKernel, n: int, data_seed: int) -> None:
    """Run on the CPU oracle and on `backend` with the same inputs; every buffer must have
    the same bits."""
    args = gk.inputs(n, data_seed)
    with trapping_checks(not gk.unchecked):
        want = run_kernel("cpu", gk.source, G.NAME, args, ("over_1d", n))
        got = run_kernel(backend, gk.source, G.NAME, args, ("over_1d", n))
    where = (f"{backend} vs cpu, n={n}, data seed {data_seed}{', checks off' if gk.unchecked else ''}; "
             f"{reproduce()}")
    for name, g, w in zip(G.PARAMS, got, want):
        if w is not None:
            assert g is not None
            assert_bits(g, w, f"{name} ({where})")


def fuzz_cases(backend: str):
    return st.tuples(G.kernels(avoid=G.avoided(backend)), st.sampled_from(SIZES), st.integers(0, 2**32 - 1))


# ---------------------------------------------------------------- the generator itself


@seed(SEED)
@budget(30)
@given(G.kernels(max_depth=4, max_stmts=14))
def test_generated_kernels_import_without_diagnostics(gk):
    k = import_clean(gk)
    assert k.name == G.NAME and k.workgroup_size[0] == gk.wg


def test_generator_covers_the_dialect():
    """Over a fixed sample, every operator, cast, statement form, intrinsic, workgroup
    operation and edge value appears."""
    rng = random.Random(1234)
    sample = [G.sample(rng) for _ in range(150)]
    sources = [gk.source for gk in sample]
    intrinsics = set().union(*(gk.intrinsics for gk in sample))
    text = "\n".join(sources)
    for token in [" + ", " - ", " * ", " / ", " % ", " & ", " | ", " ^ ", " << ", " >> ", " < ", " <= ", " > ",
                  " >= ", " == ", " != ", " && ", " || ", "(!", "(-", " as u32)", " as i32)", " as f32)",
                  "if ", "} else {", "for ", "..=", "while ", "break;", "continue;", "return;", "let mut ",
                  ".len()", "i32::MIN", "% xu.len()]", "if ix", "f32::from_bits(", ".to_bits()",
                  "f32::INFINITY", "f32::NEG_INFINITY", "f32::from_bits(0x7fc00000u32)", "(-0.0f32)", "e-45f32",
                  "e-40f32", " / (-1i32)", " % (-4i32)", " << 32u32", " >> (-1i32)", "} else { d",
                  "ou[i]", "of[i]", "ob[i]", "gpu::workgroup_barrier();", "sf[lid] = ", "si[lid] = ",
                  "su[lid] = ", "(lid ^ 1u32)]", "sm[row + "]:
        assert token in text, token
    compound = [op for op in ("+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=") if f" {op} " in text]
    assert len(compound) >= 7, compound
    assert G.EXACT_INTRINSICS | G.TRANSCENDENTAL <= intrinsics, (G.EXACT_INTRINSICS | G.TRANSCENDENTAL) - intrinsics
    assert set().union(*(gk.collectives for gk in sample)) == G.COLLECTIVES
    for ty in ("u32", "i32", "f32"):
        for op in ("sum", "max"):
            assert any(f"workgroup_{op}" in line and f"s{ty[0]})" in line for line in text.splitlines()), (op, ty)
    counts = [int(m) for m in re.findall(r"workgroup_softmax_in_place(?:::<\d+>)?\(sm, row[^,]*, (\d+)u32", text)]
    widths = {gk.wg for gk in sample}
    assert widths == set(G.WORKGROUP_SIZES)
    assert any(c < 8 for c in counts) and 8 in counts and any(c > 64 for c in counts), counts
    assert "if (" in text and any(gk.unchecked for gk in sample) and not all(gk.unchecked for gk in sample)


# ---------------------------------------------------------------- backends


@pytest.mark.parametrize("backend", ["wgpu", "slang"])
def test_backends_agree_with_the_cpu_oracle(backend):
    backend_or_skip(backend)

    @seed(SEED)
    @budget(10 if backend == "wgpu" else 4)
    @given(fuzz_cases(backend))
    def run(case):
        gk, n, data_seed = case
        import_clean(gk)
        compare(backend, gk, n, data_seed)

    run()


from test_ptx import ptxas  # noqa: E402,F401  (the fixture: required in CI, else skipped)


def test_ptx_assembles(ptxas, tmp_path):
    @seed(SEED)
    @budget(20)
    @given(G.kernels())
    def run(gk):
        k = import_clean(gk)
        text = emit_ptx(k)
        src = tmp_path / "k.ptx"
        src.write_text(text)
        res = subprocess.run([ptxas, "-arch=sm_90", "--warning-as-error", str(src), "-o", str(tmp_path / "k.cubin")],
                             capture_output=True, text=True)
        assert res.returncode == 0, f"ptxas failed ({reproduce()}):\n{res.stdout}{res.stderr}\n--- PTX ---\n{text}"

    run()


@pytest.mark.cuda
def test_cuda_agrees_with_the_cpu_oracle():
    backend_or_skip("cuda")

    @seed(SEED)
    @budget(40)
    @given(fuzz_cases("cuda"))
    def run(case):
        gk, n, data_seed = case
        import_clean(gk)
        compare("cuda", gk, n, data_seed)

    run()

