"""Any Rust identifier works on every target (codegen/names.py, issue 13 item 5).

Kernels whose parameters, locals, workgroup arrays, structs and fields are named after
every name that once broke a target (a helper's parameter, a keyword, a built-in, a
generated prefix, a non-ASCII letter) compile for WGSL (naga), PTX (ptxas) and Slang, and
give the CPU oracle's bits on cpu, wgpu and slang with random data, checks on and off.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goldy_import.codegen import names as NM
from goldy_import.codegen.ptx import emit_ptx, entry_name
from goldy_import.codegen.pymodule import class_names, emit_module, param_names
from goldy_import.codegen.slang import emit_slang, emit_wrapper
from goldy_import.codegen.wgsl import emit_wgsl_module
from goldy_import.importer import import_source
from goldy_import.ir.checks import insert_checks

from oracle import check_against_cpu, kernel_ir, random_inputs
from test_ptx import assemble, ptxas  # noqa: F401  (the fixture: required in CI, else skipped)

SRC = r"""
use goldy::gpu;

#[goldy::gpu]
struct select { x: f32, vec4: u32, float: f32, π: f32, _pad0: u32, i: u32 }

#[goldy::gpu]
struct v { site: f32, param: u32 }

/// Every name that broke a target once: größe.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn main(v: &mut [f32], i: &[f32], site: &[u32], größe: u32, π: f32, データ: &mut [f32],
        param: &[select], global: &[v], G: &mut [u32], np: &mut [i32], rt: f32, gi_fadd_f32: &[f32],
        bitcast: u32, r#uint: u32, half: &mut [f32]) {
    let reg = gpu::workgroup_array::<f32, 64>();
    let shared = gpu::workgroup_array::<f32, 64>();
    let x = gpu::global_id().x;
    let t = gpu::local_id().x;
    let mut a = 0.0;
    let mut _goldy_t = 0u32;
    if x < größe {
        a = i[x] * π + gi_fadd_f32[x];
        _goldy_t = site[x] % 7u32;
    }
    reg[t] = a;
    let array = gpu::workgroup_sum::<64>(a, shared);
    if x < größe {
        let e = reg[(t + 1u32) % 64u32];
        let m = param[x];
        let q = m.x + m.float * m.π + (m.vec4 as f32) + ((m._pad0 + m.i) as f32);
        v[x] = q + e;
        データ[x] = array + (_goldy_t as f32);
        half[x] = global[x].site * rt + ((global[x].param + bitcast + r#uint) as f32);
        G[x] = site[x] / (bitcast + 1u32);
        np[x] = (site[x] as i32) - 3;
        v[x] = v[x] + e - a;
    }
}

/// Python's keywords and the launch methods' own names as parameters.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn pass(from: &[f32], from_: &mut [f32], class: f32, def: u32, lambda: &mut [u32], scheme: f32, label: u32,
        ﬁ: f32, fi: f32, j: gpu::Tensor<f32>, l: &[u32], r: &mut [f32], b: &[f32]) {
    let x = gpu::global_id().x;
    if x < from.len() {
        from_[x] = from[x] * class + scheme * ﬁ + fi + j[x];
        lambda[x] = def + label + x + l[x];
        r[x] = b[x] - j[x];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn データ処理(WARP_SZ: &mut [u32], c: &[u32], e: &mut [i32], q: &[i32]) {
    let x = gpu::global_id().x;
    if x < WARP_SZ.len() {
        WARP_SZ[x] = c[x] * 3u32;
        e[x] = q[x] % 5i32;
    }
}
"""

KERNELS = ["main", "pass", "データ処理"]
N_ELEMS = 128


def _kernel(name: str):
    return kernel_ir(SRC, name)


def _forms(name: str):
    k = _kernel(name)
    return [k, insert_checks(k)]


# ---------------------------------------------------------------- every target compiles and agrees


@pytest.mark.parametrize("checks", [True, False], ids=["checked", "unchecked"])
@pytest.mark.parametrize("backend", ["cpu", "wgpu", "slang"])
@pytest.mark.parametrize("kernel", KERNELS)
def test_runs_like_the_oracle(kernel, backend, checks, monkeypatch):
    monkeypatch.setenv("GOLDY_BOUNDS_CHECKS", "1" if checks else "0")
    k = _kernel(kernel)
    args = random_inputs(k, N_ELEMS, seed=sum(map(ord, kernel)) + checks)
    check_against_cpu(backend, SRC, kernel, args, ("over_1d", N_ELEMS))


@pytest.mark.parametrize("kernel", KERNELS)
def test_ptx_assembles(kernel, ptxas, tmp_path):  # noqa: F811
    for k in _forms(kernel):
        text = emit_ptx(k)
        assert text.isascii()
        assemble(ptxas, text, tmp_path)
    assert f".entry {entry_name(_kernel(kernel))}(" in text


def test_safe_names_keep_their_spelling():
    k = _kernel("main")
    wgsl = emit_wgsl_module(k)
    assert {"G", "np", "half", "global", "param"} <= {b.name for b in wgsl.bindings}
    assert "let x: u32 = gi_global_id.x;" in wgsl.code and "let t: u32" in wgsl.code
    slang = emit_slang(k)
    assert "BufRO<float> i, BufRO<uint> site," in slang  # bound by name by the slang runtime
    assert param_names(_kernel("pass"))[-4:] == ["j", "l", "r", "b"]
    assert entry_name(_kernel("pass")) == "pass"


def test_breaking_names_are_renamed():
    k = _kernel("main")
    wgsl = emit_wgsl_module(insert_checks(k))  # checked helpers take `site`
    names = {b.name for b in wgsl.bindings}
    assert {"v_", "i_", "site_"} <= names and not names & {"v", "i", "site"}
    assert wgsl.entry_point == "main_"
    assert "ugi_fadd_f32" in names and wgsl.code.isascii()
    assert all(line.isascii() for line in emit_wrapper(k).splitlines() if not line.startswith("//"))
    assert param_names(_kernel("pass"))[:9] == ["from__", "from_", "class_", "def_", "lambda_", "scheme_",
                                                "label_", "_ufb01_", "fi"]
    assert class_names([_kernel(n) for n in KERNELS]) == {"main": "main", "pass": "pass_", "データ処理": "データ処理"}
    assert entry_name(_kernel("データ処理")).isascii()


def test_launch_module_compiles_and_keeps_rust_names():
    r = import_source(SRC, "names.rs")
    assert r.ok, r.render()
    code = emit_module(r.kernels, "names.rs", "0" * 64, in_process=True)
    ns: dict = {"__name__": "names_test"}
    exec(compile(code, "<names>", "exec"), ns)
    # the kernels' classes, then the #[goldy::gpu] structs' StructTypes and their table
    assert ns["__all__"] == ["main", "pass_", "データ処理", "select", "v", "STRUCTS"]
    assert ns["STRUCTS"]["select"] is ns["select"] and ns["v"].name == "v"
    assert ns["pass_"].PARAMS[:2] == ("from", "from_")


def _declared(fn_text: str) -> set[str]:
    head, _, body = fn_text.partition("{")
    params = set(re.findall(r"(\w+)\s*:", head.partition("(")[2]))
    return params | set(re.findall(r"\b(?:let|var)\s+(\w+)", body))


def _all_wgsl_modules():
    import glob
    import os
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = glob.glob(os.path.join(root, "rust_examples", "*.rs"))
    paths += glob.glob(os.path.join(root, "tests", "snapshots", "wgsl", "cases", "*.rs"))
    for path in paths:
        with open(path, encoding="utf-8") as f:
            r = import_source(f.read(), path)
        for k in r.kernels:
            yield k
    for name in KERNELS:
        yield _kernel(name)


def test_no_wgsl_helper_declares_a_module_scope_user_name():
    """The rule behind `wgsl._helper_locals`, checked on the text: the parameters and
    locals of a resource's helpers never spell a binding, workgroup array or struct."""
    for k in _all_wgsl_modules():
        for form in (k, insert_checks(k)):
            m = emit_wgsl_module(form)
            structs = set(re.findall(r"^struct (\w+)", m.code, re.M))
            resources = {b.name for b in m.bindings} | set(re.findall(r"^var<workgroup> (\w+)", m.code, re.M))
            for fn in re.findall(r"^fn gi_\w+\(.*?^}", m.code, re.M | re.S):
                name = fn[3:fn.index("(")]
                for r in (r for r in resources if name.endswith("_" + r)):  # a helper of resource r
                    types = set(re.findall(r"(?::|->)\s*(\w+)", fn) + re.findall(r"return (\w+)\(\)", fn))
                    clash = _declared(fn) & ({r} | (structs & types))
                    assert not clash, f"{k.name}: {clash} in\n{fn}"


# ---------------------------------------------------------------- the Namer itself

TARGETS = [NM.WGSL, NM.SLANG, NM.PTX, NM.PYTHON, NM.CPU]

rust_ident = st.from_regex(r"\A(?:[a-zA-Z_][a-zA-Z0-9_]{0,6}|[a-z]?[πσßöデータ][a-z0-9_]{0,3})\Z", fullmatch=True) \
    .filter(lambda s: s != "_")
reserved_ident = st.sampled_from(sorted(set().union(*(t.reserved for t in TARGETS)) | {"gi_u", "_goldy_x", "__y", "v", "i"}))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(rust_ident, reserved_ident), max_size=24), st.sampled_from(TARGETS))
def test_namer_is_injective_safe_and_keeps_safe_names(names, target):
    namer = NM.Namer(target, names)
    out = [namer(n) for n in dict.fromkeys(names)]
    assert len(set(out)) == len(out)
    for n, o in zip(dict.fromkeys(names), out):
        assert target.safe(o), (n, o)
        if target.ascii:
            assert o.isascii()
    seen: set[str] = set()
    for n in dict.fromkeys(names):
        if target.safe(n) and n not in seen:
            assert namer(n) == n
        seen.add(namer(n))
    assert NM.Namer(target, names).map == namer.map  # deterministic


