"""PTX emitter: every good example assembles with ptxas (warnings are errors, no spills),
and the emitted text has the properties docs/semantics.md requires."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig

import pytest

from goldy_import.codegen.ptx import emit_ptx, ptx_version_for
from goldy_import.errors import BackendError
from goldy_import.importer import import_file, import_source

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = sorted(glob.glob(os.path.join(ROOT, "rust_examples", "*.rs")) +
                 glob.glob(os.path.join(ROOT, "tests", "data", "*.rs")))


def find_cuda_tool(name: str) -> str | None:
    """A CUDA binary tool (ptxas, cuobjdump) from PATH, else from the NVIDIA wheels in this
    environment (nvidia-cuda-nvcc, nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm: the test extra)."""
    exe = shutil.which(name)
    if exe:
        return exe
    site = sysconfig.get_paths()["purelib"]
    for cand in glob.glob(os.path.join(site, "nvidia", "*", "bin", name)):
        if os.access(cand, os.X_OK):
            return cand
    return None


def _cuda_tool_or_skip(name: str, wheel: str) -> str:
    exe = find_cuda_tool(name)
    if exe is None:
        from oracle import required_backends
        if os.environ.get("CI") or "ptxas" in required_backends():
            pytest.fail(f"{name} not found: install the test extra (pip install {wheel})")
        pytest.skip(f"{name} not found (pip install {wheel})")
    return exe


@pytest.fixture(scope="session")
def ptxas():
    return _cuda_tool_or_skip("ptxas", "nvidia-cuda-nvcc")


@pytest.fixture(scope="session")
def cuobjdump():
    """Required wherever ptxas is (`GOLDY_REQUIRE_BACKENDS` names them together); `-sass`
    runs the nvdisasm installed beside it."""
    return _cuda_tool_or_skip("cuobjdump", "nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm")


def good_kernels():
    out = []
    for path in SOURCES:
        r = import_file(path)
        if not r.ok:
            continue  # the bad_* files exist for diagnostics tests
        for k in r.kernels:
            out.append(pytest.param(k, id=f"{os.path.basename(path)}::{k.name}"))
    return out


def assemble(ptxas: str, text: str, tmp_path, target: str = "sm_90") -> str:
    src = tmp_path / "k.ptx"
    src.write_text(text)
    res = subprocess.run([ptxas, f"-arch={target}", "--warning-as-error", "-v", str(src),
                          "-o", str(tmp_path / "k.cubin")], capture_output=True, text=True)
    log = res.stdout + res.stderr
    assert res.returncode == 0, f"ptxas failed:\n{log}\n--- PTX ---\n{text}"
    return log


@pytest.mark.parametrize("kernel", good_kernels())
def test_assembles_without_spills(kernel, ptxas, tmp_path):
    log = assemble(ptxas, emit_ptx(kernel), tmp_path)
    spills = re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)
    assert spills, log
    assert all(s == ("0", "0") for s in spills), log


def test_good_examples_exist():
    assert len(good_kernels()) >= 10


def k(src: str, name: str | None = None):
    r = import_source(src, "t.rs")
    assert r.ok, r.render()
    return r.kernels[0] if name is None else r.kernel(name)


SAXPY = open(os.path.join(ROOT, "rust_examples", "saxpy.rs")).read()


def test_abi_and_rounding():
    text = emit_ptx(k(SAXPY), source=SAXPY)
    assert ".target sm_90" in text and f".version {ptx_version_for('sm_90')}" in text
    params = re.findall(r"\.param (\.\S+) (p\d+_\w+)", text)
    assert params == [(".u64", "p0_x_ptr"), (".u32", "p0_x_len"), (".u64", "p1_y_ptr"),
                      (".u32", "p1_y_len"), (".f32", "p2_a")]
    assert "mul.rn.f32" in text and "add.rn.f32" in text and "fma" not in text
    assert "ld.global.nc.f32" in text            # x is only read
    assert re.search(r"ld\.global\.f32 .*\n(.*\n)*.*st\.global\.f32", text)  # y is read and written
    assert "t.rs:7" in text and "y[i] = a * x[i] + y[i];" in text


def test_targets_and_versions(ptxas, tmp_path):
    kern = k(SAXPY)
    for target in ("sm_75", "sm_80", "sm_90"):  # CUDA 13 ptxas dropped sm_70
        assemble(ptxas, emit_ptx(kern, target=target), tmp_path, target)
    assert ".version 8.0" in emit_ptx(kern, ptx_version="8.0")
    with pytest.raises(BackendError):
        emit_ptx(kern, target="sm_60")


DIVERGENT = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn early(out: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 64>();
    let i = gpu::global_id().x;
    let lid = gpu::local_id().x;
    s[lid] = 1.0;
    gpu::workgroup_barrier();
    // not provably thread-dependent (G0042 would reject `i >= out.len()`), yet the
    // emitter cannot know every thread agrees: a workgroup-array and a written buffer
    if s[0] > out[0] { return; }
    gpu::workgroup_barrier();
    let t = gpu::workgroup_sum::<64>(s[lid], s);
    out[i] = t;
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn uniform(out: &mut [f32], n: u32) {
    let s = gpu::workgroup_array::<f32, 64>();
    let i = gpu::global_id().x;
    if n > 3 { return; }
    let v = if i < out.len() { out[i] } else { 0.0 };
    let t = gpu::workgroup_sum::<64>(v, s);
    if i < out.len() { out[i] = t; }
}
"""


