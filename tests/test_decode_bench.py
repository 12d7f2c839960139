"""Smoke test of benchmarks/decode.py at a tiny size: the recorded decode step replayed per
token (set_node_param for token, pos and the cache offsets) against the plain-numpy model,
and every other backend bit for bit against the cpu backend, with and without automatic
fusion; and its greedy form, whose argmax feeds the next step on the device, against the
argmax of the cpu backend's logits."""

import importlib.util
import os
import sys

import numpy as np
import pytest

import goldy_import as gi
from oracle import backend_or_skip, device

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("decode_bench", os.path.join(HERE, "..", "benchmarks", "decode.py"))
D = sys.modules["decode_bench"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(D)

TINY = D.Config(dim=32, layers=2, heads=2, hidden=48, vocab=100, seq=8)


@pytest.mark.parametrize("fusion", [False, True])
@pytest.mark.parametrize("backend", ["cpu", "wgpu"])
def test_decode_step_matches_numpy_and_the_cpu_backend(backend, fusion):
    backend_or_skip(backend)
    D.check(TINY, D.weights(TINY, seed=3), device(backend), steps=4, fusion=fusion)


@pytest.mark.parametrize("fusion,specialize", [(False, False), (True, True)])
@pytest.mark.parametrize("backend", ["cpu", "wgpu", "cuda"])
def test_greedy_decoding_on_the_device_picks_the_logits_argmax(backend, fusion, specialize):
    backend_or_skip(backend)
    D.check_greedy(TINY, D.weights(TINY, seed=3), device(backend), steps=3, fusion=fusion, specialize=specialize)


def test_argmax_takes_the_first_of_equal_largest_and_never_a_nan():
    dev = gi.Device("cpu")
    k = gi.load(D.os.path.join(D.HERE, "llama_decode.rs"), kernels=["argmax"]).argmax.prepare(dev)
    rng = np.random.default_rng(5)
    for n in (1, 7, 1024, 1025, 3000):
        x = rng.standard_normal(n).astype(np.float32)
        x[n // 3] = x[n - 1] = np.float32(9)  # equal largest: the first wins
        x[0] = np.nan
        tok, hist = dev.zeros(1, np.uint32), dev.zeros(4, np.uint32)
        s = gi.Scheme(dev)
        k.record(s, "argmax", dev.buffer(x), tok, hist, n, 2).groups((1, 1, 1))
        s.submit()
        want = 0 if n == 1 else n // 3  # a lone NaN: no value is larger, index 0 stays
        assert tok.numpy()[0] == want and hist.numpy()[2] == want


def test_decode_step_records_three_plus_fourteen_per_layer():
    dec = D.GoldyDecoder(gi.Device("cpu"), TINY, D.weights(TINY))
    assert dec.dispatches == 3 + 14 * TINY.layers


def test_a_wrong_model_is_caught():
    W = D.weights(TINY, seed=3)
    dec, ref = D.GoldyDecoder(gi.Device("cpu"), TINY, W), D.NumpyDecoder(TINY, W)
    W["wcls"][0, 0] += 1.0  # the reference sees the change, the recorded buffers do not
    with pytest.raises(AssertionError):
        g, r = dec.step(1, 0), ref.step(1, 0)
        assert np.abs(g - r).max() <= D.RTOL * np.abs(r).max()
