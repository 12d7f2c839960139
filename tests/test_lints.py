"""Race lints (importer/lints.py): G0043, every thread of a workgroup writes one element;
G0044, a workgroup array read at another lane's element before a barrier (G0045 and
G0046, the write-after-read and write-after-write orders: tests/test_race_lints.py).

Warnings never stop the import. Correct kernels get none: every example and test-data
kernel is checked, and so are hand-written correct patterns next to each broken one.
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.importer import import_file, import_source

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINTS = ("G0043", "G0044", "G0045", "G0046")


def lints(src: str) -> list[tuple[str, int, int, int, int, str]]:
    """(code, line, col, end_line, end_col, text under the primary label) of each warning;
    asserts that the kernel still imports and that nothing else is reported."""
    r = import_source(src, "t.rs")
    assert not r.errors, r.render()
    assert r.kernels, "a kernel with warnings is still imported"
    out = []
    for d in r.diagnostics:
        assert d.code in LINTS and d.severity == "warning", r.render()
        assert d.help, "every lint says how to fix it"
        s = d.span
        out.append((d.code, s.line, s.col, s.end_line, s.end_col, r.source.text(s)))
    return out


def kernel(body: str, params: str = "xs: &[f32], out: &mut [f32]", wg: str = "64, 1, 1") -> str:
    return f"""use goldy::gpu;
