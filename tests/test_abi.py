"""The ABI plan (ir/abi.py) is what the emitters print and what the runtimes pack: binding
numbers and uniform members in the WGSL, the `.param` list of both PTX entries, the fields
of Slang's `_goldy_args` block; and one error-word decoder for every backend."""

from __future__ import annotations

import os
import re
import struct

import numpy as np
import pytest

from goldy_import.codegen import slang as S
from goldy_import.codegen.ptx import batch_entry, batchable, emit_ptx
from goldy_import.codegen.wgsl import emit_wgsl_module
from goldy_import.importer import import_file
from goldy_import.ir import abi as A
from goldy_import.ir import nodes as N
from goldy_import.ir.checks import check_sites, insert_checks
from goldy_import.runtime import cuda as C
from goldy_import.runtime.backend import BufferArg, CompileOptions, Dispatch, ImageArg, ScalarArg, TensorArg, UniformArg

from oracle import device

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = sorted(os.path.join(ROOT, "rust_examples", f) for f in os.listdir(os.path.join(ROOT, "rust_examples"))
                 if f.endswith(".rs")) + [os.path.join(ROOT, "tests", "data", f)
                                          for f in ("kitchen_sink.rs", "cpu_semantics.rs")]
ABI_SLANG = open(S.ABI_MODULE).read()


def _kernels():
    out = []
    for path in SOURCES:
        for k in import_file(path).kernels:
            out += [pytest.param(k, id=f"{k.name}-plain"), pytest.param(insert_checks(k), id=f"{k.name}-checked")]
    return out


KERNELS = _kernels()


def everything() -> N.Kernel:
    """kitchen_sink.rs `everything`: every parameter category, scalars of three types, sites."""
    k = next(k for k in import_file(os.path.join(ROOT, "tests", "data", "kitchen_sink.rs")).kernels
             if k.name == "everything")
    return insert_checks(k)


def test_every_category_and_check_sites_are_covered():
    cats = {p.category for path in SOURCES for k in import_file(path).kernels for p in k.params}
    assert cats == set(N.PARAM_CATEGORIES)
    scalars = {p.ty for path in SOURCES for k in import_file(path).kernels for p in k.params if p.category == "scalar"}
    assert scalars == {"u32", "i32", "f32", "bool"}
    k = everything()
    assert A.plan(k, "wgsl").checked and A.plan(k, "ptx").checked and A.plan(k, "slang").checked
    assert not A.plan(import_file(SOURCES[0]).kernels[0], "ptx").checked  # the IR as imported has no sites


# ---------------------------------------------------------------- WGSL


@pytest.mark.parametrize("kernel", KERNELS)
def test_wgsl_bindings_and_uniform_block_are_the_plan(kernel):
    abi = A.plan(kernel, "wgsl")
    m = emit_wgsl_module(kernel)
    block = abi.block(any(f.kind == "zero" for f in m.uniform_fields))
    decl = re.findall(r"@group\(0\) @binding\((\d+)\) var<([\w, ]+)> (\w+): ([^;]+);", m.code)
    want = []
    for b in abi.bindings:
        access = "read_write" if b.writable else "read"
        want.append((str(b.binding), f"storage, {access}", m.bindings[b.binding].name))
        assert m.bindings[b.binding].param == b.param and m.bindings[b.binding].stride == b.stride
        assert ("atomic<" in decl[b.binding][3]) == b.atomic
    if block.binding is not None:
        want.append((str(block.binding), "uniform", "gi_u"))
    if block.fault_binding is not None:
        want.append((str(block.fault_binding), "storage, read_write", "gi_faults"))
        assert f"array<atomic<u32>, {A.FAULT_WORDS}>" in decl[-1][3]
    assert [d[:3] for d in decl] == want
    assert (block.fault_binding is not None) == bool(check_sites(kernel)) == abi.checked
    assert (m.uniform_binding, m.uniform_size, m.fault_binding) == (block.binding, block.size, block.fault_binding)
    assert [(f.kind, f.param, f.ty, f.offset, f.size) for f in m.uniform_fields] == \
        [(w.role, w.param, w.ty, w.offset, w.size) for w in block.fields]
    if m.uniform_fields:  # the struct's members, in the plan's (offset) order
        members = re.search(r"struct gi_Uniforms \{\n(.*?)\n\}", m.code, re.S).group(1)
        assert [ln.split(":")[0].split()[-1] for ln in members.split("\n")] == [f.name for f in m.uniform_fields]


