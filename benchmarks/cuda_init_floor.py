"""The floor of a CUDA cold start on this machine, without goldy-import (issue 17).

    python3 benchmarks/cuda_init_floor.py [--repeat 5]

Fresh interpreters, each timing from its first line (seconds, best of --repeat):

- `bindings`: `from cuda.bindings import driver` (cuda-python's Cython module);
- `cuInit`, `context` (cuDeviceGet + cuDevicePrimaryCtxRetain + cuCtxSetCurrent), `stream`,
  `module` (cuModuleLoadData of a 1-instruction PTX kernel: the JIT's first use) through
  cuda-python, and `total` from the first line to the loaded module;
- the same cuInit and context through ctypes on libcuda.so.1 alone (no cuda-python):
  what a start that did not wait for cuda-python's import would pay.

benchmarks/cold_start.py's warm cuda `first` against these says how much of goldy-import's
cold start is the driver's and how much is ours.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

BINDINGS = r"""
import time, json
t0 = time.perf_counter()
from cuda.bindings import driver as d
t1 = time.perf_counter()
assert d.cuInit(0)[0] == d.CUresult.CUDA_SUCCESS
t2 = time.perf_counter()
dev = d.cuDeviceGet(0)[1]
ctx = d.cuDevicePrimaryCtxRetain(dev)[1]
d.cuCtxSetCurrent(ctx)
t3 = time.perf_counter()
s = d.cuStreamCreate(1)[1]
t4 = time.perf_counter()
ptx = b".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k() { ret; }\n"
err, mod = d.cuModuleLoadData(ptx)
assert err == d.CUresult.CUDA_SUCCESS, err
t5 = time.perf_counter()
print(json.dumps({"bindings": t1 - t0, "cuInit": t2 - t1, "context": t3 - t2, "stream": t4 - t3,
                  "module": t5 - t4, "total": t5 - t0}))
"""

CTYPES = r"""
import time, json, ctypes
t0 = time.perf_counter()
cu = ctypes.CDLL("libcuda.so.1")
t1 = time.perf_counter()
assert cu.cuInit(0) == 0
t2 = time.perf_counter()
dev, ctx = ctypes.c_int(), ctypes.c_void_p()
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0
t3 = time.perf_counter()
print(json.dumps({"dlopen": t1 - t0, "cuInit": t2 - t1, "context": t3 - t2, "total": t3 - t0}))
"""



def best(code: str, repeat: int) -> dict:
    runs = []
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise SystemExit(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}")
        runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
    return {k: min(r[k] for r in runs) for k in runs[0]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    for name, code in (("cuda-python", BINDINGS), ("ctypes", CTYPES)):
        row = best(code, args.repeat)
        print(f"{name:12} " + "  ".join(f"{k} {v:.4f}" for k, v in row.items()))


if __name__ == "__main__":
    main()