def test_per_name_avoid_and_struct_keys():
    namer = NM.Namer(NM.WGSL, [("struct:v", "v", {"i"}), ("v", "v", {"v"}), ("i", "i", {"i"}), ("t", "t", ())])
    assert namer.struct("v") == "v" and namer("v") == "v_" and namer("i") == "i_" and namer("t") == "t"


def test_non_ascii_names_become_ascii():
    assert NM.ascii_ident("größe") == "gr_uf6__udf_e" and NM.ascii_ident("plain") == "plain"
    assert NM.ascii_text("// π ≈ 3") == "// \\u{3c0} \\u{2248} 3"
    namer = NM.Namer(NM.PTX, ["gr_uf6__udf_e", "größe"])
    assert namer("gr_uf6__udf_e") == "gr_uf6__udf_e" and namer("größe") == "gr_uf6__udf_e_"
    py = NM.Namer(NM.PYTHON, ["größe", "ﬁ", "fi"])  # Python folds `ﬁ` into `fi`
    assert py("größe") == "größe" and py("fi") == "fi" and py("ﬁ").isascii()


def test_reserved_words_are_never_produced():
    for t in TARGETS:
        words = NM.reserved_words(t)
        namer = NM.Namer(t, words)
        assert not set(namer.values()) & set(words), t.name
        assert all(not v.startswith(t.prefixes) for v in namer.values() if t.prefixes)


def test_random_struct_buffers_exercise_every_field():
    k = _kernel("main")
    args = random_inputs(k, 4, seed=1)
    param = args[[p.name for p in k.params].index("param")]
    assert set(param.dtype.names) == {"x", "vec4", "float", "π", "_pad0", "i"}
    assert np.any(param["π"] != 0)