def test_wgsl_block_offsets_and_zero_words():
    abi = A.plan(everything(), "wgsl")
    plain, pinned = abi.block(False), abi.block(True)
    roles = [w.role for w in plain.fields]
    assert roles[:2] == ["uniform", "layout"] and roles[2] == "layout"  # 16-aligned members first
    assert all(w.size == 4 for w in plain.fields[3:])
    ends = [(w.offset, w.offset + w.size) for w in pinned.fields]
    assert all(a[1] == b[0] for a, b in zip(ends, ends[1:]))  # dense
    assert pinned.fields[-3:] == abi.zeros and [w.role for w in abi.zeros] == ["zero"] * 3
    assert plain.size % 16 == 0 and pinned.size >= ends[-1][1]
    assert plain.binding == pinned.binding == len(abi.bindings) and plain.fault_binding == len(abi.bindings) + 1


def test_wgpu_record_packs_the_plan():
    """runtime/wgpu packs each uniform member at its plan offset, from the bound argument."""
    dev = device("wgpu")
    be = dev.backend
    k = everything()
    comp = be.compile(k, CompileOptions())
    h = be.alloc(4096)
    args = _args(k, h)
    d = Dispatch(k, comp, args, (1, 1, 1), "abi")
    be.record(d)
    module = d.state.variant.module
    packed = bytes(d.state.packed)
    for f in module.uniform_fields:
        got = packed[f.offset:f.offset + f.size]
        a = args[f.param] if f.param >= 0 else None
        if f.kind == "scalar":
            fmt = {"f32": "<f", "i32": "<i"}.get(a.ty, "<I")
            assert got == struct.pack(fmt, int(a.value) if a.ty == "bool" else a.value), f.name
        elif f.kind == "uniform":
            assert got[:len(a.data)] == a.data
        elif f.kind == "layout":
            assert got == struct.pack("<12I", *a.layout)
        elif f.kind == "off":
            start = be._buffer_range(a.handle, a.offset, a.length, a.stride, "", k.name)[1]
            assert struct.unpack("<I", got)[0] == start  # element `offset` inside its aligned binding
        elif f.kind == "zero":
            assert got == b"\0\0\0\0"
        else:
            assert struct.unpack("<I", got)[0] == getattr(a, A.ARG_FIELD[f.kind]), f.name


# ---------------------------------------------------------------- PTX

PARAM_RE = re.compile(r"\.param (?:\.align (\d+) )?(\.\w+) (\w+?)(?:\[(\d+)\])?[,\n]")


def _ptx_entries(text: str) -> dict[str, list]:
    out = {}
    for name, params in re.findall(r"\.entry (\w+)\(\n(.*?)\)", text, re.S):
        out[name] = PARAM_RE.findall(params + "\n")
    return out


@pytest.mark.parametrize("kernel", KERNELS)
def test_ptx_params_are_the_plan(kernel):
    abi = A.plan(kernel, "ptx")
    entries = _ptx_entries(emit_ptx(kernel, batch=4))
    names = {kernel.name: False}
    if batchable(kernel):
        names[batch_entry(kernel, 4)] = True
    assert set(entries) == set(names)
    for entry, batched in names.items():
        want = []
        for w in abi.entry(batched):
            name = f"p{w.param}_{kernel.params[w.param].name}{w.suffix}" if w.param >= 0 else w.suffix
            want.append(("4" if w.array else "", w.ty, name, str(w.array) if w.array else ""))
        assert entries[entry] == want, entry
    assert (abi.fault_param is not None) == abi.checked == bool(check_sites(kernel))
    for i, p in enumerate(kernel.params):
        assert abi.params[abi.slots[i]].param == i and all(w.param == i for w in
                                                           abi.params[abi.slots[i]:(list(abi.slots) + [len(abi.params)])[i + 1]])


def _args(k: N.Kernel, h) -> list:
    """Distinct values for every word, so a misplaced one shows."""
    out = []
    for i, p in enumerate(k.params):
        if p.category in N.BUFFER_CATEGORIES:
            out.append(BufferArg(h, 2 + i, 5 + i, p.ty, A.element_stride(p.ty, {s.name: s for s in k.structs})))
        elif p.category == "scalar":
            out.append(ScalarArg(p.ty, {"f32": 1.5 + i, "u32": 7 + i, "i32": -7 - i, "bool": True}[p.ty]))
        elif p.category in N.TENSOR_CATEGORIES:
            out.append(TensorArg(h, p.ty, (i, 1, 6, 6, 1, 1, 1, 1, 0, 0, 0, 1), 40 + i))
        elif p.category == "uniform":
            size = A.element_stride(p.ty, {s.name: s for s in k.structs})
            out.append(UniformArg(bytes(range(i, i + size)), p.ty))
        else:
            out.append(ImageArg(h, 3 + i, 4 + i, p.ty))
    return out


