"""Differential fuzzing: random well-typed kernels (tests/kernel_gen.py) run on every
backend with random inputs and poisoned outputs, compared with the CPU oracle.

- every generated kernel imports with no diagnostic at all (the generator writes only
  valid programs);
- wgpu, slang (and cuda where a GPU is present) agree with the CPU oracle: integers and
  bools equal, the exact f32 outputs bit for bit (docs/semantics.md makes every operation
  they use exact), the transcendental slots within the semantics' tolerance (per slot,
  from the number of transcendental calls in it, see kernel_gen.Approx);
- the emitted PTX assembles with ptxas.

Budgets are small and fixed (CI has 2 cores); GOLDY_FUZZ_EXAMPLES multiplies them for a
longer local run. Runs are random by default; each test prints its seed on failure, and
GOLDY_FUZZ_SEED=<seed> replays it. Every shrunk failure found is kept as a regular test
in tests/test_fuzz_regressions.py.
"""

from __future__ import annotations

import os
import random
import subprocess

import pytest
from hypothesis import HealthCheck, given, note, seed, settings
from hypothesis import strategies as st

from goldy_import.codegen.ptx import emit_ptx
from goldy_import.importer import import_source

import kernel_gen as G
from oracle import assert_same, backend_or_skip, run_kernel

SEED = int(os.environ.get("GOLDY_FUZZ_SEED") or random.randrange(2**32))
SCALE = float(os.environ.get("GOLDY_FUZZ_EXAMPLES", "1"))
SIZES = (1, 37, 70)  # threads: one, one partial workgroup, two workgroups (the last partial)


def budget(n: int) -> settings:
    return settings(max_examples=max(1, int(n * SCALE)), deadline=None, derandomize=False, database=None,
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


def compare(backend: str, gk: G.GenKernel, n: int, data_seed: int) -> None:
    """Run on the CPU oracle and on `backend` with the same inputs; check every output."""
    args = G.inputs(n, data_seed)
    want = run_kernel("cpu", gk.source, G.NAME, args, ("over_1d", n))
    got = run_kernel(backend, gk.source, G.NAME, args, ("over_1d", n))
    names = ["xu", "xi", "xf", "xb", "ou", "oi", "of", "ob", "oa"]
    where = f"{backend} vs cpu, n={n}, data seed {data_seed}; {reproduce()}"
    for name, g, w in zip(names, got, want):
        assert g is not None and w is not None
        if name != "oa":
            assert_same(g, w, what=f"{name} ({where})")
            continue
        slots_g, slots_w = g.reshape(n, G.APPROX_SLOTS), w.reshape(n, G.APPROX_SLOTS)
        for t in range(G.APPROX_SLOTS):
            a = gk.approx[t] if t < len(gk.approx) else None
            if a is None:  # unwritten: still poisoned on both
                assert_same(slots_g[:, t], slots_w[:, t], what=f"oa slot {t} ({where})")
            else:
                assert_same(slots_g[:, t], slots_w[:, t], rtol=a.rtol, atol=a.atol,
                            what=f"oa slot {t} = {a.text} ({where})")


fuzz_cases = st.tuples(G.kernels(), st.sampled_from(SIZES), st.integers(0, 2**32 - 1))


# ---------------------------------------------------------------- the generator itself


@seed(SEED)
@budget(40)
@given(G.kernels(max_depth=4, max_stmts=14))
def test_generated_kernels_import_without_diagnostics(gk):
    k = import_clean(gk)
    assert k.name == G.NAME and len(gk.approx) <= G.APPROX_SLOTS


def test_generator_covers_the_dialect():
    """Over a fixed sample, every operator, cast, statement form and intrinsic appears."""
    rng = random.Random(1234)
    sample = [G.sample(rng) for _ in range(150)]
    sources = [gk.source for gk in sample]
    intrinsics = set().union(*(gk.intrinsics for gk in sample))
    text = "\n".join(sources)
    for token in [" + ", " - ", " * ", " / ", " % ", " & ", " | ", " ^ ", " << ", " >> ", " < ", " <= ", " > ",
                  " >= ", " == ", " != ", " && ", " || ", "(!", "(-", " as u32)", " as i32)", " as f32)",
                  "if ", "} else {", "for ", "..=", "while ", "break;", "continue;", "return;", "let mut ",
                  ".len()", "i32::MIN", "% xu.len()]", "if ix", "f32::from_bits("]:
        assert token in text, token
    compound = [op for op in ("+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>=") if f" {op} " in text]
    assert len(compound) >= 7, compound
    assert G.EXACT_INTRINSICS | G.TRANSCENDENTAL <= intrinsics, (G.EXACT_INTRINSICS | G.TRANSCENDENTAL) - intrinsics


# ---------------------------------------------------------------- backends


@pytest.mark.parametrize("backend", ["wgpu", "slang"])
def test_backends_agree_with_the_cpu_oracle(backend):
    backend_or_skip(backend)

    @seed(SEED)
    @budget(12 if backend == "wgpu" else 4)
    @given(fuzz_cases)
    def run(case):
        gk, n, data_seed = case
        import_clean(gk)
        compare(backend, gk, n, data_seed)

    run()


from test_ptx import ptxas  # noqa: E402,F401  (the fixture: required in CI, else skipped)


def test_ptx_assembles(ptxas, tmp_path):
    @seed(SEED)
    @budget(25)
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
    @given(fuzz_cases)
    def run(case):
        gk, n, data_seed = case
        import_clean(gk)
        compare("cuda", gk, n, data_seed)

    run()