def test_barrier_kind_follows_divergence():
    early = emit_ptx(k(DIVERGENT, "early"))
    first, rest = early.split("return", 1)[0], early.split("ret;", 1)[1]
    assert "bar.sync 0;" in first                       # before the divergent return
    assert "bar.sync" not in rest.replace("barrier.sync", "")  # after it: never the aligned form
    assert "barrier.sync 0;" in rest and "shfl" not in rest    # and no full-mask shuffles
    uni = emit_ptx(k(DIVERGENT, "uniform"))             # `n` is the same for every thread
    assert "barrier.sync" not in uni and "shfl.sync.down.b32" in uni


def test_integer_rules_are_explicit():
    text = emit_ptx(k("""
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn ints(a: &[i32], b: &[u32], o: &mut [i32], f: &[f32]) {
    let i = gpu::global_id().x;
    let x = a[i] / a[i + 1] + a[i] % a[i + 1];
    let y = (b[i] << b[i + 1]) >> a[i];
    o[i] = x + (y as i32) + (f[i] as i32) + (f[i].round() as i32);
}
"""))
    # ir/rules.py: signed `/` and `%` through unsigned division of the magnitudes
    assert "div.u32" in text and "rem.u32" in text and "div.s32" not in text and "rem.s32" not in text
    assert "and.b32" in text and ", 31;" in text        # shift masks
    assert "cvt.rzi.s32.f32" in text and "setp.nan.f32" in text
    assert "cvt.rzi.f32.f32" not in text                # round works on the bits


def test_emit_never_crashes_on_every_kernel():
    # every kernel of every source, good or bad file, that the importer accepted
    for path in SOURCES:
        for kern in import_file(path).kernels:
            assert ".entry" in emit_ptx(kern)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_simple_for_loops_are_unrolled():
    text = emit_ptx(k("""
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn sum(x: &[f32], o: &mut [f32], n: u32) {
    let mut acc = 0.0;
    for j in 0..n { acc += x[j]; }
    for j in 0..n { if acc > 3.0 { break; } acc += 1.0; }
    o[gpu::global_id().x] = acc;
}
"""))
    # the first loop: trips of 64, 32, 16 and 8 (ir/unroll.py), each 4 elements one
    # ld.global.v4; only the trip of 8 has the one-by-one form (codegen/ptx/vectors.py);
    # then the rest loop (its small body: 8 unrolled, 4 unrolled, + 1); the second loop (a
    # break) only the rest loop's form
    assert text.count("$L_for8_") == 2 and text.count("$L_for4_") == 2
    assert text.count("ld.global.nc.v4.f32") == 16 + 8 + 4 + 2
    assert text.count("ld.global.nc.f32") == 8 + 8 + 4 + 1


# ---------------------------------------------------------------- batched entries


def batchable_kernels():
    from goldy_import.codegen.ptx import batchable
    out = [pytest.param(kern, id=f"{os.path.basename(path)}::{kern.name}")
           for path in SOURCES for kern in import_file(path).kernels if batchable(kern)]
    assert len(out) >= 8
    return out


