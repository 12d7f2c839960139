"""Focused checks of the typing and lowering rules of docs/dialect.md: each test states
one rule and the IR (or diagnostic) it implies."""

from __future__ import annotations

import pytest

from goldy_import.importer import import_source, render_human
from goldy_import.importer.dialect import f32_nearest
from goldy_import.ir import nodes as N
from goldy_import.ir.pretty import format_kernel


def kernel(body: str, params: str = "out: &mut [u32], xs: &[u32], fs: &mut [f32], n: u32, c: bool") -> N.Kernel:
    result = import_source(f"#[goldy::compute]\nfn k({params}) {{\n{body}\n}}\n", "t.rs")
    assert result.errors == [], result.render()  # warnings are not what these tests are about
    return result.kernels[0]


def errors(body: str, params: str = "out: &mut [u32], xs: &[u32], fs: &mut [f32], n: u32, c: bool"):
    result = import_source(f"#[goldy::compute]\nfn k({params}) {{\n{body}\n}}\n", "t.rs")
    assert result.kernels == []
    return [(d.code, d.span.line - 2, result.source.text(d.span)) for d in result.errors]


def text(k: N.Kernel) -> str:
    return "\n".join(line.strip() for line in format_kernel(k).splitlines())


# ---------------------------------------------------------------- literal typing

def test_untyped_local_takes_its_type_from_first_use() -> None:
    k = kernel("let mut acc = 0;\nfor j in 0..4 { acc += xs[j]; }\nout[0] = acc;")
    assert k.locals["acc"] == "u32" and k.locals["j"] == "u32"


def test_untyped_chains_of_lets_follow_the_use() -> None:
    k = kernel("let a = 1;\nlet b = a * 2 + 1;\nlet d = b;\nout[d] = 0;")
    assert [k.locals[x] for x in "abd"] == ["u32"] * 3


def test_untyped_local_without_constraint_is_i32_and_float_is_f32() -> None:
    k = kernel("let a = 5;\nlet f = 1.5;\nlet s = -a;")
    assert (k.locals["a"], k.locals["f"], k.locals["s"]) == ("i32", "f32", "i32")


def test_conflicting_uses_of_an_untyped_local_are_an_error() -> None:
    assert errors("let a = 1;\nout[a] = 0;\nlet s: i32 = a;") == [("G0019", 3, "a")]


def test_literal_operand_takes_the_other_operands_type() -> None:
    assert "(1u32 + n)" in text(kernel("out[0] = 1 + n;"))
    assert "(2.0f32 * fs[0u32])" in text(kernel("fs[0] = 2.0 * fs[0];"))


def test_integer_literal_never_becomes_f32() -> None:
    assert errors("fs[0] = 1;") == [("G0019", 1, "1")]


def test_if_arms_and_range_bounds_agree() -> None:
    k = kernel("let v = if c { 0 } else { n };\nfor j in 0..n { out[j] = v; }")
    assert k.locals["v"] == "u32" and k.locals["j"] == "u32"


def test_negative_literal_folds_before_range_check() -> None:
    assert "let m: i32 = -2147483648i32;" in text(kernel("let m = -2147483648;"))
    assert errors("let m = 2147483648;") == [("G0033", 1, "2147483648")]


def test_float_literals_round_once_to_nearest_f32() -> None:
    # 1 + 2^-24 + 2^-80 lies just above the midpoint of 1.0 and its successor:
    # decimal -> f64 -> f32 would round to 1.0, Rust rounds up.
    above_midpoint = "1.000000059604644775390625000000000000000000000000000000000000000000000000000001"
    assert f32_nearest(above_midpoint) == 1.0000001192092896
    k = kernel(f"fs[0] = {above_midpoint};")
    assert "1.0000001192092896f32" in text(k)


# ---------------------------------------------------------------- indices and conversions

def test_indices_are_u32() -> None:
    assert errors("let j = 3i32;\nout[j] = 0;") == [("G0019", 2, "j")]
    assert errors("let j = gpu::global_id().x as usize;") == [("G0005", 1, "usize")]


def test_no_implicit_conversion_between_numeric_types() -> None:
    assert errors("fs[0] = fs[1] + n;") == [("G0019", 1, "n")]
    assert errors("let mut u = 0u32;\nu = 2.5;") == [("G0019", 2, "2.5")]


def test_shifts_take_either_integer_amount() -> None:
    k = kernel("let s = 3i32;\nout[0] = n << s;\nout[1] = n >> 2;")
    assert "(n << s)" in text(k) and "(n >> 2u32)" in text(k)


# ---------------------------------------------------------------- evaluation order

def test_loop_bounds_are_evaluated_once() -> None:
    t = text(kernel("for j in 0..out[0] { out[0] = j; }"))
    assert "let _t0: u32 = out[0u32];" in t and "for j: u32 in 0u32.._t0 {" in t


def test_right_side_of_and_runs_only_when_needed() -> None:
    t = text(kernel("if n > 0 && (if c { xs[n] > 1 } else { false }) { out[0] = 1; }"))
    assert "let mut _t1: bool = (n > 0u32);" in t
    assert t.index("if _t1 {") < t.index("xs[n]")


def test_block_with_effects_only_as_a_whole_statement_value() -> None:
    k = kernel("let v = if c { out[0] = 1; 2u32 } else { 3 };\nout[1] = v;")
    assert isinstance(k.body[1], N.If)  # the hoisted `if`, with the store inside
    assert errors("out[1] = out[0] + { out[0] = 2; 1 };") == [("G0028", 1, "{ out[0] = 2; 1 }")]


