"""Canonical Slang: snapshots, the real Slang compiler on every kernel, hand-written
sources, the ABI module, and GOLDY_DUMP_RUST_KERNELS dumps.

GOLDY_UPDATE_SNAPSHOTS=1 rewrites tests/snapshots/slang/."""

from __future__ import annotations

import glob
import json
import os
import re

import pytest

from goldy_import.codegen import slang as S
from goldy_import.codegen.slang.lanes import emit_lane_serial
from goldy_import.codegen.slang.text import ABI_NAMES, signature_builtins
from goldy_import.importer import import_file, import_source
from goldy_import.ir import layout as L
from goldy_import.ir import nodes as N
from goldy_import.ir.checks import check_sites, insert_checks
from oracle import check_snapshot

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SNAPSHOTS = os.path.join(REPO, "tests", "snapshots", "slang")


def _all_kernels():
    out = []
    for path in sorted(glob.glob(os.path.join(REPO, "rust_examples", "*.rs"))
                       + glob.glob(os.path.join(REPO, "tests", "data", "*.rs"))):
        rel = os.path.relpath(path, REPO)
        for k in import_file(rel if os.path.exists(rel) else path).kernels:
            out.append(pytest.param(k, id=f"{os.path.basename(path)}:{k.name}"))
    return out


KERNELS = _all_kernels()


def _kernel(rel: str, name: str) -> N.Kernel:
    cwd = os.getcwd()
    os.chdir(REPO)  # relative source paths keep the snapshots machine-independent
    try:
        return import_file(rel).kernel(name)
    finally:
        os.chdir(cwd)


def _check_snapshot(name: str, text: str) -> None:
    check_snapshot(os.path.join(SNAPSHOTS, name), text, "GOLDY_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest -q "
                   "-p no:cacheprovider tests/test_slang_codegen.py")


@pytest.mark.parametrize("rel,kernel,snap", [
    ("rust_examples/saxpy.rs", "saxpy", "saxpy.slang"),
    ("rust_examples/collectives.rs", "group_sum_max", "group_sum_max.slang"),
    ("rust_examples/particles.rs", "particle_stats", "particle_stats.slang"),
])
def test_canonical_snapshot(rel, kernel, snap):
    _check_snapshot(snap, S.emit_slang(_kernel(rel, kernel)))


def test_lane_serial_snapshot():
    _check_snapshot("block_sum.cpu_lanes.slang", emit_lane_serial(_kernel("rust_examples/reduce_manual.rs", "block_sum")))


def test_checked_snapshots():
    """Trapping-check sites (ir/checks.py): a checked access or division goes through a
    `*_checked` ABI helper with its site id and the error word, which the canonical
    function takes last, the wrapper binds from `_goldy_args` and the lane-serial form
    copies into a local."""
    _check_snapshot("histogram.checked.wrapped.slang",
                    S.emit_wrapper(insert_checks(_kernel("rust_examples/histogram.rs", "histogram"))))
    _check_snapshot("tiled_transpose.checked.cpu_lanes.slang",
                    emit_lane_serial(insert_checks(_kernel("rust_examples/tiled_transpose.rs", "tiled_transpose"))))


def test_checked_rendering():
    k = insert_checks(_kernel("tests/data/kitchen_sink.rs", "everything"))
    sites = check_sites(k)
    src = S.emit_slang(k)
    assert re.search(r"void cs_main\(.*, GroupThreadId _goldy_lid, GoldyFaults _goldy_faults\)", src)
    for site in sites:  # one comment per site, naming the Rust location
        assert f"//   site {site.id}: " in src
        assert f"at tests/data/kitchen_sink.rs:{site.span.line}:{site.span.col}" in src
        # every site id is passed to exactly one helper call
        assert len(re.findall(rf"\b{site.id}u, _goldy_faults\)", src)) == 1, site
    kinds = {s.kind for s in sites}
    assert kinds == {"index", "divide"}
    for helper in ("load_checked(", "store_checked(", "atomic_add_checked(", "rust_rem_checked(",
                   "img.store_checked(", "t.load_checked(", "tw.store_checked("):
        assert helper in src, helper
    # without sites (checks off, or all proven) there is no error-word traffic at all
    plain = _kernel("tests/data/kitchen_sink.rs", "everything")
    for text in (S.emit_slang(plain), S.emit_wrapper(plain), emit_lane_serial(plain)):
        assert "_goldy_faults" not in text and "GoldyFaults" not in text and "_checked(" not in text
    abi = S.abi_description(k)
    assert [(d["site"], d["kind"], d["line"]) for d in abi["check_sites"]] == [
        (s.id, s.kind, s.span.line) for s in sites]


