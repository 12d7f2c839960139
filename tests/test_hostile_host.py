"""Hostile host input on every backend that runs here (cpu, wgpu, slang): allocations
beyond what the device allows, freed buffers, schemes of a closed device, and two Python
threads recording into two schemes of one device at once. Each must end in a GoldyError
or in correct results, never in a crash, a hang or another exception type, and the
process must keep working afterwards (a fresh kernel run gives the right answer).

tests/test_runtime_core.py checks the CPU's error messages in detail; this file checks
the same contract on each backend, plus what those tests leave out.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import goldy_import as gi

from oracle import backend_or_skip, device

BACKENDS = ["cpu", "wgpu", "slang"]
JOIN_SECONDS = 240  # a thread still running after this is a hang

SRC = """use goldy::gpu;
/// y = a * x + y
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn axpy(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i] + y[i]; }
}
/// t = t * 2 + 1
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn twice(t: gpu::TensorMut<u32>) {
    let i = gpu::global_id().x;
    if i < t.len() { t[i] = t[i] * 2 + 1; }
}
"""


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, "hostile.rs")


def fresh_thread_kernel(backend: str, tag: str):
    """A kernel no device has compiled yet (its name is new), so threads race on prepare."""
    name = f"fresh_{backend}_{tag}"
    src = SRC.replace("fn axpy(", f"fn {name}(")
    return getattr(gi.load_source(src, f"{name}.rs"), name)


def still_works(dev: gi.Device, mod) -> None:
    """The process and this device keep working: a kernel runs and gives the right answer."""
    x = np.arange(100, dtype=np.float32)
    bx, by = dev.buffer(x), dev.buffer(np.ones(100, np.float32))
    s = gi.Scheme(dev)
    mod.axpy.prepare(dev).record(s, "check", bx, by, 2.0).over_1d(100)
    s.submit()
    np.testing.assert_array_equal(by.numpy(), np.float32(2) * x + np.float32(1))


def goldy_or_nothing(fn) -> object:
    """Runs fn; a GoldyError is an accepted outcome (returned), anything else propagates."""
    try:
        return fn()
    except gi.GoldyError as e:
        return e


# ---------------------------------------------------------------- allocation


@pytest.mark.parametrize("backend", BACKENDS)
def test_buffers_beyond_the_device_limit(backend, mod):
    dev = device(backend)
    limit = dev.limits.max_buffer_bytes
    with pytest.raises(gi.DeviceLimitError, match="max_buffer_bytes"):
        dev.empty(limit // 4 + 1, np.float32)
    with pytest.raises(gi.DeviceLimitError, match="max_buffer_bytes"):
        dev.empty(limit // 4 + 1, np.uint32)
    if limit <= 1 << 28:  # small enough to build the host array
        with pytest.raises(gi.DeviceLimitError, match="max_buffer_bytes"):
            dev.buffer(np.zeros(limit // 4 + 1, np.float32))
    # tensors and zero-filled buffers of that size: an error, never a MemoryError
    with pytest.raises(gi.DeviceLimitError):
        dev.tensor_zeros((limit // 4 + 1,), np.float32)
    with pytest.raises(gi.DeviceLimitError):
        dev.zeros(limit // 4 + 1, np.float32)
    with pytest.raises(gi.BindingError):
        dev.empty(-1)
    with pytest.raises(gi.BindingError):
        dev.zeros(-1)
    with pytest.raises(gi.BindingError):
        dev.tensor_zeros((2, -3))
    still_works(dev, mod)


ALLOC_CHILD = r"""
import resource, sys
import numpy as np
import goldy_import as gi
resource.setrlimit(resource.RLIMIT_AS, (16 << 30, 16 << 30))  # the machine "has" 16 GiB
dev = gi.Device(sys.argv[1])
for make in (lambda: dev.empty(1 << 37, np.float32), lambda: dev.zeros(1 << 37, np.float32),
             lambda: dev.tensor_zeros((1 << 20, 1 << 17), np.float32)):
    try:
        make()
        print("allocated")  # also fine: the memory was there after all
    except gi.GoldyError as e:
        print("GoldyError", type(e).__name__)
