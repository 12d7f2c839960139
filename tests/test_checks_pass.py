"""The trapping-check pass: which accesses keep a run-time check after guard elision."""

import pytest

import goldy_import as gi
from goldy_import.ir import from_json, to_json, verify
from goldy_import.ir.checks import check_sites, insert_checks


def sites(body: str, params: str = "x: &[f32], y: &mut [f32], n: u32, k: u32", wg: int = 64):
    src = f"""
#[goldy::compute(workgroup_size = [{wg}, 1, 1])]
fn k_({params}) {{
    let i = gpu::global_id().x;
    {body}
}}
"""
    k = insert_checks(gi.load_source(src, "c.rs").k_.definition().ir)
    verify(k)
    assert from_json(to_json(k)) == k
    return [(s.kind, s.resource, s.span.line) for s in check_sites(k)]


def test_guard_on_the_same_buffer_elides():
    assert sites("if i < y.len() { y[i] = 1.0; }") == []


def test_guard_on_another_buffer_keeps_the_check():
    assert sites("if i < y.len() { y[i] = x[i]; }") == [("index", "x", 5)]


def test_for_range_over_len_elides():
    assert sites("let mut s = 0.0; for j in 0..x.len() { s += x[j]; } if i < y.len() { y[i] = s; }") == []


def test_inclusive_range_keeps_the_check():
    assert sites("let mut s = 0.0; for j in 0..=x.len() { s += x[j]; }") == [("index", "x", 5)]


def test_transitive_guard_elides():
    assert sites("if i < n && n <= y.len() { y[i] = 2.0; }") == []


def test_early_return_guard_elides_the_rest_of_the_block():
    assert sites("if i >= y.len() { return; } y[i] = 3.0;") == []
    assert sites("if i >= y.len() || i >= x.len() { return; } y[i] = x[i];") == []


def test_unguarded_and_mutable_indices_stay_checked():
    assert sites("y[i] = 1.0;") == [("index", "y", 5)]
    assert sites("let mut j = i; if j < y.len() { j += 1; y[j] = 1.0; }") == [("index", "y", 5)]


def test_constant_index_below_a_length_bound_elides():
    """`x.len() >= 4` (a specialized variant's baked length, or the user's guard) proves
    x[0]..x[3], not x[4], and says nothing of y."""
    assert sites("if x.len() >= 4 { y[0] = x[3] + x[0]; }") == [("index", "y", 5)]
    assert sites("if x.len() >= 4 { y[0] = x[4]; }") == [("index", "x", 5), ("index", "y", 5)]
    assert sites("if 4 < x.len() && y.len() > 1 { y[1] = x[4]; }") == []


def test_division_by_a_variable_is_checked_by_a_nonzero_constant_not():
    assert sites("if i < y.len() { y[i] = (i / k) as f32; }") == [("divide", None, 5)]
    assert sites("if i < y.len() { y[i] = (i / 3 + i % 7) as f32; }") == []


def test_workgroup_array_indexed_by_local_id_elides():
    body = ("let s = gpu::workgroup_array::<f32, 64>(); let l = gpu::local_id().x; s[l] = 1.0; "
            "gpu::workgroup_barrier(); let t = s[l + 1]; if i < y.len() { y[i] = t; }")
    assert sites(body) == [("index", "s", 5)]
    body = "let s = gpu::workgroup_array::<f32, 32>(); let l = gpu::local_id().x; s[l] = 1.0;"
    assert sites(body) == [("index", "s", 5)]  # 64 threads, 32 slots


def test_checks_off_leaves_the_ir_unchanged():
    k = gi.load_source("#[goldy::compute]\nfn k_(y: &mut [f32]) { y[0] = 1.0; }\n", "c.rs").k_.definition().ir
    assert '"check"' not in to_json(k)
    assert '"check": 0' in to_json(insert_checks(k))
