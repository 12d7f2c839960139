"""The CUDA backend's host cost without a GPU: cuda-python's driver replaced by no-op fakes.

    python benchmarks/host_stub.py [--reps 7] [--loops 1000] [--profile ROW]

`gi.Device("cuda")`, prepare, eager launches, submits and replays run end to end against
`StubDriver` (tests/fake_cuda.py's FakeDriver, whose calls on the launch and submit paths
answer success at once: no PTX parsing, no call log), so the rows of
benchmarks/host_overhead.py measure our own Python per call. Nothing runs, so results are
not checked. `--profile ROW` prints cProfile's top entries for one row instead.

Each row also gives the Python and C function calls per dispatch (sys.setprofile),
which, unlike time on a shared machine, does not move between runs.

What the real driver adds on top (the H200's figures minus these) is cuda-python's
wrappers and the driver itself. The wrappers are Cython: timed against a libcuda.so.1
whose every entry point returns at once, cuLaunchKernel costs 0.65 us on the 2-core
development machine (the same call through ctypes with argtypes: 2.5 us), so the
backend keeps calling cuda-python.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import time
from types import SimpleNamespace

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, HERE)

from fake_cuda import CUresult, FakeDriver  # noqa: E402

import host_overhead  # noqa: E402

OK = (CUresult.CUDA_SUCCESS,)


class StubDriver(FakeDriver):
    """FakeDriver with the hot calls (launches, graph replay and patching, events, waits,
    context switches) doing nothing, as a driver that returned at once would."""

    def __init__(self) -> None:
        super().__init__()
        self.mapped = True  # the H200's case: error words in mapped host memory

    def cuCtxSetCurrent(self, ctx):
        return OK

    def cuLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra):
        return OK

    def cuGraphAddKernelNode(self, graph, deps, ndeps, p):
        self.handles += 1
        return CUresult.CUDA_SUCCESS, self.handles

    def cuGraphInstantiate(self, graph, flags):
        self.handles += 1
        return CUresult.CUDA_SUCCESS, self.handles

    def cuGraphExecKernelNodeSetParams(self, exe, node, p):
        return OK

    def cuGraphLaunch(self, exe, stream):
        return OK

    def cuStreamSynchronize(self, s):
        return OK

    def cuEventCreate(self, flags):
        self.handles += 1
        return CUresult.CUDA_SUCCESS, self.handles

    def cuEventRecord(self, ev, stream):
        return OK

    def cuEventSynchronize(self, ev):
        return OK

    def cuMemsetD32Async(self, dst, value, n, stream):
        return OK

    def cuMemcpyDtoHAsync(self, dst, src, n, stream):
        return OK


# our own CPU time, best of the repeats: other processes' load on a shared machine does not count
host_overhead.clock, host_overhead.summary = time.process_time, min


def install() -> StubDriver:
    """Make the cuda backend use a fresh StubDriver (in this process, from now on)."""
    from goldy_import.runtime import cuda
    drv = StubDriver()
    cuda._driver = lambda: drv
    return drv


def calls_per(fn, n: int, per: int) -> float:
    """Python and C function calls per dispatch (sys.setprofile): deterministic, unlike time
    on a shared machine, so a change shows in it even when the timings drown in noise."""
    fn()
    count = [0]

    def tick(frame, event, arg):
        if event in ("call", "c_call"):
            count[0] += 1

    sys.setprofile(tick)
    try:
        for _ in range(n):
            fn()
    finally:
        sys.setprofile(None)
    return count[0] / n / per


def rows(reps: int, loops: int, burst: int = 100, n: int = 1024) -> dict:
    """Per row: (us per dispatch, function calls per dispatch)."""
    install()

    def measure(fn, calls, per):
        return host_overhead.per_call_us(fn, calls, reps, per=per), calls_per(fn, max(1, calls // 10), per)

    args = SimpleNamespace(backend="cuda", n=n, reps=reps, loops=loops, burst=burst, check=False, measure=measure)
    out = host_overhead.goldy_rows(args)
    out.pop("device"), out.pop("backend")
    return out


def profile(row: str, loops: int) -> None:
    install()
    prof = cProfile.Profile()

    def measure(fn, calls, per):
        fn()
        prof.enable()
        for _ in range(calls):
            fn()
        prof.disable()

    args = SimpleNamespace(backend="cuda", n=1024, reps=1, loops=loops, burst=100, check=False, only=row,
                           measure=measure)
    host_overhead.goldy_rows(args)
    pstats.Stats(prof).sort_stats("tottime").print_stats(30)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--loops", type=int, default=1000)
    ap.add_argument("--profile", default=None, help="a row name of host_overhead.py (e.g. 'queued launch')")
    args = ap.parse_args()
    if args.profile:
        profile(args.profile, args.loops)
        return 0
    ours = rows(args.reps, args.loops)
    print(f"# cuda backend on a no-op driver stub, per tiny dispatch: us (best of {args.reps}, CPU time), "
          f"function calls")
    print("| per tiny dispatch | us (stub) | calls |\n|---|---|---|")
    for row, (us, calls) in ours.items():
        print(f"| {row} | {us:.2f} | {calls:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