def test_cuda_packs_every_param_by_its_role():
    k = everything()
    abi = A.plan(k, "ptx")
    mem = C.CudaMemory(0x7000_0000, 1 << 20, owned=False)
    args = _args(k, mem)
    uptrs = {i: 0x5000 + i for i, a in enumerate(args) if isinstance(a, UniformArg)}
    values = C.entry_values(k, args, uptrs, None, 0xF00D_0000, 9, abi)
    assert [len(v) for v in values] == [w.size for w in abi.entry(True)]
    for w, v in zip(abi.entry(True), values):
        a = args[w.param] if w.param >= 0 else None
        if w.role == "buffer":
            off = a.offset * a.stride if isinstance(a, BufferArg) else 0
            assert v == struct.pack("<Q", 0x7000_0000 + off)
        elif w.role == "uniform":
            assert v == struct.pack("<Q", uptrs[w.param])
        elif w.role == "layout":
            assert v == struct.pack("<12I", *a.layout)
        elif w.role == "scalar":
            fmt = {".f32": "<f", ".s32": "<i", ".u32": "<I"}[w.ty]
            assert v == struct.pack(fmt, int(a.value) if a.ty == "bool" else a.value)
        elif w.role == "faults":
            assert v == struct.pack("<Q", 0xF00D_0000)
        elif w.role == "groups_x":
            assert v == struct.pack("<I", 9)
        else:
            assert v == struct.pack("<I", getattr(a, A.ARG_FIELD[w.role]))
    assert C.param_slots(k) == list(abi.slots)


# ---------------------------------------------------------------- Slang


def _slang_struct(name: str) -> list[str]:
    body = re.search(r"public struct " + name + r"(?:<T>)?\s*\{(.*?)\n\}", ABI_SLANG, re.S).group(1)
    return re.findall(r"public [\w<>]+ (_\w+);", body)


@pytest.mark.parametrize("kernel", KERNELS)
def test_slang_args_block_is_the_plan(kernel):
    abi = A.plan(kernel, "slang")
    text = S.emit_wrapper_from_kernel_def(kernel)
    body = re.search(r"struct _GoldyArgs\n\{\n(.*?)\n\};\nParameterBlock<_GoldyArgs> (\w+);", text, re.S)
    assert body.group(2) == A.ARGS_BLOCK
    fields = [ln.strip().rstrip(";").split() for ln in body.group(1).split("\n")]
    assert len(fields) == len(abi.fields)
    names = S.Names(kernel)
    for (ty, name), f in zip(fields, abi.fields):
        if f.role == "nwg":
            assert (ty, name) == ("uint3", A.NWG_FIELD)
        elif f.role == "faults":
            assert (ty, name) == (A.FAULTS_TYPE, A.FAULTS)
            assert _slang_struct(A.FAULTS_TYPE) == [m for m, _ in f.members]
        else:
            assert name == names(kernel.params[f.param].name)
            if f.role == "resource":  # its members are the goldy_abi struct's, in order
                assert _slang_struct(ty.split("<")[0]) == [m for m, _ in f.members], ty
            elif f.role == "uniform":
                assert ty.startswith("StructuredBuffer<")
    assert abi.checked == bool(check_sites(kernel)) == (f"{A.FAULTS_TYPE} {A.FAULTS}" in text)


def test_slang_layout_members_are_the_tensor_record():
    body = re.search(r"public struct GoldyTensorLayout\s*\{(.*?)\n\}", ABI_SLANG, re.S).group(1)
    assert tuple(re.findall(r"public uint (\w+);", body)) == A.TENSOR_LAYOUT


