"""The WGSL emitter: snapshots of generated code, naming, the line -> Rust span map, and
errors. `GOLDY_UPDATE_SNAPSHOTS=1 pytest tests/test_wgsl_emit.py` rewrites the snapshots."""

import dataclasses
import glob
import os
import re

import pytest

from goldy_import.codegen.wgsl import WgslEmitError, emit_wgsl, emit_wgsl_module, f32_literal
from goldy_import.errors import GoldyError
from goldy_import.importer import import_file, import_source
from goldy_import.ir import nodes as N
from oracle import check_snapshot

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SNAP = os.path.join(HERE, "snapshots", "wgsl")
CASES = sorted(glob.glob(os.path.join(SNAP, "cases", "*.rs")))


def _kernels(path):
    r = import_file(path)
    assert r.ok, r.render()
    return r.kernels


SNAPSHOT_KERNELS = [(os.path.basename(p), k.name) for p in CASES for k in _kernels(p)]


@pytest.mark.parametrize("case,kernel", SNAPSHOT_KERNELS, ids=[k for _, k in SNAPSHOT_KERNELS])
def test_snapshot(case, kernel):
    k = next(k for k in _kernels(os.path.join(SNAP, "cases", case)) if k.name == kernel)
    # the header names the source file: keep it relative so snapshots do not depend on the checkout
    k = dataclasses.replace(k, source_file=f"cases/{case}")
    check_snapshot(os.path.join(SNAP, f"{kernel}.wgsl"), emit_wgsl(k),
                   "GOLDY_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest -q -p no:cacheprovider tests/test_wgsl_emit.py")


def test_emission_is_deterministic_and_readable():
    k = next(k for k in _kernels(os.path.join(SNAP, "cases", "control.rs")) if k.name == "control")
    a, b = emit_wgsl(k), emit_wgsl(k)
    assert a == b
    body = a[a.index("@compute"):]
    for line in body.split("\n"):
        assert line == line.rstrip()
        assert line.count(";") <= 1 or line.lstrip().startswith("for (") or "{ " in line, line


def test_reserved_names_are_renamed_and_rust_names_kept():
    k = next(k for k in _kernels(os.path.join(SNAP, "cases", "control.rs")) if k.name == "control")
    code = emit_wgsl(k)
    for reserved in ("select", "array", "filter", "shared", "target"):
        assert re.search(rf"\b(let|var) {reserved}_:", code), reserved
        assert not re.search(rf"\b(let|var) {reserved}:", code), reserved
    assert "let i: u32 = gi_global_id.x;" in code  # ordinary names are kept


