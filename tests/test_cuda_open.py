"""`gi.Device("cuda")` opens the device on a background thread (runtime/cuda_init.py, issue
17's cold start): it returns before cuInit has answered, the first call that needs the
device waits, an init failure is raised there (and at every later use, and at close when
nobody saw it), two threads' first uses open it once, and each thread that uses it has the
context current. Against tests/fake_cuda.py's driver, whose cuInit waits for a gate."""

import threading

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.runtime import cuda as C

from fake_cuda import CUresult, FakeDriver

SRC = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn twice(x: &[f32], y: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = x[i] * 2.0; }
}
"""


@pytest.fixture
def drv(monkeypatch):
    d = FakeDriver()
    d.check_current = True
    d.init_gate = threading.Event()
    monkeypatch.setattr(C, "_driver", lambda: d)
    yield d
    d.init_gate.set()  # never leave an opening thread waiting


def test_device_returns_before_the_driver_answers(drv):
    dev = gi.Device("cuda")  # cuInit is held at its gate: a synchronous open would hang here
    assert dev.name == "cuda:0" and "cuDevicePrimaryCtxRetain" not in drv.calls
    mod = gi.load_source(SRC, "open.rs")  # work that overlaps the driver's start
    drv.init_gate.set()
    x = np.random.default_rng().standard_normal(100).astype(np.float32)
    bx = dev.buffer(x)  # the first use waits for the opening
    assert drv.init_threads == ["goldy-cuda-init", "goldy-cuda-init"]  # cuInit and the context: not this thread
    assert drv.current.ctx == 1  # made current on this thread too
    pk = mod.twice.prepare(dev)
    by = dev.buffer(np.full(100, np.nan, np.float32))
    s = gi.Scheme(dev)
    pk.record(s, "twice", bx, by).over_1d(100)
    s.submit()
    assert "Fake H200" in dev.describe()
    dev.close()


def test_init_failure_is_raised_at_first_use(drv):
    drv.init_error = CUresult.CUDA_ERROR_INVALID_VALUE
    drv.init_gate.set()
    dev = gi.Device("cuda")
    for _ in range(2):  # every use, not only the first
        with pytest.raises(gi.BackendUnavailable, match="CUDA driver unusable: CUDA call cuInit failed"):
            dev.buffer(np.zeros(4, np.float32))
    with pytest.raises(gi.BackendUnavailable, match="CUDA driver unusable"):
        dev.limits
    dev.close()  # seen already: closing does not raise it again
    # once this process knows cuInit fails, a new device fails at once
    with pytest.raises(gi.BackendUnavailable, match="CUDA driver unusable"):
        gi.Device("cuda")


def test_an_unseen_failure_is_raised_at_close(drv):
    drv.init_gate.set()
    dev = gi.Device("cuda:3")  # the fake has one device
    with pytest.raises(gi.BackendUnavailable, match=r"no CUDA device 3 \(`cuda:3`\): this machine has 1"):
        dev.close()
    dev.close()  # closed now


def test_an_ordinal_is_checked_at_once_after_the_first_device(drv):
    drv.init_gate.set()
    dev = gi.Device("cuda:0")
    dev.buffer(np.zeros(4, np.float32))
    with pytest.raises(gi.BackendUnavailable, match=r"no CUDA device 1 \(`cuda:1`\): this machine has 1"):
        gi.Device("cuda:1")
    dev.close()


def test_two_threads_first_use_opens_once(drv):
    dev = gi.Device("cuda")
    x = np.random.default_rng().standard_normal(64).astype(np.float32)
    got, errors, started = {}, [], threading.Barrier(3)

    def use(name):
        try:
            started.wait()
            got[name] = dev.buffer(x).numpy()  # needs the context current on this thread
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=use, args=(n,), name=n) for n in ("first", "second")]
    for t in threads:
        t.start()
    started.wait()
    drv.init_gate.set()
    for t in threads:
        t.join(10)
    assert not errors, errors
    assert drv.count("cuDevicePrimaryCtxRetain") == 1 and drv.count("cuInit") == 1
    for name in ("first", "second"):
        np.testing.assert_array_equal(got[name], x)
    dev.close()


def test_context_current_on_a_second_thread(drv):
    drv.init_gate.set()
    dev = gi.Device("cuda")
    mod = gi.load_source(SRC, "open.rs")
    pk = mod.twice.prepare(dev)  # opened on this thread
    x = np.random.default_rng().standard_normal(100).astype(np.float32)
    out, errors = [], []

    def other():
        try:
            drv.current.ctx = None  # (a fresh thread has none)
            bx, by = dev.buffer(x), dev.buffer(np.full(100, np.nan, np.float32))
            s = gi.Scheme(dev)
            pk.record(s, "twice", bx, by).over_1d(100)
            s.submit()
            out.append(drv.current.ctx)
        except BaseException as e:
            errors.append(e)

    t = threading.Thread(target=other)
    t.start()
    t.join(10)
    assert not errors, errors
    assert out == [1]
    dev.close()


def test_a_second_device_waits_for_the_first_ones_cuinit(drv):
    first = gi.Device("cuda:0")  # its opening thread holds cuInit at the gate
    result = []
    t = threading.Thread(target=lambda: result.append(_open_or_error("cuda:1")))
    t.start()
    t.join(0.2)
    assert t.is_alive()  # waiting for the answer of the first device's cuInit
    drv.init_gate.set()
    t.join(10)
    assert result == ["no CUDA device 1 (`cuda:1`): this machine has 1 (cuda:0 .. cuda:0)"]
    assert drv.count("cuInit") == 1
    first.close()


def _open_or_error(name):
    try:
        gi.Device(name).close()
        return "opened"
    except gi.BackendUnavailable as e:
        return str(e)


def test_an_attribute_the_opening_sets_waits_for_it(monkeypatch):
    """`backend.stream` (read by benchmarks and interop code) before the opening is done."""
    import goldy_import as gi
    from goldy_import.runtime import cuda
    drv = FakeDriver()
    monkeypatch.setattr(cuda, "_driver", lambda: drv)
    dev = gi.Device("cuda")
    try:
        assert dev.backend.stream is not None and dev.backend.ctx is not None
        with pytest.raises(AttributeError):
            dev.backend.no_such_attribute
    finally:
        dev.close()
