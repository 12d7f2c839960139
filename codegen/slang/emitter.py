"""Canonical `[goldy_compute]` Slang, the wrapper entry a Slang compiler needs, and dumps.

`emit_slang(kernel)` writes the form a Goldy user recognises: `import goldy_abi;`, the
kernel's `#[goldy::gpu]` structs (explicitly padded to ir.layout), its workgroup arrays as
`groupshared` globals, then

    [goldy_compute]
    [numthreads(X, Y, Z)]
    void cs_main(<params in declaration order>, <builtins used>) { ... }

The canonical function takes Goldy ABI structs (goldy_abi.slang) as parameters, so it is
not itself a dispatchable entry. `emit_wrapper_from_kernel_def(def)` renames it
`_goldy_user_<name>`, drops its `[numthreads]` (Slang treats any function carrying one as
an entry point) and adds a `[shader("compute")]` entry that binds every parameter from one
global `_goldy_args` block and calls it. The block's fields are the kernel's ABI plan
(ir/abi.py `plan(kernel, "slang")`), which runtime/slang.py fills from as well. Hand-written
canonical sources go through the same wrapper (codegen/slang/handwritten.py).
"""

from __future__ import annotations

import json
import os
import re
from typing import Union

from goldy_import.ir import abi as A
from goldy_import.ir import layout as L
from goldy_import.ir.checks import check_sites
from goldy_import.ir import nodes as N
from goldy_import.ir import types as T
from goldy_import.ir.pipeline import for_target

from ..guard import emitter
from ..names import ascii_ident
from .handwritten import HandwrittenKernel, rename_entry, try_kernel_def_from_source
from .text import (BUILTIN_PARAMS, ENTRY_POINT, FAULTS, FAULTS_TYPE, INDENT, Names, Printer, arg_value,
                         args_block, element_type, has_sync, param_type, signature_builtins, site_comments,
                         slang_type, struct_decl)

__all__ = [
    "ABI_MODULE", "ABI_DIR", "ENTRY_POINT", "emit_slang", "emit_wrapper", "emit_wrapper_from_kernel_def",
    "abi_description", "dump_kernel", "HandwrittenKernel", "try_kernel_def_from_source", "uses_barriers",
]

ABI_DIR = os.path.dirname(os.path.abspath(__file__))
ABI_MODULE = os.path.join(ABI_DIR, "goldy_abi.slang")
CANONICAL_ENTRY = "cs_main"

KernelLike = Union[N.Kernel, HandwrittenKernel]


@emitter("Slang")
def emit_slang(kernel: N.Kernel) -> str:
    """The canonical `[goldy_compute]` Slang of a verified kernel."""
    if isinstance(kernel, HandwrittenKernel):
        return kernel.slang_source
    kernel = for_target(kernel, "slang").kernel  # collectives as plain IR (unchanged if already lowered)
    names = Names(kernel)
    pr = Printer(kernel, names)
    out: list[str] = []
    out.append(f"// kernel `{kernel.name}` from {kernel.source_file}")
    for line in kernel.doc.splitlines():
        out.append(f"// {line}".rstrip())
    out += site_comments(kernel)
    out += ["import goldy_abi;", ""]
    for s in kernel.structs:
        out += struct_decl(s, names) + [""]
    for w in kernel.workgroup_arrays:
        out.append(f"groupshared {slang_type(w.ty)} {names(w.name)}[{w.size}];")
    if kernel.workgroup_arrays:
        out.append("")
    x, y, z = kernel.workgroup_size
    params = [f"{param_type(p, names)} {names(p.name)}" for p in kernel.params]
    params += [" ".join(BUILTIN_PARAMS[b]) for b in signature_builtins(kernel)]
    if A.has_error_word(kernel):
        params.append(f"{FAULTS_TYPE} {FAULTS}")
    out += ["[goldy_compute]", f"[numthreads({x}, {y}, {z})]", f"void {CANONICAL_ENTRY}({', '.join(params)})", "{"]
    body = pr.block(kernel.body, 1)
    at = out.index("import goldy_abi;") + 2
    out[at:at] = pr.helper_lines()  # known once the body is rendered
    out += body
    out.append("}")
    return "\n".join(out) + "\n"


def uses_barriers(kernel: KernelLike) -> bool:
    """Whether the kernel needs the CPU lane-serial form: it synchronises its workgroup, or
    applies atomics to a workgroup array (the C++ target has no Interlocked operations)."""
    if isinstance(kernel, HandwrittenKernel):
        return bool(re.search(r"\b(GroupMemoryBarrier\w*|AllMemoryBarrier\w*|DeviceMemoryBarrier\w*)\s*\(",
                              kernel.slang_source))
    return any(has_sync(s) or (isinstance(s, N.Atomic) and kernel.workgroup_array(s.resource) is not None)
               for s in N.walk_stmts(kernel.body))


# ---------------------------------------------------------------- the wrapper entry

_SYSTEM_VALUES = {"global_id": "_goldy_sv_gid", "local_id": "_goldy_sv_lid", "workgroup_id": "_goldy_sv_wid"}


