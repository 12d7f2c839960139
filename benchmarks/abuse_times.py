"""Analysis time of the importer's worst cases (issue 14): each hostile input at the
importer's documented limits, timed per kernel through import (`import_source`, every
analysis), `--check` (the CLI, in process) and the emit of every target, with and without
its validator (ptxas, naga, slangc, Python's `compile`, where installed).

    python benchmarks/abuse_times.py [--only NAME] [--no-validate]

Times are CPU seconds of this process (`time.process_time`: a loaded machine inflates wall
time, not the work done), except "validate", which is wall time (ptxas runs as a child
process). The goal: under 1 s per kernel for every row (issue 14), 0.7 s on a 2-core
development VM for margin. The inputs are the generators of tests/kernel_gen.py, the ones
tests/test_abuse_import.py bounds. It measures the checkout it lives in (its root comes
first on sys.path), not whichever one the environment's editable install points at.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import io
import os
import sys
import tempfile
import time

_ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [_ROOT, os.path.join(_ROOT, "tests")]  # this checkout's goldy_import and kernel_gen

import kernel_gen as G  # noqa: E402

from goldy_import.cli import EMITTERS, main as cli_main  # noqa: E402
from goldy_import.errors import GoldyError  # noqa: E402
from goldy_import.importer import import_source  # noqa: E402

TARGETS = ("wgsl", "ptx", "slang", "cpu")

# name -> (source, kernels in it). Sizes: the limits the issue measured at (8000 statements,
# 1600 accesses, 16 nested loops: the dialect's loop-depth limit, 8000 kernels, 800 locals).
CASES = {
    "8000 lets, untainted chain": lambda: G.let_chain(8000, True),
    "8000 lets, tainted chain": lambda: G.let_chain(8000, True, tainted=True),
    "2000 untyped lets": lambda: G.let_chain(2000, False),
    "800-local taint chain": lambda: G.taint_chain(800),
    "1600 lane-offset accesses (G0044)": lambda: G.lane_offset_accesses(1600),
    "16 nested loops, break first": lambda: G.nested_breaks(16, True),
    "16 nested loops, break last": lambda: G.nested_breaks(16, False),
    "8000 kernels, a syntax error each": lambda: G.syntax_error_flood(8000),
}
KERNELS = {"8000 kernels, a syntax error each": 8000}


def cpu_time(fn) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


def warm_up() -> None:
    """Import and emit a small kernel once: module imports are not the inputs' cost."""
    r = import_source(G.let_chain(4), "warm.rs")
    for target in TARGETS:
        mod, fn = EMITTERS[target]
        getattr(importlib.import_module(mod), fn)(r.kernels[0])


def measure(name: str, source: str) -> dict:
    per = KERNELS.get(name, 1)
    row: dict = {"case": name, "kernels": per}
    result = None

    def do_import():
        nonlocal result
        result = import_source(source, "abuse.rs")

    gc.collect()
    row["import"] = cpu_time(do_import) / per
    row["total"] = row["import"] * per  # the whole file's import
    with tempfile.NamedTemporaryFile("w", suffix=".rs", delete=False) as f:
        f.write(source)
    try:
        sink = io.StringIO()
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            row["check"] = cpu_time(lambda: cli_main([f.name, "--check"])) / per
    finally:
        os.unlink(f.name)
    for target in TARGETS:
        if not result.kernels:
            row[target] = None
            continue
        mod, fn = EMITTERS[target]
        emit = getattr(importlib.import_module(mod), fn)
        texts: list = []
        t = time.process_time()
        try:
            texts.extend(emit(k) for k in result.kernels)
        except GoldyError as e:  # refused with a clear error (a device limit): timed all the same
            row.setdefault("rejected", []).append(f"{target} emit: {str(e).splitlines()[0].strip()}")
            row[target] = time.process_time() - t
            continue
        row[target] = (time.process_time() - t) / len(result.kernels)
        row.setdefault("texts", {})[target] = texts
    row["ir"] = result.kernels
    return row


def validate_row(row: dict) -> None:
    """The validators' wall time, after every CPU timing: opening them starts device
    threads that `process_time` would count."""
    from goldy_import.codegen.validate import validate as check
    kernels = row.pop("ir")
    for target, texts in row.pop("texts", {}).items():
        t = time.perf_counter()
        try:
            for k, text in zip(kernels, texts):
                check(target, k, text)
        except GoldyError as e:  # reported, not timed: a rejected emit is a finding of its own
            row.setdefault("rejected", []).append(f"{target}: {str(e).splitlines()[-1].strip()}")
        row[target + "+v"] = (time.perf_counter() - t) / len(kernels)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", help="run only the cases whose name contains this")
    ap.add_argument("--no-validate", action="store_true", help="skip the validators (emit time only)")
    args = ap.parse_args()
    warm_up()
    rows = []
    for name, make in CASES.items():
        if args.only and args.only not in name:
            continue
        rows.append(measure(name, make()))
        r = rows[-1]
        cells = " ".join(f"{c}={'-' if r.get(c) is None else f'{r[c]:.3f}'}" for c in ["import", "check", *TARGETS])
        total = f" (whole file {r['total']:.2f} s)" if r["kernels"] > 1 else ""
        print(f"{name:38} {cells}{total}", flush=True)
    cols = ["import", "check"] + list(TARGETS)
    if not args.no_validate:
        from goldy_import.codegen.validate import validators
        have = validators()
        for r in rows:
            validate_row(r)
        cols = ["import", "check"] + [c for t in TARGETS for c in (t, t + "+v")]
    worst = max((r[c] for r in rows for c in cols if r.get(c) is not None), default=0.0)
    print()
    print("| input (per kernel, s) | " + " | ".join(cols) + " |")
    print("|---" * (len(cols) + 1) + "|")
    for r in rows:
        print(f"| {r['case']} | " + " | ".join("-" if r.get(c) is None else f"{r[c]:.3f}" for c in cols) + " |")
    for r in rows:
        for why in r.get("rejected", []):
            print(f"- {r['case']}: rejected by the validator: {why}")
    if not args.no_validate:
        print(f"validators here: {', '.join(have)}; `+v` columns: the validator alone, wall time")
    print(f"slowest: {worst:.3f} s per kernel ({'under' if worst < 1.0 else 'OVER'} the 1 s goal)")


if __name__ == "__main__":
    main()
