"""Everything the suite already runs on the CPU oracle runs race free under racecheck:
every example of rust_examples/, every CPU case of the collective tests
(tests/test_collectives.py, each parametrisation) and a budget of generated kernels
(tests/kernel_gen.py). A kernel that races fails here with RaceError and both Rust lines,
instead of showing up as a flaky mismatch on some GPU. The racecheck build also computes
exactly what the plain CPU build computes (checked bit for bit on the generated kernels).
"""

from __future__ import annotations

import inspect
import itertools

import numpy as np
import pytest
from hypothesis import given, seed

import goldy_import as gi
import kernel_gen as G
import oracle
import test_collectives
import test_examples
from goldy_import.examples import EXAMPLES
from test_differential_fuzz import SEED, budget, fuzz_cases, import_clean, trapping_checks


@pytest.fixture
def racecheck_oracle(monkeypatch):
    """The oracle's shared CPU device, replaced by a racecheck one for the test."""
    dev = gi.Device("cpu", racecheck=True)
    monkeypatch.setitem(oracle._devices, "cpu", dev)
    yield dev
    assert dev._kernel_cache, "the test ran nothing on the racecheck device"


@pytest.mark.parametrize("ex", EXAMPLES, ids=test_examples.IDS)
def test_every_example_is_race_free(racecheck_oracle, ex):
    test_examples.test_cpu_backend_matches_numpy_reference(ex)


def _cpu_cases(module):
    """(test function, keyword arguments) for every CPU case of `module`'s backend tests."""
    for name, fn in sorted(vars(module).items()):
        if not name.startswith("test_") or "backend" not in inspect.signature(fn).parameters:
            continue
        axes = {"backend": ["cpu"]}
        for mark in getattr(fn, "pytestmark", []):
            if mark.name == "parametrize" and mark.args[0] != "backend":
                axes[mark.args[0]] = list(mark.args[1])
        for values in itertools.product(*axes.values()):
            kwargs = dict(zip(axes, values))
            yield pytest.param(fn, kwargs, id=name + "".join(f"-{v}" for k, v in kwargs.items() if k != "backend"))


@pytest.mark.parametrize("fn, kwargs", list(_cpu_cases(test_collectives)))
def test_every_collective_case_is_race_free(racecheck_oracle, fn, kwargs):
    fn(**kwargs)


def test_generated_kernels_are_race_free_and_compute_the_same(racecheck_oracle):
    plain = gi.Device("cpu", racecheck=False)

    @seed(SEED)
    @budget(8)
    @given(fuzz_cases("cpu"))
    def run(case):
        gk, n, data_seed = case
        import_clean(gk)
        args = gk.inputs(n, data_seed)
        with trapping_checks(not gk.unchecked):
            got = oracle.run_kernel("cpu", gk.source, G.NAME, args, ("over_1d", n))
            oracle._devices["cpu"], saved = plain, oracle._devices["cpu"]
            try:
                want = oracle.run_kernel("cpu", gk.source, G.NAME, args, ("over_1d", n))
            finally:
                oracle._devices["cpu"] = saved
        for g, w in zip(got, want):
            assert (g is None) == (w is None)
            assert g is None or np.array_equal(g.view(np.uint8), w.view(np.uint8)), gk.source

    run()