@emitter("Slang")
def emit_wrapper_from_kernel_def(kdef: KernelLike) -> str:
    """A complete Slang module: the canonical source with its function renamed
    `_goldy_user_<name>` (no longer an entry point), plus a `[shader("compute")]` entry
    that passes every parameter and builtin in the canonical order."""
    if isinstance(kdef, HandwrittenKernel):
        canonical, entry, names = kdef.slang_source, kdef.entry, Names(kdef)
        order = kdef.call_order
    else:
        kdef = for_target(kdef, "slang").kernel
        canonical, entry, names = emit_slang(kdef), CANONICAL_ENTRY, Names(kdef)
        order = [p.name for p in kdef.params] + signature_builtins(kdef)
    user = f"_goldy_user_{ascii_ident(kdef.name)}"
    body = rename_entry(canonical, entry, user)
    x, y, z = kdef.workgroup_size
    params = {p.name: p for p in kdef.params}
    call = []
    for item in order:
        if item in params:
            call.append(arg_value(params[item], names))
        elif item == "num_workgroups":
            call.append("_goldy_args._goldy_nwg")
        else:
            call.append(_SYSTEM_VALUES[item])
    if A.has_error_word(kdef):
        call.append(f"_goldy_args.{FAULTS}")
    out = [body, "// ---- wrapper: the entry point a Slang compiler dispatches", ""]
    out += args_block(kdef, names)
    out += ['[shader("compute")]', f"[numthreads({x}, {y}, {z})]",
            f"void {ENTRY_POINT}(uint3 _goldy_sv_gid : SV_DispatchThreadID, "
            "uint3 _goldy_sv_lid : SV_GroupThreadID, uint3 _goldy_sv_wid : SV_GroupID)",
            "{", f"{INDENT}{user}({', '.join(call)});", "}"]
    return "\n".join(out) + "\n"


def emit_wrapper(kernel: N.Kernel) -> str:
    return emit_wrapper_from_kernel_def(kernel)


# ---------------------------------------------------------------- ABI description and dumps

def abi_description(kernel: KernelLike) -> dict:
    """What a host needs to bind the kernel: params with categories and element strides,
    builtins, workgroup size, struct layouts."""
    names = Names(kernel)

    def stride(ty: str) -> int:
        if T.is_struct(ty):
            decl = kernel.struct(T.struct_name(ty))
            return L.struct_layout(decl).stride if decl else 0
        return L.size_of(ty)

    params = []
    for p in kernel.params:
        d = {"name": p.name, "slang_name": names(p.name), "category": p.category, "type": p.ty,
             "slang_type": param_type(p, names)}
        if p.category != "scalar":
            d["element_slang_type"] = element_type(p.ty, names)
            d["stride"] = stride(p.ty)
        if p.shape is not None:
            d["shape"] = list(p.shape)
        params.append(d)
    structs = []
    for s in kernel.structs:
        lay = L.struct_layout(s)
        structs.append({"name": s.name, "stride": lay.stride, "align": lay.align,
                        "fields": [{"name": f.name, "type": f.ty, "offset": f.offset, "size": f.size}
                                   for f in lay.fields]})
    builtins = kernel.call_builtins if isinstance(kernel, HandwrittenKernel) else signature_builtins(kernel)
    return {
        "kernel": kernel.name,
        "entry": kernel.entry if isinstance(kernel, HandwrittenKernel) else CANONICAL_ENTRY,
        "source_file": kernel.source_file,
        "workgroup_size": list(kernel.workgroup_size),
        "params": params,
        "builtins": [{"builtin": b, "slang_type": BUILTIN_PARAMS[b][0]} for b in builtins],
        "workgroup_arrays": [{"name": w.name, "type": w.ty, "size": w.size} for w in kernel.workgroup_arrays],
        "structs": structs,
        "handwritten": isinstance(kernel, HandwrittenKernel),
        "check_sites": _sites_description(kernel),
    }


def _sites_description(kernel: KernelLike) -> list[dict]:
    if isinstance(kernel, HandwrittenKernel):
        return []
    return [{"site": s.id, "kind": s.kind, "resource": s.resource, "line": s.span.line, "col": s.span.col}
            for s in check_sites(kernel)]


def dump_kernel(kernel: KernelLike, directory: str) -> list[str]:
    """Write `<name>.slang` (canonical), `<name>.wrapped.slang`, `<name>.abi.json` and, for a
    kernel with barriers, `<name>.cpu_lanes.slang` into `directory` (created if needed);
    returns the paths. Called by prepare when GOLDY_DUMP_RUST_KERNELS is set."""
    os.makedirs(directory, exist_ok=True)
    base = os.path.join(directory, kernel.name)
    files = {
        base + ".slang": emit_slang(kernel),
        base + ".wrapped.slang": emit_wrapper_from_kernel_def(kernel),
        base + ".abi.json": json.dumps(abi_description(kernel), indent=2) + "\n",
    }
    if not isinstance(kernel, HandwrittenKernel) and uses_barriers(kernel):
        from .lanes import emit_lane_serial  # what slangpy's CPU device runs instead
        files[base + ".cpu_lanes.slang"] = emit_lane_serial(kernel)
    for path, text in files.items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return list(files)
