"""Smoke test of benchmarks/decode.py at a tiny size: the recorded decode step replayed per
token (set_node_param for token, pos and the cache offsets) against the plain-numpy model,
and every other backend bit for bit against the cpu backend, with and without automatic
fusion."""

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
