"""Snapshot tests of the importer: the contract with emitters and users.

- tests/data/importer/accept/*.rs (and tests/data/kitchen_sink.rs) import without
  diagnostics; each kernel's IR JSON is compared with
  tests/snapshots/importer/accept/<file>.<kernel>.json, and a readable text form of all
  of a file's kernels with tests/snapshots/importer/accept/<file>.txt.
- tests/data/importer/reject/G0xxx_*.rs import no kernel; every diagnostic has code
  G0xxx, every kernel in the file gets at least one, and the rendered text and JSON are
  compared with tests/snapshots/importer/reject/<file>.txt and .json.

`GOLDY_UPDATE_SNAPSHOTS=1 pytest tests/test_importer_snapshots.py` rewrites the
snapshots (and deletes stale ones); review the diff by eye before committing.
"""

from __future__ import annotations

import os
import re
from functools import partial
from pathlib import Path

import pytest

from goldy_import.importer import import_file, render_json
from goldy_import.ir import from_json, to_json, verify
from goldy_import.ir.pretty import format_kernel
import oracle

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
SNAPS = REPO / "tests" / "snapshots" / "importer"
UPDATE = os.environ.get("GOLDY_UPDATE_SNAPSHOTS") == "1"
check_snapshot = partial(oracle.check_snapshot, regenerate="GOLDY_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest -q "
                                                          "-p no:cacheprovider tests/test_importer_snapshots.py")

ACCEPT = sorted((DATA / "importer" / "accept").glob("*.rs")) + [DATA / "kitchen_sink.rs"]
REJECT = sorted((DATA / "importer" / "reject").glob("*.rs"))


def rel(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def import_rel(path: Path):
    cwd = os.getcwd()
    os.chdir(REPO)  # so spans and `source_file` name the file relative to the repository
    try:
        return import_file(rel(path))
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("path", ACCEPT, ids=lambda p: p.stem)
def test_accepted_source_lowers_to_snapshot_ir(path: Path) -> None:
    result = import_rel(path)
    assert result.errors == [], result.render()
    assert result.kernels, "no kernel found"
    for k in result.kernels:
        verify(k)
        check_snapshot(SNAPS / "accept" / f"{path.stem}.{k.name}.json", to_json(k) + "\n")
    check_snapshot(SNAPS / "accept" / f"{path.stem}.txt",
                   "\n\n".join(format_kernel(k) for k in result.kernels) + "\n")


@pytest.mark.parametrize("path", ACCEPT, ids=lambda p: p.stem)
def test_accepted_kernels_round_trip_through_json(path: Path) -> None:
    for k in import_rel(path).kernels:
        again = from_json(to_json(k))
        assert again == k
        assert from_json(to_json(k, indent=None)) == k
        verify(again)


def kernel_segments(source: str) -> list[tuple[int, int, str]]:
    """(start, end, name) of each `#[goldy::compute...] fn name`, up to the next one."""
    starts = [(m.start(), m.group(1)) for m in
              re.finditer(r"#\[goldy::compute[^\]]*\]\s*(?:#\[[^\]]*\]\s*)*(?:\w+\s+)*fn\s+(\w+)", source)]
    ends = [s for s, _ in starts[1:]] + [len(source)]
    return [(s, e, name) for (s, name), e in zip(starts, ends)]


@pytest.mark.parametrize("path", REJECT, ids=lambda p: p.stem)
def test_rejected_source_reports_snapshot_diagnostics(path: Path) -> None:
    code = path.stem[:5]
    result = import_rel(path)
    assert result.errors, "no errors"
    codes = {d.code for d in result.errors}
    assert codes == {code}, result.render()
    source = path.read_text()
    if code != "G0036":  # the first of two same-named kernels is fine
        assert result.kernels == [], [k.name for k in result.kernels]
    for start, end, name in kernel_segments(source):
        assert any(start <= lb.span.start < end for d in result.diagnostics for lb in d.labels), \
            f"`{name}` got no diagnostic"
    check_snapshot(SNAPS / "reject" / f"{path.stem}.txt", result.render() + "\n")
    check_snapshot(SNAPS / "reject" / f"{path.stem}.json", render_json(result.diagnostics) + "\n")


def test_bad_mix_reports_every_error_and_keeps_the_good_kernel() -> None:
    result = import_rel(DATA / "bad_mix.rs")
    assert [k.name for k in result.kernels] == ["good"]
    assert len(result.errors) >= 25
    check_snapshot(SNAPS / "bad_mix.txt", result.render() + "\n")
    check_snapshot(SNAPS / "bad_mix.json", render_json(result.diagnostics) + "\n")


def test_no_stale_snapshots() -> None:
    """Every snapshot belongs to a current case (updating removes the stale ones)."""
    expected = {SNAPS / "bad_mix.txt", SNAPS / "bad_mix.json"}
    for path in ACCEPT:
        expected.add(SNAPS / "accept" / f"{path.stem}.txt")
        expected |= {SNAPS / "accept" / f"{path.stem}.{k.name}.json" for k in import_rel(path).kernels}
    for path in REJECT:
        expected |= {SNAPS / "reject" / f"{path.stem}.txt", SNAPS / "reject" / f"{path.stem}.json"}
    present = {p for p in SNAPS.rglob("*") if p.is_file()} if SNAPS.exists() else set()
    stale = present - expected
    if UPDATE:
        for p in stale:
            p.unlink()
        return
    assert not stale, f"stale snapshots: {sorted(rel(p) for p in stale)}"
