"""Cold start: fresh processes from `python` to the first verified saxpy result, with an
empty disk cache (cold) and with the cache the cold run left (warm), per backend.

    python benchmarks/cold_start.py [--backends cpu,wgpu,cuda] [--repeat 3]

Each run is a new interpreter, in the order a user writes: `import numpy`, `import
goldy_import`, opening the device (`gi.Device`: on cuda it returns while the driver starts
on a background thread, runtime/cuda_init.py), `gi.load` of the example (the rest of the
package's modules load here, overlapping the driver's start), `prepare` (which waits for
the device where it is still opening), and `first`: the whole, from the first import to
one submit whose output is checked against numpy (poisoned first). The stages add up to
less than `first`: buffers, the submit and the check are in it too. A cold run gets a new empty GOLDY_CACHE_DIR; warm runs share the one
the cold run filled. Prints the best of --repeat per column (seconds). Backends that
cannot open here are left out.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLE = os.path.join(REPO, "rust_examples", "saxpy.rs")

CHILD = r"""
import sys, time, json
t0 = time.perf_counter()
import numpy as np
tn = time.perf_counter()
import goldy_import as gi
t1 = time.perf_counter()
dev = gi.Device(sys.argv[1])
t2 = time.perf_counter()
mod = gi.load(sys.argv[2])
t3 = time.perf_counter()
k = mod.saxpy.prepare(dev)
t4 = time.perf_counter()
n = 4096
x = np.random.default_rng(1).standard_normal(n).astype(np.float32)
y = np.random.default_rng(2).standard_normal(n).astype(np.float32)
bx, by = dev.buffer(x), dev.buffer(np.full(n, np.nan, np.float32))
by.write(y)
s = gi.Scheme(dev)
k.record(s, "saxpy", bx, by, 2.5).over_1d(n)
s.submit()
assert np.array_equal(by.numpy(), (np.float32(2.5) * x + y).astype(np.float32)), "wrong result"
t5 = time.perf_counter()
print(json.dumps({"numpy": tn - t0, "import": t1 - tn, "device": t2 - t1, "load": t3 - t2, "prepare": t4 - t3,
                  "first": t5 - t0, "tree_sitter": "tree_sitter" in sys.modules}))
"""


def run(backend: str, cache_dir: str) -> dict:
    env = {**os.environ, "GOLDY_CACHE_DIR": cache_dir, "PYTHONDONTWRITEBYTECODE": "0"}
    env.pop("GOLDY_CACHE", None)
    out = subprocess.run([sys.executable, "-c", CHILD, backend, EXAMPLE], env=env, capture_output=True,
                         text=True, timeout=300)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def available(backend: str) -> bool:
    code = f"import goldy_import as gi, sys; sys.exit(0 if gi.backend_available({backend!r}) else 1)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backends", default="cpu,wgpu,cuda")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cols = ("numpy", "import", "device", "load", "prepare", "first")
    print(f"{'backend':8} {'cache':5} " + " ".join(f"{c:>8}" for c in cols) + "  tree-sitter")
    for backend in args.backends.split(","):
        if not available(backend):
            print(f"{backend:8} (not available here)")
            continue
        cold, warm = [], []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory(prefix="goldy-cold-") as d:
                cold.append(run(backend, d))
                warm += [run(backend, d) for _ in range(2)]
        for name, runs in (("cold", cold), ("warm", warm)):
            best = {c: min(r[c] for r in runs) for c in cols}
            ts = "yes" if any(r["tree_sitter"] for r in runs) else "no"
            print(f"{backend:8} {name:5} " + " ".join(f"{best[c]:8.3f}" for c in cols) + f"  {ts}")


if __name__ == "__main__":
    main()
