"""A real crate file: host code around kernels. The importer takes the good kernels,
reports the bad one, and says nothing about the host code."""

from __future__ import annotations

from pathlib import Path

from goldy_import.importer import import_file, import_source

DATA = Path(__file__).resolve().parent / "data" / "importer"


def test_whole_file_imports_good_kernels_and_reports_the_bad_one() -> None:
    result = import_file(DATA / "whole_file.rs")
    assert [k.name for k in result.kernels] == ["scale", "histogram"]
    assert [(d.code, d.span.line) for d in result.errors] == [("G0019", 55), ("G0027", 56), ("G0015", 57)]
    # every diagnostic points into the bad kernel, none into host code
    broken = result.source.data.index(b"fn broken")
    end = result.source.data.index(b"/// Second good kernel.")
    assert all(broken <= d.span.start < end for d in result.errors)
    scale = result.kernel("scale")
    assert scale.doc == "First good kernel."
    assert [s.name for s in scale.structs] == ["Params"]
    assert [p.category for p in scale.params] == ["uniform", "read", "read_write"]


def test_host_only_file_has_no_kernels_and_no_diagnostics() -> None:
    result = import_source("fn main() { let v: Vec<u64> = vec![1, 2]; println!(\"{:?}\", v); }\n")
    assert result.kernels == [] and result.diagnostics == [] and result.ok


def test_a_bad_kernel_between_good_ones_does_not_stop_the_import() -> None:
    src = """
#[goldy::compute] fn a(o: &mut [f32]) { o[0] = 1.0; }
#[goldy::compute] fn b(o: &mut [f32]) { o[0] = 1u32; }
#[goldy::compute] fn c(o: &mut [f32]) { o[1] = 2.0; }
"""
    result = import_source(src)
    assert [k.name for k in result.kernels] == ["a", "c"]
    assert [d.code for d in result.errors] == ["G0019"]