def test_pure_if_value_is_a_select_and_faulting_arms_are_hoisted() -> None:
    assert "select(c, 1u32, 2u32)" in text(kernel("out[0] = if c { 1 } else { 2 };"))
    t = text(kernel("out[0] = if n < 4 { xs[n] } else { 0 };"))
    assert "select" not in t and "_t0 = xs[n];" in t


# ---------------------------------------------------------------- bindings

def test_deferred_initialisation_on_every_path() -> None:
    k = kernel("let x: u32;\nif c { x = 1; } else { x = 2; }\nout[0] = x;")
    assert k.body[0] == N.Let(k.body[0].span, "x", "u32", None, True)
    assert errors("let x: u32;\nif c { x = 1; }\nout[0] = x;") == [("G0041", 3, "x")]
    assert errors("let x: u32;\nx = 1;\nx = 2;") == [("G0021", 3, "x")]


def test_return_on_one_path_counts_as_initialised() -> None:
    kernel("let x: u32;\nif c { x = 1; } else { return; }\nout[0] = x;")


def test_shadowed_names_become_unique_locals() -> None:
    k = kernel("let x = 1u32;\nlet x = x + 1;\n{ let x = 5u32; out[x] = x; }\nout[x] = x;")
    assert sorted(k.locals) == ["x", "x_1", "x_2"]
    assert "out[x_1] = x_1;" in text(k)


def test_mutable_scalar_parameter_is_a_local_copy() -> None:
    k = kernel("step += 1;\nout[0] = step;", "out: &mut [u32], mut step: u32")
    assert k.body[0] == N.Let(k.body[0].span, "step_1", "u32", N.Var("u32", k.body[0].span, "step"), True)


def test_errors_do_not_cascade_from_a_failed_declaration() -> None:
    assert errors("let v = xs[0] + 1.0;\nout[0] = v;\nout[1] = v + 1;") == [("G0019", 1, "1.0")]
    assert [c for c, _, _ in errors("out[0] = m[0];", "out: &mut [u32], m: &[u64]")] == ["G0004"]


# ---------------------------------------------------------------- rendering

def test_human_rendering_counts_characters_and_expands_tabs() -> None:
    result = import_source("#[goldy::compute]\nfn k(o: &mut [f32]) {\n\tlet é = 1u32; o[0] = é;\n}\n", "t.rs")
    (d,) = result.diagnostics
    assert (d.span.line, d.span.col, d.span.end_col) == (3, 23, 24)
    lines = render_human(d, result.source).splitlines()
    assert lines[1] == " --> t.rs:3:23"
    assert lines[3] == "3 |     let é = 1u32; o[0] = é;"
    assert lines[4] == "  |                          ^ expected `f32`, found `u32`"


def test_json_diagnostics_have_byte_and_character_positions() -> None:
    result = import_source("#[goldy::compute]\nfn k(o: &mut [f32]) { let é = 1u32; o[0] = é; }\n", "t.rs")
    span = result.diagnostics[0].to_dict()["spans"][0]
    assert (span["line_start"], span["column_start"], span["column_end"]) == (2, 44, 45)
    assert result.source.data[span["byte_start"]:span["byte_end"]].decode() == "é"


@pytest.mark.parametrize("source", ["", "fn main() {}", "// only a comment\n"])
def test_files_without_kernels_are_fine(source: str) -> None:
    result = import_source(source)
    assert result.ok and result.kernels == []


# ---------------------------------------------------------------- regressions (bugs found and fixed)

def test_block_like_tail_of_a_value_block_is_its_value() -> None:
    # tree-sitter parses `{ if a { x } else { y } }` as a statement without `;`
    k = kernel("let v = if c { if n > 1 { 1u32 } else { 2 } } else { 3 };\nout[0] = v;")
    assert k.locals["v"] == "u32"


def test_range_with_negative_end_is_not_a_subtraction() -> None:
    # tree-sitter reads `a..-b` as `(a..) - b`
    t = text(kernel("for j in 3..-2 { out[0] = j as u32; }"))
    assert "for j: i32 in 3i32..-2i32 {" in t


def test_intrinsic_arguments_are_lowered_once() -> None:
    # the leading argument used to be lowered twice: duplicate errors and hoisted statements
    assert errors("fs[0] = max(1.0, missing);") == [("G0020", 1, "missing")]
    t = text(kernel("fs[0] = max(0.5, if c { fs[n] } else { 0.0 });"))
    assert t.count("if c {") == 1


def test_effects_of_a_discarded_expression_are_kept() -> None:
    t = text(kernel("(if c { out[0] = 1; 2.0 } else { 3.0 });"))
    assert "out[0u32] = 1u32;" in t


def test_float_literal_beyond_f64_range_is_out_of_range_not_infinity() -> None:
    assert errors("fs[0] = 1e400;") == [("G0033", 1, "1e400")]


def test_no_cascade_from_assigning_a_buffer() -> None:
    assert [c for c, _, _ in errors("out = xs;")] == ["G0022"]


def test_struct_slices_that_are_mutable_are_reported() -> None:
    # `&mut [Struct]` used to be dropped from the parameters without a diagnostic
    src = "#[goldy::gpu] struct S { a: f32 }\n#[goldy::compute]\nfn k(ps: &mut [S]) { ps[0]; }\n"
    result = import_source(src, "t.rs")
    assert [d.code for d in result.diagnostics] == ["G0003"] and result.kernels == []