#[goldy::compute(workgroup_size = [{wg}])]
fn k({params}) {{
{body}
}}
"""


# ---------------------------------------------------------------- G0043


@pytest.mark.parametrize("body, line, col, text", [
    ("    out[0] = xs[gpu::global_id().x];", 4, 5, "out[0] = xs[gpu::global_id().x]"),
    # the index comes from immutable lets and a scalar: still the same on every thread
    ("    let i = gpu::global_id().x;\n    let k = 3u32;\n    out[k + 1] += xs[i];", 6, 5, "out[k + 1] += xs[i]"),
    # the workgroup id is the same on every thread of the workgroup
    ("    out[gpu::workgroup_id().x] = xs[gpu::local_id().x];", 4, 5,
     "out[gpu::workgroup_id().x] = xs[gpu::local_id().x]"),
    # a loop over a constant range: every thread writes out[0..4]
    ("    let i = gpu::global_id().x;\n    for j in 0..4u32 {\n        out[j] = xs[i];\n    }", 6, 9, "out[j] = xs[i]"),
    # a lane-independent condition is no guard
    ("    let i = gpu::global_id().x;\n    if xs.len() > 4 {\n        out[2] = xs[i];\n    }", 6, 9, "out[2] = xs[i]"),
    # a value read back from the written buffer may differ (a lost update)
    ("    out[0] = out[0] + 1.0;", 4, 5, "out[0] = out[0] + 1.0"),
    # y is the same on every thread of a [64, 1, 1] workgroup
    ("    out[gpu::global_id().y] = xs[gpu::global_id().x];", 4, 5,
     "out[gpu::global_id().y] = xs[gpu::global_id().x]"),
])
def test_uniform_write_is_reported_at_the_store(body, line, col, text):
    assert lints(kernel(body)) == [("G0043", line, col, line, col + len(text), text)]


@pytest.mark.parametrize("params, body, text", [
    ("xs: &[f32], out: gpu::Scattered<f32>", "    out[1] = xs[gpu::global_id().x];", "out[1] = xs[gpu::global_id().x]"),
    ("xs: &[f32], out: gpu::TensorMut<f32>", "    out[1] = xs[gpu::global_id().x];", "out[1] = xs[gpu::global_id().x]"),
    ("xs: &[f32], out: gpu::TensorWrite<f32>", "    out[1] = xs[gpu::global_id().x];", "out[1] = xs[gpu::global_id().x]"),
    ("xs: &[u32], out: &mut [u32]", "    out[1] = xs[gpu::global_id().x];", "out[1] = xs[gpu::global_id().x]"),
])
def test_every_writable_category_is_checked(params, body, text):
    assert lints(kernel(body, params)) == [("G0043", 4, 5, 4, 5 + len(text), text)]


@pytest.mark.parametrize("body", [
    # the classic guards
    "    let i = gpu::global_id().x;\n    if i == 0 { out[0] = xs[i]; }",
    "    if gpu::local_id().x == 0 { out[gpu::workgroup_id().x] = xs[gpu::global_id().x]; }",
    # an early return that depends on the thread guards the rest of the kernel
    "    let i = gpu::global_id().x;\n    if i != 5 { return; }\n    out[0] = xs[i];",
    # a thread-dependent break guards the rest of the loop (and, conservatively, the kernel)
    "    let i = gpu::global_id().x;\n    for j in 0..4u32 {\n        out[j] = 1.0;\n        if i > j { break; }\n"
    "        out[j + 4] = xs[i];\n    }\n    out[9] = xs[i];",
    # the thread's own element, or one derived from it
    "    let i = gpu::global_id().x;\n    if i < out.len() { out[i] = xs[i]; }",
    "    let i = gpu::global_id().x;\n    out[i * 2 + 1] = xs[i];",
    "    let g = gpu::global_id();\n    out[g.x] = xs[g.x];",
    # every thread writes the same value: whichever write lands, the result is the same
    "    out[0] = 1.0;",
    "    let s = gpu::workgroup_array::<f32, 64>();\n"
    "    let t = gpu::workgroup_sum(xs[gpu::global_id().x], s);\n    out[gpu::workgroup_id().x] = t;",
    "    let mut acc = 0.0;\n    for j in 0..4u32 { acc += xs[j]; }\n    out[7] = acc;",
    # an index loaded from memory the kernel writes may differ between threads
    "    out[out.len() - 1] = 0.0;\n    let i = gpu::global_id().x;\n    out[i] = xs[i];",
])
def test_guarded_or_thread_indexed_writes_are_not_reported(body):
    assert lints(kernel(body)) == []


def test_stream_compaction_through_an_atomic_slot_is_not_reported():
    src = kernel("    let i = gpu::global_id().x;\n    if i < xs.len() && xs[i] > 0 {\n"
                 "        let slot = gpu::atomic_add(count, 0, 1u32);\n        out[slot] = xs[i];\n    }\n"
                 "    let first = gpu::atomic_add(count, 1, 1u32);\n    out[first + 64] = 7;",
                 "xs: &[u32], out: &mut [u32], count: &mut [u32]")
    assert lints(src) == []


def test_atomics_are_exempt():
    src = kernel("    let i = gpu::global_id().x;\n    gpu::atomic_add(hist, 0, xs[i]);\n"
                 "    let old = gpu::atomic_add(hist, 1, 1u32);\n    if old > 100 { hist[2] = old; }",
                 "xs: &[u32], hist: &mut [u32]")
    assert lints(src) == []


def test_single_thread_workgroups_are_not_reported():
    assert lints(kernel("    out[gpu::workgroup_id().x] = xs[gpu::global_id().x];", wg="1, 1, 1")) == []


def test_barrier_loop_with_a_uniform_trip_count_still_reports():
    body = ("    let s = gpu::workgroup_array::<f32, 64>();\n    let lid = gpu::local_id().x;\n"
            "    for t in 0..4u32 {\n        s[lid] = xs[t * 64 + lid];\n        gpu::workgroup_barrier();\n"
            "        out[t] = s[63 - lid];\n        gpu::workgroup_barrier();\n    }")
    assert lints(kernel(body)) == [("G0043", 9, 9, 9, 29, "out[t] = s[63 - lid]")]


# ---------------------------------------------------------------- G0044

REDUCE_NO_FIRST_BARRIER = """use goldy::gpu;
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn block_sum(input: &[f32], sums: &mut [f32]) {
    let scratch = gpu::workgroup_array::<f32, 256>();
    let lid = gpu::local_id().x;
    scratch[lid] = input[gpu::global_id().x];
    let mut stride = 128u32;
    while stride > 0 {
        if lid < stride {
            scratch[lid] += scratch[lid + stride];
        }
        gpu::workgroup_barrier();
        stride >>= 1;
    }
    if lid == 0 {
        sums[gpu::workgroup_id().x] = scratch[0];
    }
}
"""


def test_tree_reduction_without_the_first_barrier():
    assert lints(REDUCE_NO_FIRST_BARRIER) == [("G0044", 10, 29, 10, 50, "scratch[lid + stride]")]
    r = import_source(REDUCE_NO_FIRST_BARRIER, "t.rs")
    (d,) = r.diagnostics
    write = d.labels[1]
    assert not write.primary and (write.span.line, write.span.col) == (6, 5)
    assert r.source.text(write.span) == "scratch[lid] = input[gpu::global_id().x]"


def test_the_same_reduction_with_the_barrier_is_clean():
    fixed = REDUCE_NO_FIRST_BARRIER.replace("    let mut stride", "    gpu::workgroup_barrier();\n    let mut stride")
    assert lints(fixed) == []


SHARED = "    let s = gpu::workgroup_array::<f32, 128>();\n    let lid = gpu::local_id().x;\n    let i = gpu::global_id().x;\n"


@pytest.mark.parametrize("body, line, col, text", [
    # every lane reads one element written by lane 0
    (SHARED + "    s[lid] = xs[i];\n    out[i] = s[0];", 8, 14, "s[0]"),
    # lane 0 alone writes, every lane reads
    (SHARED + "    if lid == 0 { s[0] = xs[i]; }\n    out[i] = s[0];", 8, 14, "s[0]"),
    # neighbours
    (SHARED + "    s[lid] = xs[i];\n    out[i] = s[lid ^ 1];", 8, 14, "s[lid ^ 1]"),
    (SHARED + "    s[lid] = xs[i];\n    if lid > 0 { out[i] = s[lid - 1]; }", 8, 27, "s[lid - 1]"),
    (SHARED + "    s[lid] = xs[i];\n    let j = lid + 1;\n    out[i] = s[j];", 9, 14, "s[j]"),
    # global_id is a lane index too, when the workgroup spans the axis
    (SHARED + "    s[i] = xs[i];\n    out[i] = s[i + 1];", 8, 14, "s[i + 1]"),
    # the barrier is inside a branch that not every path takes
    (SHARED + "    s[lid] = xs[i];\n    if xs.len() > 3 { gpu::workgroup_barrier(); }\n    out[i] = s[lid + 1];",
     9, 14, "s[lid + 1]"),
    # a write at the end of one iteration, read at the start of the next
    (SHARED + "    let mut acc = 0.0;\n    for t in 0..4u32 {\n        acc += s[lid + 1];\n"
              "        s[lid] = xs[t];\n    }\n    out[i] = acc;", 9, 16, "s[lid + 1]"),
    # a read in the condition of a while loop
    (SHARED + "    s[lid] = xs[i];\n    let mut n = 0u32;\n    while s[lid + 1] > 0.0 && n < 4 { n += 1; }\n"
              "    out[i] = n as f32;", 9, 11, "s[lid + 1]"),
])
def test_unsynchronised_read_of_another_lane(body, line, col, text):
    assert lints(kernel(body)) == [("G0044", line, col, line, col + len(text), text)]


@pytest.mark.parametrize("body", [
    # own element, in every spelling
    SHARED + "    s[lid] = xs[i];\n    s[lid] = s[lid] * 2.0;\n    out[i] = s[gpu::local_id().x];",
    SHARED + "    for j in 0..2u32 { s[lid * 2 + j] = xs[i]; }\n"
             "    for j in 0..2u32 { out[i] += s[lid * 2 + j]; }",
    # only lane 0 reads element 0: its own
    SHARED + "    s[lid] = xs[i];\n    if lid == 0 { out[i] = s[0]; }",
    # a barrier between
    SHARED + "    s[lid] = xs[i];\n    gpu::workgroup_barrier();\n    out[i] = s[lid ^ 1] + s[0];",
    # a collective ends with a barrier
    SHARED + "    s[lid + 64] = xs[i];\n    let t = gpu::workgroup_sum::<64>(xs[i], s);\n    out[i] = s[lid + 65] + t;",
    # the read half is not the written half: [0, 64) written, [64, 128) read
    SHARED + "    s[lid + 64] = 0.0;\n    gpu::workgroup_barrier();\n    s[lid] = xs[i];\n    out[i] = s[lid + 64];",
    # barrier on both arms
    SHARED + "    s[lid] = xs[i];\n    if xs.len() > 3 { gpu::workgroup_barrier(); } else { gpu::workgroup_barrier(); }\n"
             "    out[i] = s[lid + 1];",
    # double buffering: read one half, write the other, barrier once per step
    SHARED + "    s[lid] = xs[i];\n    gpu::workgroup_barrier();\n    let mut cur = 0u32;\n"
             "    for t in 0..3u32 {\n        let v = s[cur * 64 + (lid + 1) % 64];\n"
             "        s[(1 - cur) * 64 + lid] = v;\n        gpu::workgroup_barrier();\n        cur = 1 - cur;\n    }\n"
             "    out[i] = s[cur * 64 + lid];",
    # reads before any write, and reads after a barrier in every iteration
    SHARED + "    let mut acc = 0.0;\n    for t in 0..4u32 {\n        s[lid] = xs[t];\n        gpu::workgroup_barrier();\n"
             "        acc += s[lid ^ 1];\n        gpu::workgroup_barrier();\n    }\n    out[i] = acc;",
])
def test_synchronised_or_own_element_reads_are_not_reported(body):
    assert lints(kernel(body)) == []


# ---------------------------------------------------------------- correct kernels


def all_sources() -> list[str]:
    return sorted(glob.glob(os.path.join(REPO, "rust_examples", "*.rs")) +
                  glob.glob(os.path.join(REPO, "tests", "data", "*.rs")) +
                  glob.glob(os.path.join(REPO, "tests", "data", "importer", "**", "*.rs"), recursive=True))


# The one racy kernel in the test data: it tests out-of-range accesses and reads
# scratch[lid + 1] right after scratch[lid] = 7.0 with no barrier (a real race: on a GPU
# lane l may read before lane l + 1 writes). Reported to the owner of the file.
KNOWN_RACY = {("cpu_semantics.rs", "G0044", 324)}


@pytest.mark.parametrize("path", all_sources(), ids=lambda p: os.path.relpath(p, REPO))
def test_examples_and_test_data_get_no_lint_warnings(path):
    r = import_file(path)
    got = {(os.path.basename(path), d.code, d.span.line) for d in r.diagnostics if d.code in LINTS}
    assert got <= KNOWN_RACY, r.render()


def test_sources_cover_the_patterns_the_lints_must_accept():
    names = {os.path.basename(p) for p in all_sources()}
    assert {"reduce_manual.rs", "tiled_transpose.rs", "matmul.rs", "collectives.rs", "softmax.rs",
            "rmsnorm.rs", "kitchen_sink.rs"} <= names


# ---------------------------------------------------------------- warnings do not stop anything


def test_a_kernel_with_warnings_loads_and_runs():
    src = kernel("    let i = gpu::global_id().x;\n    if i < xs.len() { out[i + 1] = xs[i]; }\n    out[0] = xs[0] + xs[i % 4];")
    mod = gi.load_source(src, "warned.rs")
    dev = gi.Device("cpu")
    xs = dev.buffer(np.ones(4, np.float32))
    out = dev.buffer(np.zeros(5, np.float32))
    s = gi.Scheme(dev)
    mod.k.prepare(dev).record(s, "k", xs, out).over_1d(4)
    s.submit()
    np.testing.assert_array_equal(out.numpy(), np.array([2, 1, 1, 1, 1], np.float32))


def cli(*args):
    return subprocess.run([sys.executable, "-m", "goldy_import.cli", *args], capture_output=True, text=True, cwd=REPO)


@pytest.fixture(scope="module")
def racy_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("lints") / "racy.rs"
    path.write_text(kernel("    out[0] = xs[gpu::global_id().x];"))
    return str(path)


def test_cli_prints_warnings_and_succeeds(racy_file):
    r = cli(racy_file, "--check")
    assert r.returncode == 0, r.stderr
    assert "warning[G0043]: every thread of a workgroup writes the same element of `out`" in r.stderr
    assert f"--> {racy_file}:4:5" in r.stderr
    assert "warning: 1 warning emitted" in r.stderr
    assert "1 kernel ok (k)" in r.stdout


def test_cli_deny_warnings_fails_with_status_1(racy_file, tmp_path):
    r = cli(racy_file, "--check", "--deny", "warnings")
    assert r.returncode == 1
    assert "error[G0043]" in r.stderr and "warning[" not in r.stderr
    out = tmp_path / "m.py"
    r = cli(racy_file, "--deny", "warnings", "-o", str(out))
    assert r.returncode == 1 and not out.exists()
    r = cli(racy_file, "-o", str(out))
    assert r.returncode == 0 and out.exists(), r.stderr


def test_cli_json_severity(racy_file):
    r = cli(racy_file, "--check", "--message-format", "json")
    (obj,) = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    assert (obj["code"], obj["severity"]) == ("G0043", "warning")
    span = obj["spans"][0]
    assert (span["line_start"], span["column_start"], span["line_end"], span["column_end"]) == (4, 5, 4, 36)
    r = cli(racy_file, "--check", "--message-format", "json", "--deny", "warnings")
    assert r.returncode == 1
    assert json.loads(r.stdout.splitlines()[0])["severity"] == "error"


def test_deeply_nested_loops_lint_in_linear_time():
    """Each loop is iterated to a fixed point; memoised, loops nested as deep as the dialect
    allows (16, G0040) with a workgroup write inside stay fast (without it, 3^depth steps)."""
    import time

    from goldy_import.importer.state import MAX_LOOP_DEPTH
    depth = MAX_LOOP_DEPTH
    loops = "".join(f"for j{d} in 0..2u32 {{ " for d in range(depth))
    body = (SHARED + f"    {loops}s[lid] = xs[i];\n    out[i] = s[lid + 1];" + " }" * depth)
    start = time.perf_counter()
    got = lints(kernel(body))
    assert time.perf_counter() - start < 10
    assert [g[0] for g in got] == ["G0044"]
