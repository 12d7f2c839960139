"""A file where one kernel has an error: `gi.load` refuses it (listing every error and how
to load the others), `gi.load(path, kernels=[...])` and `goldy-import --kernel NAME` load
the good kernels and ignore errors inside the others, as docs/dialect.md says."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import goldy_import as gi
from oracle import REPO

SRC = """use goldy::gpu;

#[goldy::gpu]
struct P {
    k: u32,
}

/// Fine.
#[goldy::compute]
fn good(out: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < out.len() { out[i] = i * 2; }
}

#[goldy::compute]
fn broken(out: &mut [u32]) {
    out[0] = 1.0;
    let v = vec![1];
}

#[goldy::compute(workgroup_size = [0, 1, 1])]
fn bad_attribute(out: &mut [u32]) {
    out[0] = 1;
}

#[goldy::compute]
fn also_good(out: &mut [f32], p: gpu::Uniform<P>) {
    let i = gpu::global_id().x;
    if i < out.len() { out[i] = p.k as f32; }
}
"""


@pytest.fixture()
def path(tmp_path):
    p = tmp_path / "mixed.rs"
    p.write_text(SRC)
    return str(p)


def test_load_refuses_and_says_how_to_load_the_good_kernels(path):
    with pytest.raises(gi.DiagnosticError) as e:
        gi.load(path)
    first = str(e.value).splitlines()[0]
    assert first == (f"{path}: 3 errors in the Rust source; the kernels without errors load with kernels=[...]: "
                     f"gi.load(path, kernels=['good', 'also_good'])")
    assert [d.code for d in e.value.diagnostics] == ["G0019", "G0009", "G0002"]


def test_load_named_kernels_ignores_errors_in_the_others(path):
    m = gi.load(path, kernels=["good", "also_good"])
    assert sorted(m.kernels) == ["also_good", "good"] and not hasattr(m, "broken")
    assert m.result.errors == [] and m.good.__doc__.startswith("Fine.")
    dev = gi.Device("cpu")
    out = dev.buffer(np.zeros(10, np.uint32))
    s = gi.Scheme(dev)
    m.good.prepare(dev).record(s, "good", out).over_1d(10)
    s.submit()
    np.testing.assert_array_equal(out.numpy(), 2 * np.arange(10, dtype=np.uint32))
    assert list(gi.load(path, kernels="good").kernels) == ["good"]  # one name as a str


def test_load_named_kernels_still_reports_their_own_errors(path):
    with pytest.raises(gi.DiagnosticError) as e:
        gi.load(path, kernels=["good", "broken"])
    assert [d.code for d in e.value.diagnostics] == ["G0019", "G0009"]
    with pytest.raises(gi.DiagnosticError) as e:
        gi.load(path, kernels=["bad_attribute"])
    assert [d.code for d in e.value.diagnostics] == ["G0002"]
    with pytest.raises(gi.DiagnosticError) as e:
        gi.load(path, kernels=["nope"])
    assert str(e.value) == f"{path}: no kernel `nope` (kernels: good, broken, bad_attribute, also_good)"


def test_errors_outside_kernels_still_count(tmp_path):
    p = tmp_path / "bad_struct.rs"
    p.write_text(SRC.replace("    k: u32,", "    k: u64,"))
    with pytest.raises(gi.DiagnosticError) as e:
        gi.load(str(p), kernels=["good"])
    assert [d.code for d in e.value.diagnostics] == ["G0037"]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "goldy_import.cli", *args], capture_output=True, text=True)


def test_cli_kernel_ignores_errors_in_other_kernels(path, tmp_path):
    r = cli(path, "--check")
    assert r.returncode == 1 and "due to 3 previous errors" in r.stderr
    r = cli(path, "--check", "--kernel", "good")
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"{path}: 1 kernel ok (good)\n"
    assert r.stderr == f"note: ignored 3 errors in other kernels of {path} (--kernel good)\n"
    out = str(tmp_path / "good_k.py")
    r = cli(path, "--kernel", "also_good", "-o", out)
    assert r.returncode == 0 and os.path.exists(out)
    r = cli(path, "--kernel", "also_good", "--emit", "wgsl")
    assert r.returncode == 0 and "kernel `also_good`" in r.stdout
    r = cli(path, "--kernel", "broken", "--check")
    assert r.returncode == 1 and "due to 2 previous errors" in r.stderr and "ignored 1 error in other" in r.stderr


def test_docs_say_what_load_does():
    with open(os.path.join(REPO, "docs", "dialect.md"), encoding="utf-8") as f:
        text = " ".join(f.read().split())
    assert "`gi.load(path)` (and `goldy-import FILE.rs`) then refuses the file and lists them all" in text
    assert "`gi.load(path, kernels=[\"a\", \"b\"])` (`goldy-import FILE.rs --kernel a`) loads just the named" in text
    assert "still returns the kernels that have none" not in text


def test_cli_unknown_kernel_is_a_usage_error_even_in_a_file_with_errors(path):
    r = cli(path, "--check", "--kernel", "nope")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == f"error: no kernel `nope` in {path} (kernels: good, broken, bad_attribute, also_good)\n"