x = dev.buffer(np.arange(10, dtype=np.float32))
y = dev.zeros(10, np.float32)
k = gi.load_source(sys.argv[2], "child.rs").axpy.prepare(dev)
s = gi.Scheme(dev)
k.record(s, "after", x, y, 3.0).over_1d(10)
s.submit()
assert (y.numpy() == 3 * np.arange(10, dtype=np.float32)).all(), y.numpy()
print("still works")
"""


@pytest.mark.parametrize("backend", ["cpu", "slang"])  # wgpu's own limit (above) is far below memory
def test_allocation_the_machine_cannot_hold(backend):
    """512 GiB is within the 1 TiB these backends advertise but beyond this process's
    memory: a GoldyError, and the process goes on (in a child with a 16 GiB address-space
    limit, so the outcome does not depend on the machine's memory)."""
    backend_or_skip(backend)
    r = subprocess.run([sys.executable, "-c", ALLOC_CHILD, backend, SRC], capture_output=True, text=True,
                       timeout=JOIN_SECONDS, cwd=os.path.dirname(os.path.abspath(__file__)))
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [ln for ln in r.stdout.splitlines() if ln in ("allocated", "still works") or ln.startswith("GoldyError")]
    assert lines == ["GoldyError DeviceLimitError"] * 3 + ["still works"], r.stdout + r.stderr


# ---------------------------------------------------------------- freed buffers


@pytest.mark.parametrize("backend", BACKENDS)
def test_freed_buffers(backend, mod):
    dev = device(backend)
    k = mod.axpy.prepare(dev)
    x, y = dev.buffer(np.ones(10, np.float32)), dev.buffer(np.ones(10, np.float32))
    view = x[2:5]
    s = gi.Scheme(dev)
    k.record(s, "before", x, y, 1.0).over_1d(10)
    x.free()
    with pytest.raises(gi.BindingError, match="freed"):
        s.submit()  # recorded before the free
    with pytest.raises(gi.BindingError, match="freed"):
        k.record(gi.Scheme(dev), "after", x, y, 1.0)
    with pytest.raises(gi.BindingError, match="freed"):
        k.record(gi.Scheme(dev), "view", view, y[0:3], 1.0)  # a view shares the allocation
    with pytest.raises(gi.BindingError, match="freed"):
        x.numpy()
    with pytest.raises(gi.BindingError, match="freed"):
        view.write(np.zeros(3, np.float32))
    x.free()  # twice: harmless
    np.testing.assert_array_equal(y.numpy(), np.ones(10, np.float32))  # nothing ran
    # a freed tensor's buffer
    t = dev.tensor(np.arange(6, dtype=np.uint32).reshape(2, 3))
    tw = mod.twice.prepare(dev)
    s2 = gi.Scheme(dev)
    tw.record(s2, "tensor", t).over_1d(6)
    t.buffer.free()
    with pytest.raises(gi.BindingError, match="freed"):
        s2.submit()
    with pytest.raises(gi.BindingError, match="freed"):
        tw.record(gi.Scheme(dev), "tensor again", t)
    still_works(dev, mod)


# ---------------------------------------------------------------- closed devices


@pytest.mark.parametrize("backend", BACKENDS)
def test_schemes_of_a_closed_device(backend, mod):
    backend_or_skip(backend)
    other = device(backend)  # a second device of the same backend must not notice
    dev = gi.Device(backend)
    k = mod.axpy.prepare(dev)
    x, y = dev.buffer(np.ones(10, np.float32)), dev.buffer(np.ones(10, np.float32))
    s = gi.Scheme(dev)
    k.record(s, "recorded", x, y, 1.0).over_1d(10)
    s.submit()
    dev.close()
    with pytest.raises(gi.GoldyError, match="closed"):
        s.submit()
    with pytest.raises(gi.GoldyError, match="closed"):
        s.submit()  # and again
    with pytest.raises(gi.GoldyError, match="closed"):
        y.numpy()
    with pytest.raises(gi.GoldyError, match="closed"):
        mod.axpy.prepare(dev)
    with pytest.raises(gi.GoldyError, match="closed"):
        dev.buffer(np.ones(3, np.float32))
    # recording into a new scheme of the closed device: refused now or at submit
    fresh = gi.Scheme(dev)
    if not isinstance(goldy_or_nothing(lambda: k.record(fresh, "late", x, y, 1.0).over_1d(10)), gi.GoldyError):
        with pytest.raises(gi.GoldyError, match="closed"):
            fresh.submit()
    x.free()  # freeing after close is harmless
    dev.close()  # closing twice too
    still_works(other, mod)
    reopened = gi.Device(backend)
    still_works(reopened, mod)
    reopened.close()


# ---------------------------------------------------------------- threads


def run_threads(work, n: int = 2) -> list:
    """Runs work(tid, barrier) on n threads released together; returns their exceptions.
    A thread that does not finish in JOIN_SECONDS fails the test (a hang)."""
    barrier = threading.Barrier(n)
    errors: list = []

    def wrap(tid):
        try:
            work(tid, barrier)
        except BaseException as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=wrap, args=(t,), daemon=True) for t in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(JOIN_SECONDS)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return errors


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_threads_record_and_submit_two_schemes(backend, mod):
    dev = device(backend)
    fresh = fresh_thread_kernel(backend, "record")  # both threads prepare it first, together
    results: dict = {}

    def work(tid, barrier):
        n = 300 + 37 * tid
        x = np.random.default_rng(tid).standard_normal(n).astype(np.float32)
        y = np.random.default_rng(tid + 10).standard_normal(n).astype(np.float32)
        bx, by = dev.buffer(x), dev.buffer(y)
        barrier.wait()
        k = fresh.prepare(dev)
        s = gi.Scheme(dev)
        for j in range(12):
            k.record(s, f"t{tid}.{j}", bx, by, float(tid + 1)).over_1d(n)
        barrier.wait()
        for _ in range(2):
            s.submit()
        results[tid] = (by.numpy(), x, y, float(tid + 1))

    errors = run_threads(work)
    assert not errors, errors
    for tid, (got, x, y, a) in results.items():
        want = y.copy()
        for _ in range(24):
            want = np.float32(a) * x + want
        np.testing.assert_array_equal(got, want, err_msg=f"thread {tid}")
    still_works(dev, mod)


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_thread_records_while_another_submits(backend, mod):
    dev = device(backend)
    k = mod.axpy.prepare(dev)
    n = 256
    x = np.arange(n, dtype=np.float32)
    shared_x = dev.buffer(x)
    out: dict = {}

    def work(tid, barrier):
        by = dev.buffer(np.zeros(n, np.float32))
        s = gi.Scheme(dev)
        if tid == 0:  # submits a short scheme over and over
            k.record(s, "submitter", shared_x, by, 1.0).over_1d(n)
            barrier.wait()
            for _ in range(30):
                s.submit()
        else:  # records many nodes meanwhile, then submits once
            barrier.wait()
            for j in range(30):
                k.record(s, f"recorder.{j}", shared_x, by, 1.0).over_1d(n)
            s.submit()
        out[tid] = by.numpy()

    errors = run_threads(work)
    assert not errors, errors
    for tid in (0, 1):
        np.testing.assert_array_equal(out[tid], np.float32(30) * x, err_msg=f"thread {tid}")
    still_works(dev, mod)
