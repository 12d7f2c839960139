"""Quiet mistakes and noise (issue 19): a record with no grid call, bad uniform values, an
empty kernel, a bad GOLDY_BACKEND, `--emit ptx` of several kernels, a closed pipe, and
driver output that looks like an error. Messages are exact where they are the contract."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import goldy_import as gi
from oracle import REPO, device

BACKENDS = ["cpu", "wgpu", "slang", "cuda"]

SRC = """
#[goldy::gpu]
struct Params {
    count: u32,
    scale: f32,
    offset: i32,
    tint: [f32; 3],
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn scaled(p: gpu::Uniform<Params>, out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < p.count && i < out.len() {
        out[i] = p.scale * (i as f32) + (p.offset as f32) + p.tint.y;
    }
}

#[goldy::compute]
fn nothing() {}

#[goldy::compute]
fn only_a_let() {
    let i = gpu::global_id().x;
}
"""


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, "quiet.rs")


# ---------------------------------------------------------------- records without a grid call

@pytest.mark.parametrize("backend", BACKENDS)
def test_submit_refuses_a_record_without_grid_call(backend, mod):
    dev = device(backend)
    out = dev.buffer(np.zeros(8, np.float32))
    s = gi.Scheme(dev)
    k = mod.scaled.prepare(dev)
    k.record(s, "done", {"count": 8, "scale": 1.0, "offset": 0, "tint": [0, 0, 0]}, out).over_1d(8)
    pending = k.record(s, "forgotten", {"count": 8, "scale": 2.0, "offset": 0, "tint": [0, 0, 0]}, out)
    with pytest.raises(gi.GridError) as e:
        s.submit()
    assert str(e.value) == ("kernel `scaled`: record(scheme, 'forgotten', ...) has no grid call, so nothing was "
                            "recorded for it; finish it with .over_1d(n), .over_2d(w, h), .over_3d(w, h, d), "
                            ".over_tensor(view) or .groups((x, y, z)) before submit()")
    np.testing.assert_array_equal(out.numpy(), np.zeros(8, np.float32))  # nothing ran
    pending.over_1d(8)
    s.submit()
    np.testing.assert_array_equal(out.numpy(), 2 * np.arange(8, dtype=np.float32))


def test_a_grid_call_that_fails_finishes_the_record(mod):
    dev = device("cpu")
    s = gi.Scheme(dev)
    with pytest.raises(gi.GridError, match="empty grid"):
        mod.nothing.prepare(dev).record(s, "empty").over_1d(0)
    s.submit()  # the failed record said so already; it does not block the scheme


# ---------------------------------------------------------------- uniforms

WHERE = "kernel `scaled` parameter `p` (gpu::Uniform<Params>)"
GOOD = {"count": 8, "scale": 1.5, "offset": -2, "tint": [0.0, 0.25, 0.0]}


@pytest.mark.parametrize("change,message", [
    ({"count": -1}, f"{WHERE} field `count` (u32): value -1 is out of range for u32 (0..=4294967295)"),
    ({"count": 2**33}, f"{WHERE} field `count` (u32): value 8589934592 is out of range for u32 (0..=4294967295)"),
    ({"count": 2.7}, f"{WHERE} field `count` (u32): expected an int in 0..=4294967295, got float 2.7"),
    ({"offset": 2**31}, f"{WHERE} field `offset` (i32): value 2147483648 is out of range for i32 "
                        f"(-2147483648..=2147483647)"),
    ({"scale": "x"}, f"{WHERE} field `scale` (f32): expected a float, got str 'x'"),
    ({"scale": 1e39}, f"{WHERE} field `scale` (f32): value 1e+39 is out of range for f32 (|x| <= 3.4028235e38)"),
    ({"tint": [1.0, 2.0]}, f"{WHERE} field `tint` ([f32; 3]): expected a sequence of 3 numbers, got list [1.0, 2.0]"),
    ({"tint": [1.0, "y", 2.0]}, f"{WHERE} field `tint` ([f32; 3]): expected a float, got str 'y'"),
])
def test_bad_uniform_fields_name_kernel_field_type_and_value(mod, change, message):
    dev = device("cpu")
    out = dev.buffer(np.zeros(8, np.float32))
    s = gi.Scheme(dev)
    with pytest.raises(gi.BindingError) as e:
        mod.scaled.prepare(dev).record(s, "u", {**GOOD, **change}, out)
    assert str(e.value) == message
    assert s.nodes == []


def test_a_tuple_is_not_a_uniform(mod):
    dev = device("cpu")
    with pytest.raises(gi.BindingError) as e:
        mod.scaled.prepare(dev).record(gi.Scheme(dev), "u", (8, 1.5, -2, [0.0, 0.25, 0.0]), dev.zeros(8))
    assert str(e.value) == (f"{WHERE}: expected a dict of the fields of `Params` or a one-element structured array, "
                            f"got tuple (8, 1.5, -2, [0.0, 0.25, 0.0])")


@pytest.mark.parametrize("backend", BACKENDS)
def test_good_uniforms_from_numpy_values_on_every_backend(backend, mod):
    dev = device(backend)
    out = dev.buffer(np.full(8, np.nan, np.float32))
    s = gi.Scheme(dev)
    p = {"count": np.uint32(6), "scale": np.float32(1.5), "offset": np.int64(-2),
         "tint": np.array([0.0, 0.25, 0.0], np.float32)}
    mod.scaled.prepare(dev).record(s, "u", p, out).over_1d(8)
    s.submit()
    want = np.float32(1.5) * np.arange(8, dtype=np.float32) - 2 + np.float32(0.25)
    np.testing.assert_array_equal(out.numpy()[:6], want[:6])
    assert np.isnan(out.numpy()[6:]).all()


# ---------------------------------------------------------------- empty kernels

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kernel", ["nothing", "only_a_let"])
def test_kernels_that_do_nothing_run(backend, kernel, mod):
    dev = device(backend)
    s = gi.Scheme(dev)
    getattr(mod, kernel).prepare(dev).record(s, kernel).over_1d(100)
    s.submit()


# ---------------------------------------------------------------- environment and command line

def test_bogus_goldy_backend_names_the_variable(monkeypatch):
    monkeypatch.setenv("GOLDY_BACKEND", "bogus")
    with pytest.raises(gi.BackendUnavailable) as e:
        gi.Device("auto")
    assert str(e.value) == ("unknown backend 'bogus' (from GOLDY_BACKEND=bogus): expected one of cpu, wgpu, cuda, "
                            "slang or 'auto'")


def cli(*args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "goldy_import.cli", *args], capture_output=True, text=True,
                          cwd=REPO, **kw)


def test_emit_ptx_of_several_kernels_asks_for_one():
    r = cli("rust_examples/transpose.rs", "--emit", "ptx")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == ("error: --emit ptx prints one PTX module per kernel and rust_examples/transpose.rs has 2 "
                        "kernels (transpose, laplacian); pick one with --kernel NAME\n")
    one = cli("rust_examples/transpose.rs", "--emit", "ptx", "--kernel", "laplacian")
    assert one.returncode == 0 and one.stdout.count(".entry ") >= 1


def test_a_closed_pipe_ends_quietly():
    """`goldy-import ... | head -n 1` with more output than a pipe holds."""
    exe = os.path.join(os.path.dirname(sys.executable), "goldy-import")
    cmd = [exe] if os.path.exists(exe) else [sys.executable, "-m", "goldy_import.cli"]
    p = subprocess.Popen(cmd + ["tests/data/cpu_semantics.rs", "--emit", "slang"], cwd=REPO,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert p.stdout is not None and p.stderr is not None
    first = p.stdout.readline()
    p.stdout.close()  # what `head -n 1` does after its line
    err = p.stderr.read().decode()
    p.wait(timeout=60)
    assert first.startswith(b"// kernel ")
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    assert p.returncode in (0, 141)


# ---------------------------------------------------------------- driver noise

NOISY = textwrap.dedent("""
    import logging, sys
    import numpy as np
    import goldy_import as gi
    logging.basicConfig(stream=sys.stdout, level=logging.DEBUG, format="LOG %(name)s %(levelname)s %(message)s")
    logging.getLogger("goldy_import").setLevel(logging.WARNING)   # the backend-choice info line
    logging.getLogger("goldy_import.driver").setLevel(logging.DEBUG)
    m = gi.load("rust_examples/saxpy.rs")
    for backend in sys.argv[1:]:
        dev = gi.Device(backend)
        x, y = dev.buffer(np.ones(64, np.float32)), dev.buffer(np.ones(64, np.float32))
        s = gi.Scheme(dev)
        m.saxpy.prepare(dev).record(s, "saxpy", x, y, 2.0).over_1d(64)
        s.submit()
        assert (y.numpy() == 3).all()
    print("ran")
""")


@pytest.mark.parametrize("backend", ["wgpu", "slang"])
def test_no_driver_noise_on_the_console(backend):
    """Without XDG_RUNTIME_DIR (containers, CI) Mesa's Vulkan driver printed `error:` lines
    and slangpy a `[WARN]` line for every device; now nothing reaches the console, and
    slangpy's line is a `goldy_import.driver` log record."""
    device(backend)  # skips (or fails under GOLDY_REQUIRE_BACKENDS) where it cannot run
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    r = subprocess.run([sys.executable, "-c", NOISY, backend], capture_output=True, text=True, cwd=REPO, env=env,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    console = [ln for ln in r.stdout.splitlines() if not ln.startswith("LOG ")]
    assert console == ["ran"]
    if backend == "slang":
        assert any(ln.startswith("LOG goldy_import.driver") and "slangpy: " in ln for ln in r.stdout.splitlines())


def test_make_demo_output_is_free_of_driver_noise(tmp_path):
    """What `make demo` runs, on every backend available here, without XDG_RUNTIME_DIR:
    the table and nothing a driver printed."""
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    r = subprocess.run([sys.executable, "-m", "goldy_import.demo", "--size", "512", "--out", str(tmp_path)],
                       capture_output=True, text=True, cwd=REPO, env=env, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    noise = [ln for ln in (r.stdout + r.stderr).splitlines()
             if "XDG_RUNTIME_DIR" in ln or "WARN" in ln or ln.startswith("error")]
    assert noise == []
    assert r.stderr == "" and " passed, 0 failed" in r.stdout


def test_emit_wgsl_validates_without_driver_noise(tmp_path):
    """`goldy-import --emit wgsl` validates through naga on a wgpu device (codegen/validate.py):
    without XDG_RUNTIME_DIR that adapter query printed Mesa's `error:` line too."""
    device("wgpu")  # the validator's device: skips (or fails where required) without one
    src = tmp_path / "k.rs"
    src.write_text("use goldy::gpu;\n#[goldy::compute(workgroup_size = [64, 1, 1])]\n"
                   "fn k(y: &mut [f32]) { let i = gpu::global_id().x; if i < y.len() { y[i] = 1.0; } }\n")
    env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
    r = subprocess.run([sys.executable, "-m", "goldy_import.cli", str(src), "--emit", "wgsl"], capture_output=True,
                       text=True, cwd=REPO, env=env, timeout=300)
    assert r.returncode == 0, r.stderr
    assert "fn k(" in r.stdout or "@compute" in r.stdout
    assert [ln for ln in r.stderr.splitlines() if "error" in ln or "XDG_RUNTIME_DIR" in ln] == []