def test_slang_bind_fills_the_plan():
    dev = device("slang")
    from goldy_import.runtime.slang import Compiled
    be = dev.backend
    k = everything()
    abi = A.plan(k, "slang")
    h = be.alloc(4096)
    args = _args(k, h)
    d = Dispatch(k, Compiled(None, False, k.workgroup_size, "", abi), args, (2, 3, 4), "abi")
    got = be._bind(d)
    names = S.Names(k)
    assert got[A.NWG_FIELD] == [2, 3, 4]
    for f in abi.fields:
        if f.param < 0:
            continue
        a, v = args[f.param], got[names(k.params[f.param].name)]
        if f.role == "resource":
            assert list(v) == [m for m, _ in f.members]
            for m, role in f.members:
                want = dict(zip(A.TENSOR_LAYOUT, a.layout)) if role == "layout" else getattr(a, A.ARG_FIELD[role])
                assert v[m] is want if role == "buffer" else v[m] == want
        elif f.role == "scalar":
            assert v == (np.float32(a.value) if a.ty == "f32" else a.value)
        else:
            assert np.asarray(v.to_numpy()).view(np.uint8).tobytes()[:len(a.data)] == a.data


# ---------------------------------------------------------------- the error word


def test_error_word_layout():
    assert A.FAULT_WORDS == A.ERROR_WORD.words == 8
    assert [n for n, _ in A.ERROR_WORD.fields[:5]] == ["flag", "site", "index", "length", "index_y"]
    # what each emitter writes where: WGSL's gi_fault, PTX's fault blocks, goldy_abi.slang
    wgsl = emit_wgsl_module(everything()).code
    for name in ("site", "index", "length", "index_y"):
        assert f"atomicStore(&gi_faults[{A.ERROR_WORD.index(name)}], {name});" in wgsl
    assert f"atomicCompareExchangeWeak(&gi_faults[{A.ERROR_WORD.index('flag')}], 0u, 1u)" in wgsl
    offs = {int(x) for x in re.findall(r"st\.global\.u32 \[%rd\d+\+(\d+)\]", emit_ptx(everything()))}
    assert offs == {4 * A.ERROR_WORD.index(n) for n in ("site", "index", "length", "index_y")}
    for name in ("site", "index", "length", "index_y"):
        assert f"w[off + {A.ERROR_WORD.index(name)}u] = {name};" in ABI_SLANG


def _word(**kw) -> list[int]:
    w = [0] * A.FAULT_WORDS
    for name, v in kw.items():
        w[A.ERROR_WORD.index(name)] = v
    return w


def test_decode_fault_flag():
    assert A.decode_fault(_word(site=3, index=4, length=5), 0) is None  # no flag, nothing recorded
    assert A.decode_fault(_word(flag=1), 2) == A.FaultReport(2, 0, 0, 0, None)


def test_decode_fault_site():
    assert A.decode_fault(_word(flag=1, site=7), 0).site == 7


def test_decode_fault_index():
    assert A.decode_fault(_word(flag=1, index=0xFFFF_FFFF), 0).index == 0xFFFF_FFFF


def test_decode_fault_length():
    assert A.decode_fault(_word(flag=1, length=12), 0).length == 12


def test_decode_fault_index_y_only_for_texel_sites():
    w = _word(flag=1, site=2, index=9, length=8, index_y=5)
    assert A.decode_fault(w, 1, frozenset({2})) == A.FaultReport(1, 2, 9, 8, 5)
    assert A.decode_fault(w, 1, frozenset({3})).index_y is None


def test_decode_fault_ignores_spare_words():
    w = _word(flag=1, site=1)
    w[5:] = [0xDEAD, 0xBEEF, 1]
    assert A.decode_fault(np.array(w, np.uint32), 0) == A.FaultReport(0, 1, 0, 0, None)


def test_decode_faults_over_slots():
    k = everything()
    abi = A.plan(k, "wgsl")
    (texel,) = abi.texel_sites
    assert {s.id for s in check_sites(k) if k.param(s.resource or "") is not None
            and k.param(s.resource).category == "image"} == {texel}
    stride = 64
    raw = [0] * (3 * stride)
    raw[stride:stride + A.FAULT_WORDS] = _word(flag=1, site=texel, index=1, length=2, index_y=3)
    got = A.decode_faults(raw, stride, [(4, abi), (6, abi), (9, abi)])
    assert got == [A.FaultReport(6, texel, 1, 2, 3)]
    assert A.decode_faults([0] * (2 * stride), stride, [(0, abi), (1, abi)]) is None


def test_plan_is_pure_and_rejects_unknown_targets():
    k = everything()
    for target in ("wgsl", "ptx", "slang"):
        assert A.plan(k, target) == A.plan(k, target)
    with pytest.raises(ValueError, match="no ABI plan"):
        A.plan(k, "metal")