def test_names_clashing_with_generated_ones_are_renamed():
    src = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn main(gi_u: &mut [f32], vec3: f32, _x: u32) {
    let i = gpu::global_id().x;
    let __y = vec3 + (_x as f32);
    let gi_load_gi_u = __y;
    if i < gi_u.len() { gi_u[i] = gi_load_gi_u; }
}
"""
    r = import_source(src, "clash.rs")
    assert r.ok, r.render()
    m = emit_wgsl_module(r.kernels[0])
    assert m.entry_point == "main_"
    assert "var<uniform> gi_u: gi_Uniforms" in m.code
    assert "array<f32>;" in m.code and "var<storage, read_write> u_gi_u" not in m.code
    idents = set(re.findall(r"\b(?:let|var|fn) (\w+)", m.code))
    assert "__y" not in idents and "vec3" not in idents
    assert len([p for p in idents if p.startswith("gi_load")]) == len(set(p for p in idents if p.startswith("gi_load")))


def test_every_statement_line_maps_to_its_rust_span():
    path = os.path.join(SNAP, "cases", "numerics.rs")
    k = next(k for k in _kernels(path) if k.name == "float_ops")
    m = emit_wgsl_module(k)
    lines = m.code.split("\n")
    with open(path) as f:
        rust = f.read().split("\n")
    div = next(i + 1 for i, text in enumerate(lines) if "gi_fdiv_f32(x, y)" in text and "gi_store" in text)
    sp = m.span_of_line(div)
    assert sp is not None and "out[o] = x / y;" in rust[sp.line - 1]
    body_start = next(i for i, t in enumerate(lines) if t.startswith("fn float_ops")) + 1
    for ln in range(body_start + 1, len(lines)):
        text = lines[ln - 1].strip()
        if text.endswith(";") and not text.startswith("//"):
            assert m.span_of_line(ln) is not None, f"line {ln} `{text}` has no Rust span"
    assert all(m.span_of_line(i + 1) is None for i in range(body_start - 1))  # support code


def test_uniform_layout_matches_the_declared_struct():
    k = next(k for k in _kernels(os.path.join(SNAP, "cases", "resources.rs")) if k.name == "structs")
    m = emit_wgsl_module(k)
    fields = {f.name: f for f in m.uniform_fields}
    assert fields["p"].offset == 0 and fields["p"].size == 80  # Params: mat4 at 16, 80 bytes
    assert fields["on"].kind == "scalar" and fields["on"].offset % 4 == 0
    offs = sorted((f.offset, f.offset + f.size) for f in m.uniform_fields)
    assert all(a[1] <= b[0] for a, b in zip(offs, offs[1:]))  # no overlap
    assert m.uniform_size % 16 == 0 and m.uniform_size >= offs[-1][1]
    assert [b.param for b in m.bindings] == [0, 2, 3, 4]
    assert m.uniform_binding == 4
    assert "@align(16) @size(80) p: Params," in m.code


def test_force_writable_declares_read_only_params_read_write():
    k = _kernels(os.path.join(SNAP, "cases", "saxpy.rs"))[0]
    assert "var<storage, read> x" in emit_wgsl(k)
    m = emit_wgsl_module(k, frozenset({0}))
    assert "var<storage, read_write> x" in m.code and m.bindings[0].writable


def test_barrier_after_return_is_lowered_to_a_flag():
    k = next(k for k in _kernels(os.path.join(SNAP, "cases", "workgroup.rs")) if k.name == "neighbours")
    code = emit_wgsl(k)
    assert "return;" not in code.split("@compute")[1]
    assert "gi_done = true;" in code
    assert "if (!gi_done) { gi_store_out(" in code
    # without a barrier, a return stays a return
    code = emit_wgsl(_kernels(os.path.join(SNAP, "cases", "control.rs"))[0])
    assert "return;" in code and "gi_done" not in code


@pytest.mark.parametrize("value,text", [
    (1.0, "1.0f"), (-2.5, "(-2.5f)"), (0.1, "0.1f"), (1e-30, "1e-30f"), (-0.0, "(-0.0f)"),
    (float("inf"), "bitcast<f32>(0x7f800000u)"), (1e-45, "bitcast<f32>(0x00000001u)"),
])
def test_f32_literals_are_exact(value, text):
    assert f32_literal(value) == text


def test_unsupported_ir_raises_a_goldy_error_with_the_rust_span():
    k = _kernels(os.path.join(SNAP, "cases", "saxpy.rs"))[0]

    @dataclasses.dataclass
    class Mystery(N.Stmt):
        pass

    span = N.Span(10, 20, 7, 9, 7, 19)
    bad = dataclasses.replace(k, body=k.body + [Mystery(span)])
    with pytest.raises(WgslEmitError) as e:
        emit_wgsl(bad)
    assert isinstance(e.value, GoldyError)
    assert "kernel `saxpy`" in str(e.value) and "Mystery" in str(e.value)
    assert f"{k.source_file}:7:9" in str(e.value)


def test_every_importable_kernel_emits():
    """Emitting never crashes on verified IR (examples, test data, snapshot cases)."""
    paths = sorted(glob.glob(os.path.join(REPO, "rust_examples", "*.rs")) +
                   glob.glob(os.path.join(REPO, "tests", "data", "*.rs")) + CASES)
    count = 0
    for p in paths:
        for k in import_file(p).kernels:
            code = emit_wgsl(k)
            assert f"fn {emit_wgsl_module(k).entry_point}(" in code
            count += 1
    assert count >= 10


def test_emission_visits_each_expression_a_bounded_number_of_times(monkeypatch):
    """A chain of divisions by constants, of identity casts and of float products must be
    emitted in linear work (re-emitting an operand per level once made this exponential)."""
    from goldy_import.codegen.wgsl import emitter as W

    k = _kernels(os.path.join(SNAP, "cases", "saxpy.rs"))[0]
    sp = k.span
    u = N.Var("u32", sp, "i")
    f = N.Var("f32", sp, "a")
    depth = 60
    for _ in range(depth):
        u = N.Cast("u32", sp, N.Binary("u32", sp, "div", u, N.Const("u32", sp, 3)))
        f = N.Binary("f32", sp, "mul", N.Binary("f32", sp, "div", f, N.Const("f32", sp, 2.0)), N.Var("f32", sp, "a"))
    body = [N.Let(sp, "i", "u32", N.Swizzle("u32", sp, N.Builtin("vec3<u32>", sp, "global_id"), "x"), False),
            N.Store(sp, "y", u, f)]
    deep = dataclasses.replace(k, body=body, locals={"i": "u32"})
    calls = []
    real = W._Emitter.expr

    def counting(self, e):
        calls.append(e)
        return real(self, e)

    monkeypatch.setattr(W._Emitter, "expr", counting)
    code = emit_wgsl(deep)
    nodes = 2 * 3 * depth + 4
    assert len(calls) <= 3 * nodes, f"{len(calls)} expression visits for {nodes} nodes"
    assert code.count("/ 3u") == depth