def test_canonical_shape():
    k = _kernel("tests/data/kitchen_sink.rs", "everything")
    src = S.emit_slang(k)
    assert "[goldy_compute]\n[numthreads(256, 1, 1)]\nvoid cs_main(" in src
    sig = re.search(r"void cs_main\((.*)\)", src).group(1)
    assert sig == ("BufRO<Vertex> verts, BufRO<uint> data, Scattered<float> out_, Scattered<uint> hist, Scattered<int> sc, "
                   "Tensor<float> t, TensorWrite<float> tw, Uniform<Params> p, DirectSpatial<float4> img, uint n, "
                   "int k, bool flag, ThreadId _goldy_gid, GroupThreadId _goldy_lid")
    assert "groupshared float scratch[256];" in src
    assert "GroupMemoryBarrierWithGroupSync();" in src
    # structs come first, padded to ir.layout: Vertex is 32 bytes with uv at 16
    assert src.index("struct Vertex") < src.index("void cs_main")
    assert "struct Vertex\n{\n    float3 position;\n    uint _pad0;\n    float2 uv;\n    uint _pad1;\n    uint _pad2;\n};" in src
    assert "GoldyMat4 m;" in src
    # Rust semantics spelled out, not left to the target
    for helper in ("wrapping_neg(", "rust_rem(", "wrapping_shr(", "rust_max(", "rust_min(",
                   "mat_mul(", "rust_dot(", "rust_length(", "atomic_add(hist"):
        assert helper in src, helper


def test_struct_padding_matches_ir_layout():
    """Walk the emitted struct text with 4-byte C packing: every field lands on its
    ir.layout offset and the struct on its stride."""
    sizes = {"float": 4, "uint": 4, "int": 4, "float2": 8, "float3": 12, "float4": 16, "uint2": 8, "uint3": 12,
             "uint4": 16, "int2": 8, "int3": 12, "int4": 16, "GoldyMat2": 16, "GoldyMat3": 48, "GoldyMat4": 64}
    k = _kernel("tests/data/kitchen_sink.rs", "everything")
    src = S.emit_slang(k)
    for decl in k.structs:
        body = re.search(r"struct " + decl.name + r"\n\{\n(.*?)\n\};", src, re.S).group(1)
        at, offsets = 0, {}
        for line in body.splitlines():
            ty, name = line.strip().rstrip(";").split()
            offsets[name] = at
            at += sizes[ty]
        lay = L.struct_layout(decl)
        assert at == lay.stride
        for f in lay.fields:
            assert offsets[f.name] == f.offset, (decl.name, f.name)


def test_reserved_names_are_escaped():
    src = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(input: &[f32], float: &mut [f32], min: f32) {
    let i = gpu::global_id().x;
    let matrix = input[i].max(min);
    let out_ = 1.0;
    if i < float.len() { float[i] = matrix + out_; }
}
"""
    text = S.emit_slang(import_source(src, "k.rs").kernel("k"))
    assert "Scattered<float> float_, float min_" in text
    assert "float matrix_ = rust_max(input[i], min_);" in text


def test_abi_module_exports_what_the_emitter_reserves():
    with open(S.ABI_MODULE, encoding="utf-8") as f:
        text = f.read()
    # top-level declarations only (members are reached through their struct)
    public = set(re.findall(r"^public\s+(?:struct|typealias)\s+(\w+)", text, re.M))
    public |= set(re.findall(r"^public\s+[\w<>, ]+?\s+(\w+)\s*(?:<[^>]*>)?\s*\(", text, re.M))
    assert {"BufRO", "wrapping_add", "rust_round", "atomic_add", "GoldyTensorLayout"} <= public
    missing = {n for n in public if n not in ABI_NAMES}
    assert not missing, f"public ABI names the emitter does not reserve: {missing}"


# ---------------------------------------------------------------- the real compiler

@pytest.fixture(scope="module")
def cpu_device():
    from oracle import backend_or_skip
    backend_or_skip("slang")  # fails instead when GOLDY_REQUIRE_BACKENDS names slang
    import slangpy as spy
    opts = spy.SlangCompilerOptions({"include_paths": [S.ABI_DIR], "disable_warnings": ["38040"]})
    dev = spy.Device(type=spy.DeviceType.cpu, compiler_options=opts, enable_hot_reload=False)
    yield dev
    dev.close()


_counter = [0]


def _load(dev, src: str):
    _counter[0] += 1
    return dev.load_module_from_source(f"goldy_check_{_counter[0]}", src)


@pytest.mark.parametrize("kernel", KERNELS)
def test_real_compiler_accepts_canonical(cpu_device, kernel):
    """The canonical source goes through the Slang front end as is. Slang's CPU target has
    no barrier, so for a kernel that synchronises, the session (tied to the CPU device) can
    only check it without `[numthreads]`, i.e. not as an entry point; its lane-serial form
    is then linked as the CPU entry instead."""
    canonical = S.emit_slang(kernel)
    if S.uses_barriers(kernel):
        from goldy_import.codegen.slang.handwritten import rename_entry
        _load(cpu_device, rename_entry(canonical, "cs_main", "cs_main"))
        wrapped = emit_lane_serial(kernel)
    else:
        _load(cpu_device, canonical)
        wrapped = S.emit_wrapper(kernel)
    module = _load(cpu_device, wrapped)
    cpu_device.link_program([module], [module.entry_point(S.ENTRY_POINT)])


@pytest.mark.parametrize("kernel", KERNELS)
def test_real_compiler_accepts_checked(cpu_device, kernel):
    """The same with trapping-check sites: canonical, wrapper and lane-serial forms."""
    checked = insert_checks(kernel)
    canonical = S.emit_slang(checked)
    if S.uses_barriers(checked):
        from goldy_import.codegen.slang.handwritten import rename_entry
        _load(cpu_device, rename_entry(canonical, "cs_main", "cs_main"))
        wrapped = emit_lane_serial(checked)
    else:
        _load(cpu_device, canonical)
        wrapped = S.emit_wrapper(checked)
    module = _load(cpu_device, wrapped)
    cpu_device.link_program([module], [module.entry_point(S.ENTRY_POINT)])


def test_compiler_rejects_a_type_error(cpu_device):
    k = _kernel("rust_examples/saxpy.rs", "saxpy")
    bad = S.emit_slang(k).replace("y[i] = rust_fadd((a * x[i]), y[i]);", "y[i] = x;")
    with pytest.raises(Exception, match="x"):
        _load(cpu_device, bad)


# ---------------------------------------------------------------- hand-written sources

GOOD = """
import goldy_abi;
struct Vertex { float3 position; uint _pad0; float2 uv; uint _pad1; uint _pad2; };

