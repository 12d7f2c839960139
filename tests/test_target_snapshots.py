"""One snapshot corpus for every target, reviewed as text.

Every kernel of rust_examples/*.rs and a few of tests/data (integer and float semantics,
casts, transcendentals, uniforms, tensors, images, atomics, checks, a name clash, the
kitchen sink) goes through `ir.checks.insert_checks`, as the runtime does with checks on
(the default), and then through each emitter's public entry point. The text is compared
with tests/snapshots/targets/<file>.<kernel>.<target> (target: wgsl, ptx, slang, cpu.py),
so one change to a semantic rule shows up, side by side, in every target it touches.

Regenerate (rewrites what changed, deletes stale files), then review the diff:
    GOLDY_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/test_target_snapshots.py
    git diff tests/snapshots/targets
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from functools import lru_cache

import pytest

from goldy_import.codegen.cpu import emit_cpu
from goldy_import.codegen.ptx import emit_ptx
from goldy_import.codegen.slang import emit_slang
from goldy_import.codegen.wgsl import emit_wgsl
from goldy_import.importer import import_file
from goldy_import.ir import nodes as N
from goldy_import.ir.checks import insert_checks
from oracle import REPO, check_snapshot

SNAPS = REPO / "tests" / "snapshots" / "targets"
REGENERATE = "GOLDY_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/test_target_snapshots.py"
TARGETS = {
    "wgsl": emit_wgsl,
    # the plain entry: the batched one (runtime/cuda.BATCH copies of each statement) would
    # quadruple the corpus; tests/test_ptx_traps.py assembles it for every kernel
    "ptx": emit_ptx,
    "slang": emit_slang,
    "cpu.py": emit_cpu,
}
EXAMPLES = sorted(p.relative_to(REPO).as_posix() for p in (REPO / "rust_examples").glob("*.rs"))
# (file, kernel) of tests/data, each for what it covers that the examples do not
DATA = [
    ("tests/data/cpu_semantics.rs", "int_ops"),  # `/` `%` by zero, MIN / -1, shifts, wrapping
    ("tests/data/cpu_semantics.rs", "casts"),  # saturating float -> int casts
    ("tests/data/cpu_semantics.rs", "float_ops"),  # NaN rules of min / max / clamp, rounding
    ("tests/data/cpu_semantics.rs", "transcendental"),
    ("tests/data/cpu_semantics.rs", "structs"),  # a uniform struct
    ("tests/data/cpu_semantics.rs", "tensor_scale"),
    ("tests/data/cpu_semantics.rs", "hist2d"),  # atomics and their returned values
    ("tests/data/cpu_semantics.rs", "checked"),  # check sites under guards, short circuits, loops
    ("tests/data/cpu_semantics.rs", "checked_image"),  # texel sites
    ("tests/data/cpu_semantics.rs", "name_clash"),  # user names against generated ones
    ("tests/data/kitchen_sink.rs", "everything"),  # every parameter kind, collectives, vectors
]


@contextmanager
def at_repo():
    """Import and emit from the repository root: spans, headers and the line comments PTX
    reads from the source name files relatively, so snapshots do not depend on the checkout."""
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        yield
    finally:
        os.chdir(cwd)


@lru_cache(maxsize=None)
def kernels_of(rel: str) -> dict[str, N.Kernel]:
    with at_repo():
        result = import_file(rel)
    assert result.ok, result.render()
    return {k.name: k for k in result.kernels}


KERNELS = [(rel, name) for rel in EXAMPLES for name in kernels_of(rel)] + DATA


def snapshot_path(rel: str, kernel: str, target: str):
    return SNAPS / f"{os.path.basename(rel)[:-len('.rs')]}.{kernel}.{target}"


@pytest.mark.parametrize("target", list(TARGETS))
@pytest.mark.parametrize("rel,kernel", KERNELS, ids=[f"{os.path.basename(r)}:{k}" for r, k in KERNELS])
def test_target_snapshot(rel, kernel, target):
    checked = insert_checks(kernels_of(rel)[kernel])
    with at_repo():
        text = TARGETS[target](checked)
    check_snapshot(snapshot_path(rel, kernel, target), text, REGENERATE)


def test_no_stale_target_snapshots():
    """Every file in the corpus belongs to a current (kernel, target); updating deletes the rest."""
    expected = {snapshot_path(rel, k, t) for rel, k in KERNELS for t in TARGETS}
    assert len(expected) == len(KERNELS) * len(TARGETS), "two kernels share a snapshot name"
    stale = sorted(p for p in SNAPS.glob("*") if p.is_file() and p not in expected) if SNAPS.exists() else []
    if os.environ.get("GOLDY_UPDATE_SNAPSHOTS") == "1":
        for p in stale:
            p.unlink()
        return
    assert not stale, f"stale snapshots {[p.name for p in stale]}; regenerate with `{REGENERATE}`"
