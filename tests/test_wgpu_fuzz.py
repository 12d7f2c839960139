"""The differential fuzz (tests/test_differential_fuzz.py) over many workgroups on wgpu:
random kernels from tests/kernel_gen.py at 700 and 1000 threads (up to 125 workgroups, the
last one partial), so that every workgroup's collectives, exchanges and softmax row run
next to many others. Compared with the CPU oracle bit for bit; a failure prints the seed
and the shrunk kernel, and GOLDY_FUZZ_SEED / GOLDY_FUZZ_EXAMPLES work as there."""

from hypothesis import given, seed
from hypothesis import strategies as st

import kernel_gen as G
from oracle import backend_or_skip
from test_differential_fuzz import SEED, budget, compare, import_clean


def test_many_workgroups_match_the_cpu_oracle():
    backend_or_skip("wgpu")

    @seed(SEED)
    @budget(2)
    @given(G.kernels(avoid=G.avoided("wgpu")), st.sampled_from([700, 1000]), st.integers(0, 2**32 - 1))
    def run(gk, n, data_seed):
        import_clean(gk)
        compare("wgpu", gk, n, data_seed)

    run()