@pytest.mark.parametrize("kernel", batchable_kernels())
def test_batched_entry_assembles_with_the_extra_param(kernel, ptxas, tmp_path):
    from goldy_import.codegen.ptx import batch_entry
    text = emit_ptx(kernel, batch=4)
    log = assemble(ptxas, text, tmp_path)
    assert all(s == ("0", "0") for s in re.findall(r"(\d+) bytes spill stores, (\d+) bytes spill loads", log)), log
    plain, batched = text.split(f".visible .entry {batch_entry(kernel, 4)}(")
    names = lambda t: re.findall(r"\.param (?:\.align \d+ )?\.\w+ (p\w+)", t)  # noqa: E731
    assert names(batched.split(")")[0]) == names(plain.split(f".entry {kernel.name}(")[1].split(")")[0]) + ["p_groups_x"]
    assert emit_ptx(kernel).rstrip("\n") in text  # the plain entry is unchanged
    assert batch_entry(kernel, 4) not in emit_ptx(kernel)


def test_batched_saxpy_issues_every_copy_load_before_any_store():
    from goldy_import.codegen.ptx import batch_entry
    text = emit_ptx(k(SAXPY), batch=4).split(f".entry {batch_entry(k(SAXPY), 4)}(")[1]
    # saxpy reads and writes at its own index: copy j is logical thread 4 * (ctaid.x * 256 +
    # tid.x) + j (codegen/ptx/batched.py); full, aligned threads take one vector per buffer
    fast = text[text.index("hardware thread in runs of"):text.index("the general path")]
    assert fast.count("ld.global.nc.v4.f32") == 1 and fast.count("ld.global.v4.f32") == 1
    assert fast.count("st.global.v4.f32") == 1 and "@%p" not in fast.split("ld.global")[1]
    body = text[text.index("the general path"):]
    first_store = body.index("st.global")
    assert body[:first_store].count("ld.global.nc.f32") == 4 and body[:first_store].count("ld.global.f32") == 4
    assert body.count("st.global.f32") == 4
    # the general path: copy j valid below p_groups_x * 256 (64-bit); its `if` is predication
    assert re.findall(r"add\.s64 %rd\d+, %rd\d+, (\d);", body) == ["1", "2", "3"]
    assert body.count("setp.lt.u64") == 4 and "ld.param.u32 %r2, [p_groups_x];" in text
    assert len(re.findall(r"@%p\d+ st\.global\.f32", body)) == 4 and "bra" not in body


def test_batchable_refuses_what_threads_could_observe():
    from goldy_import.codegen.ptx import batchable
    base = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [{wg}])]
fn f(x: &mut [u32]) {{
    let i = gpu::global_id().x;
    {body}
}}
"""
    ok = "if i < x.len() { x[i] = x[i] + 1; } else { x[0] = 2; }"
    assert batchable(k(base.format(wg="64, 1, 1", body=ok)))
    assert batchable(k(base.format(wg="64, 1, 1", body="if i > 3 { return; } " + ok)))  # retires the copy
    assert not batchable(k(base.format(wg="8, 8, 1", body=ok)))
    for body in ("gpu::workgroup_barrier();", "gpu::atomic_add(x, 0, 1);",
                 "for j in 0..4u32 { x[j] = i; }", "while x[i] > 3 { x[i] = 0; }",
                 "let s = gpu::workgroup_array::<u32, 64>(); s[0] = i;"):
        assert not batchable(k(base.format(wg="64, 1, 1", body=body))), body


def test_workgroup_array_checks_dropped_only_where_ranges_prove_them():
    text = emit_ptx(k("""
use goldy::gpu;
#[goldy::compute(workgroup_size = [16, 16, 1])]
fn tiles(out: &mut [f32], n: u32) {
    let s = gpu::workgroup_array::<f32, 256>();
    let tx = gpu::local_id().x;
    let ty = gpu::local_id().y;
    s[ty * 16 + tx] = 1.0;
    gpu::workgroup_barrier();
    let mut acc = 0.0;
    for j in 0..16 {
        acc = acc + s[ty * 16 + j];
    }
    for q in 0..n {
        acc = acc + s[q];
    }
    out[tx] = acc + s[tx * 16 + ty + 1];
}
"""))
    loads = re.findall(r"^\t(@%p\d+ )?ld\.shared\.f32", text, re.M)
    stores = re.findall(r"^\t(@%p\d+ )?st\.shared\.f32", text, re.M)
    # s[ty*16 + tx] and s[ty*16 + j] (the constant loop fully unrolled: 16 copies) are in range;
    # s[q] (trips of 8 and 4, plus the rest loop: 13 copies) and s[tx*16 + ty + 1] are not
    assert stores == [""]
    assert loads.count("") == 16 and len(loads) == 30
