"""Issue 14, runtime half: the host holds under abuse.

- Frees and closes racing in-flight work (submits, reads, records) on another thread, and
  Ctrl-C during reads and submits on wgpu: each in a child process, so an abort (wgpu-native
  panics with SIGABRT on a destroyed buffer) fails the test instead of killing pytest.
- Hostile host-API inputs: every one ends in a GoldyError naming the call, never numpy's or
  Python's own exception.
- Silent wrong answers: softmax's accesses of its row are checked like any other access; a
  tensor layout past u32 and a grid past 2^32 threads per axis are refused on every backend.
- wgpu schemes recorded and dropped without a submit leave no memory behind.

Each child and thread is bounded in time (CHILD_SECONDS); nothing asserts on speed.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import goldy_import as gi

from oracle import backend_or_skip, device

BACKENDS = ["cpu", "wgpu", "slang"]
CHILD_SECONDS = 300
HERE = os.path.dirname(os.path.abspath(__file__))

SRC = """use goldy::gpu;
#[goldy::gpu]
pub struct P { pub a: f32, pub n: u32 }
/// y = a * x + y
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn axpy(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i] + y[i]; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn uni(y: &mut [f32], p: gpu::Uniform<P>) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = p.a + (p.n as f32); }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn twice(t: gpu::TensorMut<f32>) {
    let i = gpu::global_id().x;
    if i < t.len() { t[i] = t[i] * 2.0; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn tlen(t: gpu::Tensor<f32>, out: &mut [u32]) {
    if gpu::global_id().x == 0 { out[0] = t.len(); }
}
#[goldy::compute(workgroup_size = [16, 1, 1])]
fn softmax16(buf: &mut [f32], base: u32, count: u32) {
    let s = gpu::workgroup_array::<f32, 16>();
    gpu::workgroup_softmax_in_place::<16>(buf, base, count, s);
}
"""


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, "abuse.rs")


def run_child(code: str, *args: str) -> str:
    """Runs `code` in a fresh interpreter; it must exit 0 (no abort, no traceback) in time.
    A child still running shortly before the limit prints every thread's stack and exits,
    so a hang fails with where it hung."""
    dump = f"import faulthandler; faulthandler.dump_traceback_later({CHILD_SECONDS - 30}, exit=True)\n"
    r = subprocess.run([sys.executable, "-c", dump + code, *args], capture_output=True, text=True,
                       timeout=CHILD_SECONDS, cwd=HERE)
    assert r.returncode == 0, f"child exited {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout


def still_works(dev: gi.Device, mod) -> None:
    x = np.random.default_rng(1).standard_normal(100).astype(np.float32)
    bx, by = dev.buffer(x), dev.buffer(np.ones(100, np.float32))
    s = gi.Scheme(dev)
    mod.axpy.prepare(dev).record(s, "check", bx, by, 2.0).over_1d(100)
    s.submit()
    np.testing.assert_array_equal(by.numpy(), np.float32(2) * x + np.float32(1))


# ---------------------------------------------------------------- frees and closes vs in-flight work

RACE_CHILD = r"""
import sys, threading, numpy as np, goldy_import as gi
backend, src = sys.argv[1], sys.argv[2]
mod = gi.load_source(src, "race.rs")
dev = gi.Device(backend)
k = mod.axpy.prepare(dev)
n, escaped = 512, []
def guarded(fn):
    def run():
        try:
            fn()
        except gi.GoldyError:
            pass  # refused: an accepted outcome
        except BaseException as e:
            escaped.append(repr(e))
    return run
def race(*fns):
    ts = [threading.Thread(target=guarded(f)) for f in fns]
    for t in ts: t.start()
    for t in ts: t.join(120)
    assert not any(t.is_alive() for t in ts), "a thread hung"
for rep in range(12):
    x, y = dev.buffer(np.ones(n, np.float32)), dev.buffer(np.ones(n, np.float32))
    s = gi.Scheme(dev)
    for j in range(8):
        k.record(s, "a", x, y, 1.0).over_1d(n)
    scenario = rep % 4
    if scenario == 0:    # free while another thread submits a scheme using it
        race(lambda: [s.submit() for _ in range(4)], x.free)
    elif scenario == 1:  # free while another thread reads it back
        race(lambda: [y.numpy() for _ in range(8)], y.free)
    elif scenario == 2:  # free while another thread records with it
        race(lambda: [k.record(gi.Scheme(dev), "b", x, y, 1.0).over_1d(n) for _ in range(16)], x.free)
    else:                # close during a submit and a read
        race(lambda: [s.submit() for _ in range(4)], lambda: [y.numpy() for _ in range(4)], dev.close)
        dev = gi.Device(backend)
        k = mod.axpy.prepare(dev)
assert not escaped, escaped
x, y = dev.buffer(np.arange(10, dtype=np.float32)), dev.zeros(10)
s = gi.Scheme(dev); k.record(s, "after", x, y, 3.0).over_1d(10); s.submit()
assert (y.numpy() == 3 * np.arange(10, dtype=np.float32)).all()
print("still works")
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_free_and_close_during_submit_read_and_record(backend):
    backend_or_skip(backend)
    assert "still works" in run_child(RACE_CHILD, backend, SRC)


@pytest.mark.parametrize("backend", BACKENDS)
def test_freed_or_closed_refused_once_the_lock_is_held(backend, mod):
    """The check runs under the device lock: a buffer freed (or a device closed) after the
    argument check but before the backend call is still refused, not handed to the backend."""
    backend_or_skip(backend)
    dev = gi.Device(backend)
    k = mod.axpy.prepare(dev)
    x, y = dev.buffer(np.ones(64, np.float32)), dev.buffer(np.ones(64, np.float32))
    s = gi.Scheme(dev)
    rb = k.record(s, "late", x, y, 1.0)  # arguments checked here
    x.free()
    with pytest.raises(gi.BindingError, match="freed"):
        rb.over_1d(64)  # the backend record happens here
    s2 = gi.Scheme(dev)
    k.record(s2, "ok", dev.buffer(np.ones(64, np.float32)), y, 1.0).over_1d(64)
    dev.close()
    with pytest.raises(gi.GoldyError, match="closed"):
        s2.submit()
    with pytest.raises(gi.GoldyError, match="closed"):
        y.numpy()


SIGINT_CHILD = r"""
import os, random, signal, sys, threading, numpy as np, goldy_import as gi
# Ctrl-C as a terminal delivers it: a job started in the background by a non-interactive
# shell (how CI harnesses often run) inherits SIGINT ignored, and then nothing interrupts
signal.signal(signal.SIGINT, signal.default_int_handler)
mod = gi.load_source(sys.argv[1], "sig.rs")
dev = gi.Device("wgpu")
k = mod.axpy.prepare(dev)
n = 1 << 21  # reads and submits long enough for the signal to land inside them
x, y = dev.buffer(np.ones(n, np.float32)), dev.buffer(np.zeros(n, np.float32))
s = gi.Scheme(dev); k.record(s, "a", x, y, 1.0).over_1d(n)
s.submit(); y.numpy()  # warm: imports and staging buffers exist before the first signal
rng, interrupted = random.Random(0), 0
for i in range(40):
    t = threading.Timer(rng.uniform(0.0005, 0.02), lambda: os.kill(os.getpid(), signal.SIGINT))
    try:
        t.start()  # inside the try: on a loaded machine the signal can land this early
        for _ in range(300):  # bounded: an interrupt landing in a finalizer is swallowed
            y.numpy() if i % 2 == 0 else s.submit()
        t.join()
    except KeyboardInterrupt:
        interrupted += 1
    t.join()
x2, y2 = dev.buffer(np.arange(10, dtype=np.float32)), dev.zeros(10)
s2 = gi.Scheme(dev); k.record(s2, "after", x2, y2, 3.0).over_1d(10); s2.submit()
assert (y2.numpy() == 3 * np.arange(10, dtype=np.float32)).all(), y2.numpy()
assert (y.numpy() == y.numpy()[0]).all()  # reads still agree with themselves
print("still works", interrupted)
"""


def test_ctrl_c_during_wgpu_reads_and_submits_leaves_the_device_usable():
    backend_or_skip("wgpu")
    out = run_child(SIGINT_CHILD, SRC)
    assert int(out.split("still works")[1]) > 0, out


# ---------------------------------------------------------------- hostile host-API inputs


def hostile_inputs(dev: gi.Device, mod) -> dict:
    """name -> a call that must raise a GoldyError (the probes of issue 14 and more)."""
    ax, un, tw = mod.axpy.prepare(dev), mod.uni.prepare(dev), mod.twice.prepare(dev)
    x, y = dev.buffer(np.ones(8, np.float32)), dev.buffer(np.ones(8, np.float32))

    def rec(k, *a):
        return k.record(gi.Scheme(dev), "p", *a)

    def uni(**field):
        return rec(un, y, {"a": 1.0, "n": 2, **field}).over_1d(8)

    def node_param(slot, value):
        s = gi.Scheme(dev)
        s.set_node_param(ax.record(s, "p", x, y, 1.0).over_1d(8), slot, value)

    t = dev.tensor(np.ones((2, 3), np.float32))
    return {
        "buffer ragged": lambda: dev.buffer([[1, 2], [3]]),
        "buffer object array": lambda: dev.buffer(np.array([1, "a"], dtype=object)),
        "buffer f64": lambda: dev.buffer(np.ones(3)),
        "buffer read_only str": lambda: dev.buffer(np.ones(3, np.float32), read_only="no"),
        "tensor ragged": lambda: dev.tensor([[1.0, 2.0], [3.0]]),
        "image ragged": lambda: dev.image([[1.0], [1.0, 2.0]]),
        "write ragged": lambda: x.write([[1.0], [2.0, 3.0]]),
        "empty nonsense dtype": lambda: dev.empty(4, "nonsense"),
        "zeros nonsense dtype": lambda: dev.zeros(4, "nonsense"),
        "zeros dtype list": lambda: dev.zeros(4, [1, 2]),
        "temporary nonsense dtype": lambda: gi.Scheme(dev).temporary_buffer(4, "nonsense"),
        "empty bool count": lambda: dev.empty(True),
        "zeros bool count": lambda: dev.zeros(True),
        "empty float count": lambda: dev.empty(4.0),
        "empty negative numpy count": lambda: dev.empty(np.int64(-4)),
        "zeros huge": lambda: dev.zeros(10 ** 30),
        "temporary huge": lambda: gi.Scheme(dev).temporary_buffer(10 ** 30),
        "groups int": lambda: rec(ax, x, y, 1.0).groups(5),
        "groups None": lambda: rec(ax, x, y, 1.0).groups(None),
        "invoke groups int": lambda: ax.invoke(x, y, 1.0).groups(3),
        "f32 2**200": lambda: rec(ax, x, y, 2 ** 200),
        "f32 10**400": lambda: rec(ax, x, y, 10 ** 400),
        "f32 1e39": lambda: rec(ax, x, y, 1e39),
        "f32 bool": lambda: rec(ax, x, y, True),
        "f32 complex": lambda: rec(ax, x, y, 1j),
        "TensorView ndarray": lambda: gi.TensorView(np.ones(3, np.float32), (3,), (1,)),
        "TensorView float offset": lambda: gi.TensorView(x, (2,), (1,), 1.5),
        "TensorView str shape": lambda: gi.TensorView(x, "ab", (1,)),
        "narrow None": lambda: t.narrow(0, None, 1),
        "slice float bounds": lambda: x[1.5:3],
        "slice str bounds": lambda: x["a":],
        "view float": lambda: x.view(1.5, 2),
        "view None": lambda: x.view(None, None),
        "load None": lambda: gi.load(None),
        "load_source None": lambda: gi.load_source(None, "x.rs"),
        "load_source filename None": lambda: gi.load_source(SRC, None),
        "load_kir None": lambda: gi.load_kir(None),
        "uniform f32 None": lambda: uni(a=None),
        "uniform f32 1e300": lambda: uni(a=1e300),
        "uniform f32 10**400": lambda: uni(a=10 ** 400),
        "uniform u32 float": lambda: uni(n=1.5),
        "set_node_param slot 1.5": lambda: node_param(1.5, 2.0),
        "set_node_param slot True": lambda: node_param(True, 2.0),
        "set_node_param slot None": lambda: node_param(None, 2.0),
        "set_node_param 10**400": lambda: node_param(2, 10 ** 400),
        "prepare checks str": lambda: mod.axpy.prepare(dev, checks="no"),
        "invocation record None": lambda: ax.invoke(x, y, 1.0).over_1d(8).record(None, "p"),
        "invocation label int": lambda: ax.invoke(x, y, 1.0).over_1d(8).record(gi.Scheme(dev), 5),
        "fused None": lambda: gi.FusedKernel.prepare(dev, None),
        "automatic fusion str": lambda: gi.Scheme(dev).set_automatic_fusion("no"),
        "tensor for a scalar": lambda: rec(tw, 5),
    }


@pytest.mark.parametrize("backend", BACKENDS)
def test_hostile_host_inputs_are_goldy_errors(backend, mod):
    dev = device(backend)
    escaped = {}
    for name, call in hostile_inputs(dev, mod).items():
        try:
            call()
            escaped[name] = "accepted"
        except gi.GoldyError:
            pass
        except Exception as e:  # what the issue is about
            escaped[name] = f"{type(e).__name__}: {e}"
    assert not escaped, escaped
    still_works(dev, mod)


def test_what_hostile_inputs_are_told(mod):
    dev = device("cpu")
    ax = mod.axpy.prepare(dev)
    x = dev.buffer(np.ones(8, np.float32))
    with pytest.raises(gi.BindingError, match=r"device.buffer: expected an array .*list"):
        dev.buffer([[1, 2], [3]])
    with pytest.raises(gi.BindingError, match=r"device.empty: 'nonsense' is not a dtype"):
        dev.empty(4, "nonsense")
    with pytest.raises(gi.BindingError, match=r"parameter `a` \(f32\): value .* out of range for f32"):
        ax.record(gi.Scheme(dev), "p", x, x, 2 ** 200)
    with pytest.raises(gi.GridError, match=r"groups expects \(x, y, z\), got 5"):
        ax.record(gi.Scheme(dev), "p", x, x, 1.0).groups(5)
    with pytest.raises(gi.BindingError, match="expects a device Buffer, got ndarray"):
        gi.TensorView(np.ones(3, np.float32), (3,), (1,))
    s = gi.Scheme(dev)
    node = ax.record(s, "p", x, dev.buffer(np.ones(8, np.float32)), 1.0).over_1d(8)
    with pytest.raises(gi.BindingError, match="parameter slot: expected an integer, got float 1.5"):
        s.set_node_param(node, 1.5, 3.0)
    with pytest.raises(gi.BindingError, match=r"load: expected a path"):
        gi.load(None)


# ---------------------------------------------------------------- silent wrong answers


@pytest.mark.parametrize("backend", BACKENDS + ["cuda"])
def test_softmax_past_the_end_of_its_buffer_faults(backend, mod):
    """A row reaching past the buffer (base + count = 30 of 20 elements) is a KernelFault
    with checks on, at the call's Rust line; in range, the row is right (sums to 1)."""
    dev = device(backend)
    k = mod.softmax16.prepare(dev)
    rng = np.random.default_rng(14)
    buf = dev.buffer(rng.standard_normal(20).astype(np.float32))
    s = gi.Scheme(dev)
    k.record(s, "past the end", buf, 10, 20).over_1d(16)
    with pytest.raises(gi.KernelFault, match=r"abuse.rs:\d+:\d+: parameter `buf` indexed at 2\d, but its length is 20"):
        s.submit()
    data = rng.standard_normal(20).astype(np.float32)
    buf.write(data)
    s = gi.Scheme(dev)
    k.record(s, "in range", buf, 4, 16).over_1d(16)
    s.submit()
    got = buf.numpy()
    np.testing.assert_array_equal(got[:4], data[:4])
    want = np.exp(data[4:] - data[4:].max())
    np.testing.assert_allclose(got[4:], want / want.sum(), rtol=1e-5, atol=1e-7)
    unchecked = mod.softmax16.prepare(dev, checks=False)
    s = gi.Scheme(dev)
    unchecked.record(s, "unchecked", buf, 10, 20).over_1d(16)
    s.submit()  # checks off: no fault (the documented out-of-range rule, no error word)


@pytest.mark.parametrize("backend", BACKENDS + ["cuda"])
def test_tensor_layouts_past_u32_are_refused_at_record(backend, mod):
    dev = device(backend)
    tl = mod.tlen.prepare(dev)
    row = dev.tensor(np.ones((1, 3), np.float32))
    y = dev.buffer(np.ones(8, np.float32))
    out = dev.zeros(1, np.uint32)
    for view in (gi.TensorView(y, (2 ** 32 + 5,), (0,), 0),  # one extent past u32
                 gi.TensorView(y, (2 ** 16, 2 ** 16), (0, 0), 0),  # numel = 2^32
                 row.broadcast_to((2 ** 40, 3))):
        with pytest.raises(gi.BindingError, match="u32 layout record"):
            tl.record(gi.Scheme(dev), "wide", view, out)
    s = gi.Scheme(dev)  # 2^31 elements: fits, and the kernel sees all of them
    tl.record(s, "fits", gi.TensorView(y, (2 ** 16, 2 ** 15), (0, 0), 0), out).over_1d(1)
    s.submit()
    assert int(out.numpy()[0]) == 2 ** 31


@pytest.mark.parametrize("backend", BACKENDS + ["cuda"])
def test_grids_past_u32_threads_per_axis_are_one_grid_error(backend, mod):
    dev = device(backend)
    ax = mod.axpy.prepare(dev)
    x = dev.buffer(np.ones(8, np.float32))
    y = dev.buffer(np.ones(8, np.float32))
    msg = r"`global_id\(\)` is u32: at most 2\^32 threads along each axis"
    with pytest.raises(gi.GridError, match=msg):
        ax.record(gi.Scheme(dev), "p", x, y, 1.0).over_1d(2 ** 33)
    with pytest.raises(gi.GridError, match=msg):
        ax.record(gi.Scheme(dev), "p", x, y, 1.0).groups((2 ** 26 + 1, 1, 1))
    with pytest.raises(gi.GridError, match=msg):
        ax.invoke(x, y, 1.0).over_1d(2 ** 32 + 1)


# ---------------------------------------------------------------- memory


LEAK_CHILD = r"""
import gc, sys, numpy as np, goldy_import as gi
mod = gi.load_source(sys.argv[2], "leak.rs")
dev = gi.Device(sys.argv[1])
k = mod.axpy.prepare(dev)
x, y = dev.buffer(np.ones(64, np.float32)), dev.buffer(np.ones(64, np.float32))
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * 4096
def record_and_drop(n):
    for _ in range(n):
        s = gi.Scheme(dev)
        k.record(s, "dropped", x, y, 1.0).over_1d(64)
    gc.collect()
record_and_drop(300)  # warm
before = rss()
record_and_drop(2000)
print("per scheme", (rss() - before) / 2000)
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_schemes_recorded_and_dropped_unsubmitted_leave_nothing(backend):
    """RSS over 2000 schemes recorded and dropped without a submit: wgpu held ~3 KB each."""
    backend_or_skip(backend)
    if not os.path.exists("/proc/self/statm"):
        pytest.skip("needs /proc to read the resident set")
    out = run_child(LEAK_CHILD, backend, SRC)
    per = float(out.split("per scheme")[1])
    assert per < 512, f"{backend}: {per:.0f} bytes per dropped scheme"
