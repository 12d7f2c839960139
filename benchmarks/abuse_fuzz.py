"""A timed fuzz campaign over the importer and every emitter (issue 14's closing figures).

    python3 benchmarks/abuse_fuzz.py [--seconds 300] [--seed 1] [--validate-every 10]

Until `--seconds` have passed, round-robin over three kinds of input:

- mutations of the example and test sources (tests/test_importer_fuzz.py's `mutate`: deleted,
  duplicated and swapped tokens and lines, random bytes, truncation, dialect words out of
  place), one to five mutations deep;
- tests/kernel_gen.py's `hostile` sources (the shapes issue 14 found slow or broken: nested
  thread-dependent breaks, taint chains, lane-offset accesses, error floods, let chains,
  deep loops and ifs, huge literals, names that are keywords elsewhere, odd comments);
- tests/kernel_gen.py's typed random programs.

Each input is imported under tests/test_importer_fuzz.py's `check` (diagnostics with known
codes, no internal error, verified IR that round-trips), then every kernel is emitted for
WGSL, PTX, Slang and the CPU form; every `--validate-every`-th input also goes through the
validators installed here (codegen/validate.py: naga, ptxas, slangc, Python's compile).
Counted: inputs, kernels, emits, validations; GoldyError refusals (a clear error: allowed);
tracebacks (any other exception: a bug); hangs (an import over 10 s); the slowest import.
An abort would end this process: the caller sees its exit status.
"""

from __future__ import annotations

import argparse
import importlib
import os
import random
import sys
import time
import traceback
from pathlib import Path

_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [_ROOT, os.path.join(_ROOT, "tests")]  # this checkout's goldy_import and the test helpers

import kernel_gen as G  # noqa: E402
from test_importer_fuzz import Hang, check, mutate  # noqa: E402

from goldy_import.cli import EMITTERS  # noqa: E402
from goldy_import.errors import GoldyError  # noqa: E402

TARGETS = ("wgsl", "ptx", "slang", "cpu")
HANG_SECONDS = 10.0


def seeds() -> list[bytes]:
    root = Path(_ROOT)
    files = sorted(root.glob("rust_examples/*.rs")) + sorted((root / "tests" / "data").rglob("*.rs"))
    return [f.read_bytes() for f in files if f.stat().st_size < 200_000]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--validate-every", type=int, default=10)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    pool = seeds()
    emitters = {t: getattr(importlib.import_module(EMITTERS[t][0]), EMITTERS[t][1]) for t in TARGETS}
    from goldy_import.codegen.validate import validate, validators
    checked_by = [t for t in validators() if t in TARGETS]
    n = {"inputs": 0, "mutated": 0, "hostile": 0, "random": 0, "kernels": 0, "emits": 0, "validated": 0,
         "refused": 0, "tracebacks": 0, "hangs": 0}
    slowest = (0.0, "")
    bugs: list[str] = []
    end = time.monotonic() + a.seconds
    while time.monotonic() < end:
        kind = ("mutated", "hostile", "random")[n["inputs"] % 3]
        if kind == "mutated":
            data = rng.choice(pool)
            for _ in range(rng.randrange(1, 6)):
                data = mutate(data, rng)
            label, source = "mutated", data
        elif kind == "hostile":
            label, source = G.hostile(rng)
        else:
            label, source = "random", G.sample(rng).source
        n["inputs"] += 1
        n[kind] += 1
        t0 = time.perf_counter()
        try:
            result = check(source, HANG_SECONDS)
        except Hang:
            n["hangs"] += 1
            bugs.append(f"hang: {label}")
            continue
        except Exception:
            n["tracebacks"] += 1
            bugs.append(f"import of {label}: {traceback.format_exc().splitlines()[-1]}")
            continue
        took = time.perf_counter() - t0
        if took > slowest[0]:
            slowest = (took, label)
        validate_now = n["inputs"] % a.validate_every == 0
        for k in result.kernels:
            n["kernels"] += 1
            for target in TARGETS:
                try:
                    text = emitters[target](k)
                    n["emits"] += 1
                    if validate_now and target in checked_by:
                        validate(target, k, text)
                        n["validated"] += 1
                except GoldyError:
                    n["refused"] += 1  # a device limit or a validator's refusal, as a clear error
                except Exception:
                    n["tracebacks"] += 1
                    bugs.append(f"{target} emit of {label} `{k.name}`: {traceback.format_exc().splitlines()[-1]}")
    print(f"# {a.seconds:.0f} s, seed {a.seed}, validators: {', '.join(checked_by)}")
    print(" ".join(f"{k}={v}" for k, v in n.items()))
    print(f"slowest import: {slowest[0]:.3f} s ({slowest[1]})")
    for b in bugs[:20]:
        print("BUG", b)
    return 1 if bugs else 0


if __name__ == "__main__":
    sys.exit(main())
