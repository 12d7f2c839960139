"""The fresh-Scheme path's shortcuts (issue 17: a new Scheme + record + submit) keep every
check: $GOLDY_SPECIALIZE / $GOLDY_FUSION changed between schemes are honoured (their
readers are memoised by the raw value only), a record of the very same argument objects
after a free is refused naming the parameter, a new scalar object reaches the kernel, and
the CUDA backend's packed arguments follow a change of its batching threshold. Checked
against the CPU oracle on fresh random data."""

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.runtime import eager

from fake_cuda import fake  # noqa: F401  (a fixture)
from oracle import assert_same, backend_or_skip, device

SRC = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn axpy(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i] + y[i]; }
}
"""
BACKENDS = ["cpu", "wgpu", "slang", "cuda"]


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, "host_fresh.rs")


def test_env_setting_follows_the_variable(monkeypatch):
    calls = []

    def read():
        calls.append(1)
        return len(calls)

    monkeypatch.setenv("GOLDY_TEST_SETTING", "a")
    first = eager.env_setting("GOLDY_TEST_SETTING", read)
    assert eager.env_setting("GOLDY_TEST_SETTING", read) == first and len(calls) == 1  # memoised
    monkeypatch.setenv("GOLDY_TEST_SETTING", "b")
    assert eager.env_setting("GOLDY_TEST_SETTING", read) == 2  # a new value is read again
    monkeypatch.delenv("GOLDY_TEST_SETTING")
    assert eager.env_setting("GOLDY_TEST_SETTING", read) == 3


def test_fresh_schemes_read_specialization_and_fusion_settings_each_time(monkeypatch, mod):
    dev = gi.Device("cpu")
    k = mod.axpy.prepare(dev)
    x, y = dev.buffer(np.ones(64, np.float32)), dev.zeros(64)
    for env, want in (("off", "off"), ("1", "on"), ("", "facts")):
        monkeypatch.setenv("GOLDY_SPECIALIZE", env)
        s = gi.Scheme(dev)
        k.record(s, "n", x, y, 1.0).over_1d(64)
        s.submit()
        assert s._specialize == want
    for env, want in (("1", True), ("0", False)):
        monkeypatch.setenv("GOLDY_FUSION", env)
        s = gi.Scheme(dev)
        k.record(s, "one", x, y, 1.0).over_1d(64)
        s.submit()
        assert s._auto_fusion is None  # one node: nothing to fuse, not read
        k.record(s, "two", x, y, 1.0).over_1d(64)
        s.submit()
        assert s._auto_fusion is want


@pytest.mark.parametrize("backend", BACKENDS)
def test_records_of_the_same_objects(backend, mod):
    """The same argument objects recorded again reuse the previous binding; a new scalar
    object with another value reaches the kernel; a free in between is refused."""
    rng = np.random.default_rng()
    x0, y0 = rng.standard_normal(200).astype(np.float32), rng.standard_normal(200).astype(np.float32)
    scalars = [np.float32(rng.standard_normal()).item() for _ in range(3)]

    def run(dev):
        k = mod.axpy.prepare(dev)
        x, y = dev.buffer(x0), dev.buffer(np.full(200, np.nan, np.float32))
        y.write(y0)
        for a in scalars + [scalars[-1]]:  # the last one twice: the very same objects
            s = gi.Scheme(dev)
            k.record(s, "axpy", x, y, a).over_1d(200)
            s.submit()
        out = y.numpy()
        x.free()
        s = gi.Scheme(dev)
        with pytest.raises(gi.BindingError, match=r"kernel `axpy` parameter `x`.*freed"):
            k.record(s, "axpy", x, y, scalars[-1]).over_1d(200)
        return out

    want = run(gi.Device("cpu"))
    backend_or_skip(backend)
    assert_same(run(device(backend)), want, what=f"{backend} records of the same objects")


def test_fake_packed_arguments_follow_the_batching_threshold(fake, mod):
    drv, dev = fake
    k = mod.axpy.prepare(dev)
    x, y = dev.buffer(np.ones(64 * 8, np.float32)), dev.zeros(64 * 8)
    s = gi.Scheme(dev)
    plain = k.record(s, "plain", x, y, 1.0).over_1d(64 * 8)
    assert not plain.dispatch.state.batched
    saved, dev.backend.batch_min_threads = dev.backend.batch_min_threads, 0
    try:
        batched = k.record(s, "batched", x, y, 1.0).over_1d(64 * 8)  # same arguments and grid
        assert batched.dispatch.state.batched
    finally:
        dev.backend.batch_min_threads = saved
    assert plain.dispatch.state.block is not batched.dispatch.state.block  # each node its own block