/* hand-written: [goldy_compute] in a comment does not count */
[numthreads(64, 2, 1)]
[goldy_compute]
void blend(BufRO<Vertex> verts, BufRW<float> acc, Scattered<int> flags, Tensor<float> t,
           Uniform<Vertex> u, float w, uint n, bool on, GroupId wid, ThreadId gid)
{
    uint i = gid.x;
    if (on && i < n) { acc[i] = acc[i] + w * verts[i].uv.y + t[i] + u.position.x; flags[i] = int(wid.x); }
}
"""


def test_handwritten_definition():
    kdef, why = S.try_kernel_def_from_source(GOOD, "blend.slang")
    assert kdef is not None, why
    assert isinstance(kdef, N.Kernel) and kdef.body == []  # opaque: no retained IR
    assert kdef.name == "blend" and kdef.workgroup_size == (64, 2, 1)
    # Goldy's `Scattered<T>` is its writable buffer, which a kernel may also read
    assert [(p.name, p.category, p.ty) for p in kdef.params] == [
        ("verts", "read", "struct:Vertex"), ("acc", "read_write", "f32"), ("flags", "read_write", "i32"),
        ("t", "tensor", "f32"), ("u", "uniform", "struct:Vertex"), ("w", "scalar", "f32"),
        ("n", "scalar", "u32"), ("on", "scalar", "bool")]
    assert kdef.builtins == ["global_id", "workgroup_id"]
    assert kdef.call_order[-2:] == ["workgroup_id", "global_id"]
    assert L.struct_layout(kdef.struct("Vertex")).stride == 32
    wrapper = S.emit_wrapper_from_kernel_def(kdef)
    assert "void _goldy_user_blend(" in wrapper and '[shader("compute")]' in wrapper
    assert "_goldy_user_blend(_goldy_args.verts, _goldy_args.acc, _goldy_args.flags, _goldy_args.t, " \
           "_goldy_args.u[0], _goldy_args.w, _goldy_args.n, _goldy_args.on, _goldy_sv_wid, _goldy_sv_gid);" in wrapper
    assert "[goldy_compute]\nvoid" not in wrapper and wrapper.count("[numthreads(") == 1


def test_handwritten_wrapper_compiles(cpu_device):
    kdef, why = S.try_kernel_def_from_source(GOOD)
    assert kdef is not None, why
    module = _load(cpu_device, S.emit_wrapper_from_kernel_def(kdef))
    cpu_device.link_program([module], [module.entry_point(S.ENTRY_POINT)])


@pytest.mark.parametrize("src,reason", [
    ("void f() {}", "no `[goldy_compute]`"),
    ("[goldy_compute][numthreads(1,1,1)] void f() {}\n[goldy_compute][numthreads(1,1,1)] void g() {}", "2 `[goldy_compute]`"),
    ("[goldy_compute] void f(uint n) {}", "no `[numthreads(X, Y, Z)]`"),
    ("[goldy_compute][numthreads(N,1,1)] void f(uint n) {}", "no `[numthreads(X, Y, Z)]`"),
    ("[goldy_compute][numthreads(8,1,1)] void f(RWStructuredBuffer<float> b) {}", "not an ABI type"),
    ("[goldy_compute][numthreads(8,1,1)] void f(double d) {}", "not an ABI type"),
    ("[goldy_compute][numthreads(8,1,1)] void f(BufRO<Missing> b) {}", "unknown element type"),
    ("[goldy_compute][numthreads(8,1,1)] void f(BufRW<float> b, BufRO<float> b) {}", "declared twice"),
    ("struct V { float3 p; float2 uv; };\n[goldy_compute][numthreads(8,1,1)] void f(BufRO<V> v) {}",
     "field `uv` is at byte 12 with C packing but at byte 16"),
    ("struct V { float3 p; };\n[goldy_compute][numthreads(8,1,1)] void f(BufRO<V> v) {}", "pad it to 16 bytes"),
    ("[goldy_compute][numthreads(8,1,1)] void f(Uniform<float> u) {}", "needs a struct"),
    ("struct V { float3 p; Foo q; };\n[goldy_compute][numthreads(8,1,1)] void f(BufRO<V> v) {}",
     "unsupported field `Foo q`"),
])
def test_handwritten_refusals(src, reason):
    kdef, why = S.try_kernel_def_from_source(src)
    assert kdef is None
    assert reason in why


@pytest.mark.parametrize("kernel", KERNELS)
def test_canonical_reads_back_as_a_definition(kernel):
    """Every canonical source is itself valid hand-written input with the same ABI."""
    kdef, why = S.try_kernel_def_from_source(S.emit_slang(kernel))
    assert kdef is not None, why
    assert kdef.workgroup_size == kernel.workgroup_size
    names = S.Names(kernel)
    # Goldy's vocabulary has one writable buffer, `Scattered<T>`: `&mut [T]` and
    # `gpu::Scattered<T>` both read back as read_write (a superset of write)
    want = [(names(p.name), "read_write" if p.category == "write" else p.category,
             "u32" if p.ty == "bool" and p.category != "scalar" else p.ty)
            for p in kernel.params]
    assert [(p.name, p.category, p.ty) for p in kdef.params] == want
    assert kdef.call_builtins == signature_builtins(kernel)


# ---------------------------------------------------------------- dumps

def test_dump_kernel(tmp_path):
    k = _kernel("rust_examples/particles.rs", "particle_stats")
    paths = S.dump_kernel(k, str(tmp_path / "dumps"))
    assert sorted(os.path.basename(p) for p in paths) == [
        "particle_stats.abi.json", "particle_stats.slang", "particle_stats.wrapped.slang"]
    with open(tmp_path / "dumps" / "particle_stats.slang") as f:
        assert f.read() == S.emit_slang(k)
    with open(tmp_path / "dumps" / "particle_stats.abi.json") as f:
        abi = json.load(f)
    assert abi["workgroup_size"] == [64, 1, 1]
    assert [(p["name"], p["category"], p.get("stride")) for p in abi["params"]] == [
        ("particles", "read", 32), ("energy", "read_write", 4), ("distance", "read_write", 4)]
    assert abi["builtins"] == [{"builtin": "global_id", "slang_type": "ThreadId"}]
    assert abi["structs"][0]["fields"][2] == {"name": "mass", "type": "f32", "offset": 28, "size": 4}
    lanes = S.dump_kernel(_kernel("rust_examples/collectives.rs", "group_sum_max"), str(tmp_path / "dumps"))
    assert any(p.endswith("group_sum_max.cpu_lanes.slang") for p in lanes)
    kdef, _ = S.try_kernel_def_from_source(GOOD)
    S.dump_kernel(kdef, str(tmp_path / "hand"))
    assert json.loads((tmp_path / "hand" / "blend.abi.json").read_text())["handwritten"] is True


def test_dump_on_prepare(tmp_path, monkeypatch):
    """prepare writes the dump when GOLDY_DUMP_RUST_KERNELS names a directory."""
    import goldy_import as gi
    monkeypatch.setenv("GOLDY_DUMP_RUST_KERNELS", str(tmp_path / "d"))
    mod = gi.load(os.path.join(REPO, "rust_examples", "saxpy.rs"))
    dev = gi.Device("cpu")
    try:
        mod.saxpy.prepare(dev)
    finally:
        dev.close()
    from goldy_import.ir.checks import insert_checks  # prepare dumps what it compiles: checks on
    assert (tmp_path / "d" / "saxpy.slang").read_text() == S.emit_slang(insert_checks(import_file(
        os.path.join(REPO, "rust_examples", "saxpy.rs")).kernel("saxpy")))
    assert json.loads((tmp_path / "d" / "saxpy.abi.json").read_text())["kernel"] == "saxpy"
