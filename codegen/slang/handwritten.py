"""Hand-written canonical Slang: parse one `[goldy_compute]` function's signature into the
kernel definition shape the importer produces (a `Kernel` with name, workgroup size,
categorised params and builtins) so it binds, validates and records like an imported
kernel. It has no body IR: it is opaque to fusion and runs only on the slang backend."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from goldy_import.errors import BackendError
from goldy_import.ir import layout as L
from goldy_import.ir import nodes as N
from goldy_import.ir import types as T


@dataclass
class HandwrittenKernel(N.Kernel):
    """A kernel defined by Slang source. `body` is empty; `slang_source` is the truth."""

    slang_source: str = ""
    entry: str = ""  # the [goldy_compute] function's name in the source
    call_order: list[str] = field(default_factory=list)  # param names and builtin keys, as declared
    call_builtins: list[str] = field(default_factory=list)  # builtins in declaration order


_SCALARS = {"float": "f32", "uint": "u32", "int": "i32", "bool": "bool"}
_VECTORS = {f"{s}{n}": T.vec(ir, n) for s, ir in (("float", "f32"), ("uint", "u32"), ("int", "i32"))
            for n in (2, 3, 4)}
_MATS = {f"GoldyMat{n}": T.mat(n) for n in (2, 3, 4)}
_WRAPPERS = {"BufRO": "read", "BufRW": "read_write", "Scattered": "read_write", "Tensor": "tensor",
             "TensorMut": "tensor_mut", "TensorWrite": "tensor_write", "Uniform": "uniform",
             "DirectSpatial": "image"}
_BUILTIN_TYPES = {"ThreadId": "global_id", "GroupThreadId": "local_id", "GroupId": "workgroup_id",
                  "GroupCount": "num_workgroups"}
_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


def _strip_comments(src: str) -> str:
    """Blank out comments, keeping offsets (so positions still match the source)."""
    def blank(m: re.Match) -> str:
        return re.sub(r"[^\n]", " ", m.group(0))
    return re.sub(r"//[^\n]*|/\*.*?\*/", blank, src, flags=re.S)


def _split_params(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "<(["
        depth -= ch in ">)]"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _structs(code: str) -> tuple[dict[str, N.StructDecl], Optional[str]]:
    """Parse `struct Name { type field; ... };` declarations. Fields named `_pad*` are
    explicit padding. A struct whose fields would not sit at their ir.layout offsets on
    every target (C layout packs a float3 in 12 bytes) is refused with the reason."""
    out: dict[str, N.StructDecl] = {}
    for m in re.finditer(r"\bstruct\s+(" + _IDENT + r")\s*\{([^{}]*)\}", code):
        name, body = m.group(1), m.group(2)
        fields: list[N.StructField] = []
        natural = 0  # byte offset with 4-byte packing (the CPU target's C layout)
        problem = None
        for decl in body.split(";"):
            decl = decl.strip()
            if not decl:
                continue
            fm = re.fullmatch(r"(" + _IDENT + r")\s+(" + _IDENT + r")", decl)
            ty = (_SCALARS.get(fm.group(1)) or _VECTORS.get(fm.group(1)) or _MATS.get(fm.group(1))) if fm else None
            if fm is None or ty is None or ty == "bool":
                problem = problem or f"struct `{name}`: unsupported field `{decl}`"
                continue
            if fm.group(2).startswith("_pad"):
                natural += L.size_of(ty)
                continue
            fields.append(N.StructField(fm.group(2), ty, N.NO_SPAN))
            decl_ir = N.StructDecl(name, list(fields), N.NO_SPAN)
            want = L.struct_layout(decl_ir).fields[-1].offset
            if want != natural and problem is None:
                problem = (f"struct `{name}`: field `{fm.group(2)}` is at byte {natural} with C packing but at "
                           f"byte {want} in the GPU layout; add explicit `uint _padN;` fields before it")
            natural = want + L.size_of(ty)
        if fields:
            decl_ir = N.StructDecl(name, fields, N.NO_SPAN)
            stride = L.struct_layout(decl_ir).stride
            if natural != stride and problem is None:
                problem = (f"struct `{name}` is {natural} bytes with C packing but its GPU stride is {stride}; "
                           f"pad it to {stride} bytes with `uint _padN;` fields")
            out[name] = decl_ir
        if problem:
            return out, problem
    return out, None


_ENTRY_ATTRS = re.compile(r"\[\s*(?:goldy_compute|numthreads\s*\([^)\]]*\))\s*\]")


def rename_entry(src: str, entry: str, new: str) -> str:
    """`src` with its `[goldy_compute]` function renamed `new` and that function's
    `[goldy_compute]`/`[numthreads]` attributes removed: Slang treats any function carrying
    `[numthreads]` as an entry point, and the wrapper supplies the real one."""
    code = _strip_comments(src)
    mark = re.search(r"\[\s*goldy_compute\s*\]", code)
    fn = re.compile(r"void\s+" + re.escape(entry) + r"\s*\(").search(code, mark.end()) if mark else None
    if mark is None or fn is None:
        raise BackendError(f"no `[goldy_compute]` function `{entry}` in the Slang source")
    start = mark.start()
    before = re.search(r"\[\s*numthreads\s*\([^)\]]*\)\s*\]\s*$", code[:start])
    if before:
        start = before.start()
    attrs = _ENTRY_ATTRS.sub("", src[start:fn.start()]).strip()
    head = "// [goldy_compute] entry, called by the wrapper below\n" + (attrs + "\n" if attrs else "")
    return src[:start] + head + f"void {new}(" + src[fn.end():]


def try_kernel_def_from_source(src: str, filename: str = "<slang>") -> tuple[Optional[HandwrittenKernel], str]:
    """(kernel, "") for a source with exactly one `[goldy_compute]` function whose signature
    uses the ABI names (goldy_abi.slang); otherwise (None, the reason)."""
    code = _strip_comments(src)
    marks = list(re.finditer(r"\[\s*goldy_compute\s*\]", code))
    if not marks:
        return None, "no `[goldy_compute]` function in the source"
    if len(marks) > 1:
        return None, f"{len(marks)} `[goldy_compute]` functions; expected exactly one"
    attr = re.compile(r"\s*(?:\[\s*numthreads\s*\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)\s*\]|\[[^\]]*\])")
    pos = marks[0].end()
    wg = None
    while (m := attr.match(code, pos)) is not None:
        if m.group(1):
            wg = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        pos = m.end()
    # attributes may also precede [goldy_compute]
    before = re.search(r"\[\s*numthreads\s*\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)\s*\]\s*$", code[:marks[0].start()])
    if wg is None and before:
        wg = (int(before.group(1)), int(before.group(2)), int(before.group(3)))
    if wg is None:
        return None, "the `[goldy_compute]` function has no `[numthreads(X, Y, Z)]` with integer literals"
    if any(d < 1 for d in wg):
        return None, f"workgroup size {list(wg)} must be positive"
    fm = re.compile(r"\s*void\s+(" + _IDENT + r")\s*\(([^)]*)\)\s*\{").match(code, pos)
    if fm is None:
        return None, "expected `void name(...) {` after `[goldy_compute]`"
    entry, plist = fm.group(1), fm.group(2)
    structs, problem = _structs(code)
    if problem:
        return None, problem
    params: list[N.Param] = []
    order: list[str] = []
    builtins: list[str] = []
    for text in _split_params(plist):
        pm = re.fullmatch(r"(?:(?:in|const)\s+)?(" + _IDENT + r")\s*(?:<\s*(" + _IDENT + r")\s*>)?\s+(" + _IDENT + r")",
                          text)
        if pm is None:
            return None, f"cannot read parameter `{text}`"
        outer, inner, pname = pm.groups()
        if outer in _BUILTIN_TYPES and inner is None:
            b = _BUILTIN_TYPES[outer]
            if b in builtins:
                return None, f"builtin `{outer}` declared twice"
            builtins.append(b)
            order.append(b)
            continue
        if inner is None:
            if outer not in _SCALARS:
                return None, (f"parameter `{pname}`: type `{outer}` is not an ABI type "
                              "(BufRO<T>, BufRW<T>, Scattered<T>, Tensor<T>, Uniform<S>, a scalar, ...)")
            params.append(N.Param(pname, "scalar", _SCALARS[outer], N.NO_SPAN))
        else:
            cat = _WRAPPERS.get(outer)
            if cat is None:
                return None, f"parameter `{pname}`: `{outer}<{inner}>` is not an ABI type"
            ty = _SCALARS.get(inner) or _VECTORS.get(inner) or (T.struct(inner) if inner in structs else None)
            if ty is None:
                return None, f"parameter `{pname}`: unknown element type `{inner}`"
            if cat == "uniform" and not T.is_struct(ty):
                return None, f"parameter `{pname}`: `Uniform<{inner}>` needs a struct"
            if T.is_struct(ty) and cat not in ("read", "uniform"):
                return None, f"parameter `{pname}`: struct elements are read-only (`BufRO<{inner}>`)"
            if cat in N.TENSOR_CATEGORIES and ty not in ("f32", "u32", "i32"):
                return None, f"parameter `{pname}`: tensors hold float, uint or int"
            params.append(N.Param(pname, cat, ty, N.NO_SPAN))
        if pname in order:
            return None, f"parameter `{pname}` declared twice"
        order.append(pname)
    used = [s for s in structs.values() if any(p.ty == T.struct(s.name) for p in params)]
    kernel = HandwrittenKernel(
        name=entry, workgroup_size=wg, params=params, workgroup_arrays=[], structs=used, body=[],
        builtins=[b for b in N.BUILTINS if b in builtins], source_file=filename, doc="", span=N.NO_SPAN,
        slang_source=src, entry=entry, call_order=order, call_builtins=builtins)
    return kernel, ""
