"""The typed Python launch module: one class per kernel, `record` with the Rust parameter
names in order and precise annotations, Rust `///` docs as docstrings, each kernel's IR
embedded as versioned JSON. `goldy_import.load` executes this same text in-process, so the
two give the same classes."""

from __future__ import annotations

import os
from typing import Optional

from goldy_import.version import __version__
from goldy_import.ir import nodes as N
from goldy_import.ir import types as T
from goldy_import.ir.serialize import to_json

from .names import PYTHON, Namer

# Names `record(self, scheme, label, ...)` and `prepare(cls, device, checks)` already take.
_METHOD_NAMES = frozenset({"self", "cls", "scheme", "label", "checks", "device"})
# Module-level names of the launch module, which a kernel class must not shadow.
_MODULE_NAMES = frozenset("""annotations Annotated Any ClassVar Mapping Optional Union NDArray Buffer Device Image
InvokeBuilder LaunchBuilder RecordBuilder Scheme GeneratedKernel GeneratedPrepared check_source TensorView SOURCE_FILE
SOURCE_SHA256 StructType struct_type STRUCTS""".split())

_CATEGORY_RUST = {
    "read": "&[{t}]", "read_write": "&mut [{t}]", "write": "gpu::Scattered<{t}>", "scalar": "{t}",
    "tensor": "gpu::Tensor<{t}>", "tensor_mut": "gpu::TensorMut<{t}>", "tensor_write": "gpu::TensorWrite<{t}>",
    "uniform": "gpu::Uniform<{t}>", "image": "gpu::DirectSpatial<{t}>",
}
_SCALAR_PY = {"u32": "int", "i32": "int", "f32": "float", "bool": "bool"}


def py_name(name: str) -> str:
    """A Rust identifier as a Python identifier (`from` -> `from_`, `scheme` -> `scheme_`)."""
    return Namer(PYTHON, [name], avoid=_METHOD_NAMES)(name)


def param_names(k: N.Kernel) -> list[str]:
    """The launch methods' parameter names: the Rust names where Python takes them, all distinct."""
    namer = Namer(PYTHON, [p.name for p in k.params], avoid=_METHOD_NAMES)
    return [namer(p.name) for p in k.params]


def class_names(kernels: list[N.Kernel]) -> dict[str, str]:
    """Kernel name -> its class in the launch module (the Rust name where Python takes it)."""
    namer = Namer(PYTHON, [k.name for k in kernels], avoid=_MODULE_NAMES)
    return {k.name: namer(k.name) for k in kernels}


def struct_names(structs: list[N.StructDecl], classes: dict[str, str]) -> dict[str, str]:
    """Struct name -> its StructType's name in the launch module (clear of kernel classes)."""
    namer = Namer(PYTHON, [s.name for s in structs], avoid=_MODULE_NAMES | set(classes.values()))
    return {s.name: namer(s.name) for s in structs}


def _struct_block(structs: list[N.StructDecl], names: dict[str, str]) -> list[str]:
    out = []
    for s in structs:
        fields = ", ".join(f"({f.name!r}, {f.ty!r})" for f in s.fields)
        rust = ", ".join(f"{f.name}: {T.rust_name(f.ty)}" for f in s.fields)
        out.append(f"{names[s.name]}: StructType = struct_type({s.name!r}, ({fields},))\n")
        out.append(f'"""`#[goldy::gpu] struct {s.name} {{ {rust} }}`: `.dtype` (GPU layout), `.host_dtype` (packed)."""\n')
    items = ", ".join(f"{s.name!r}: {names[s.name]}" for s in structs)
    out.append(f"STRUCTS: dict[str, StructType] = {{{items}}}\n")
    return out


def rust_param(p: N.Param) -> str:
    t = _CATEGORY_RUST[p.category].format(t=T.rust_name(p.ty))
    if p.shape is not None:
        t = f"#[tensor(shape = [{', '.join(str(d) for d in p.shape)}])] {t}"
    return t


def rust_param_decl(p: N.Param) -> str:
    """`name: Type` as written in the Rust signature (attribute first)."""
    t = _CATEGORY_RUST[p.category].format(t=T.rust_name(p.ty))
    attr = f"#[tensor(shape = [{', '.join(str(d) for d in p.shape)}])] " if p.shape is not None else ""
    return f"{attr}{p.name}: {t}"


def annotation(p: N.Param) -> str:
    rust = rust_param(p).replace("\\", "\\\\").replace('"', '\\"')
    if p.category == "scalar":
        base = _SCALAR_PY[p.ty]
    elif p.category in N.BUFFER_CATEGORIES:
        base = "Union[Buffer, TensorView]"
    elif p.category in N.TENSOR_CATEGORIES:
        base = "TensorView"
    elif p.category == "uniform":
        base = "Union[Mapping[str, Any], NDArray[Any]]"
    else:
        base = "Image"
    return f'Annotated[{base}, "{rust}"]'


def _docstring(text: str, indent: str) -> str:
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = text.splitlines() or [""]
    if len(lines) == 1:
        return f'{indent}"""{lines[0]}"""\n'
    body = "\n".join((indent + ln) if ln else "" for ln in lines[1:])
    return f'{indent}"""{lines[0]}\n{body}\n{indent}"""\n'


def _kernel_class(k: N.Kernel, cls: str) -> str:
    names = param_names(k)
    sig = ", ".join(rust_param_decl(p) for p in k.params)
    wg = list(k.workgroup_size)
    doc = (k.doc.strip() + "\n\n" if k.doc.strip() else "")
    doc += f"Rust: `fn {k.name}({sig})`, workgroup_size = {wg}."
    params_typed = ",\n".join(f"            {n}: {annotation(p)}" for n, p in zip(names, k.params))
    args = ", ".join(names)
    record_doc = "Check the arguments and return a builder; its grid call records the node.\n\n"
    record_doc += "\n".join(f"{n}: {rust_param(p)}" for n, p in zip(names, k.params))
    out = [f"class {cls}(GeneratedKernel):\n", _docstring(doc, "    "), "\n"]
    out.append(f"    IR_JSON: ClassVar[str] = {to_json(k, indent=None)!r}\n")
    out.append("    SOURCE_SHA256: ClassVar[str] = SOURCE_SHA256\n")
    out.append(f"    WORKGROUP_SIZE: ClassVar[tuple[int, int, int]] = ({wg[0]}, {wg[1]}, {wg[2]})\n")
    out.append(f"    PARAMS: ClassVar[tuple[str, ...]] = ({''.join(repr(p.name) + ', ' for p in k.params)})\n\n")
    out.append("    class Prepared(GeneratedPrepared):\n")
    out.append(f'        """`{k.name}` compiled for one device."""\n\n')
    sep = ",\n" if k.params else ""
    out.append(f"        def record(\n            self,\n            scheme: Scheme,\n            label: str{sep}{params_typed},\n"
               f"        ) -> RecordBuilder:\n")
    out.append(_docstring(record_doc, "            "))
    out.append(f"            return self._record(scheme, label{', ' + args if args else ''})\n\n")
    if k.params:
        out.append(f"        def invoke(\n            self,\n{params_typed},\n        ) -> InvokeBuilder:\n")
    else:
        out.append("        def invoke(self) -> InvokeBuilder:\n")
    out.append('            """Bind arguments now; the grid call gives an Invocation to record later."""\n')
    out.append(f"            return self._invoke({args})\n\n")
    if k.params:
        out.append(f"        def launch(\n            self,\n{params_typed},\n        ) -> LaunchBuilder:\n")
    else:
        out.append("        def launch(self) -> LaunchBuilder:\n")
    out.append('            """Eager: the grid call enqueues one dispatch on the device\'s stream, without waiting."""\n')
    out.append(f"            return self._launch({args})\n\n")
    out.append("    @classmethod\n")
    out.append(f'    def prepare(cls, device: Device, checks: Optional[bool] = None) -> "{cls}.Prepared":\n')
    out.append('        """Compile for `device` once; later calls hit the cache."""\n')
    out.append("        return cls.Prepared(cls._prepare(device, checks))\n")
    return "".join(out)


def emit_module(kernels: list[N.Kernel], source_file: str, source_sha256: str,
                module_path: Optional[str] = None, in_process: bool = False,
                structs: Optional[list[N.StructDecl]] = None) -> str:
    """Python source of the launch module. `source_file` is written relative to the module
    when possible so the pair can move together. `structs`: the file's `#[goldy::gpu]`
    structs (default: those the kernels use), each exposed as a StructType."""
    shown = source_file
    if module_path is not None and not in_process:
        try:
            shown = os.path.relpath(os.path.abspath(source_file), os.path.dirname(os.path.abspath(module_path)))
        except ValueError:  # different drives on Windows
            shown = os.path.abspath(source_file)
    base = os.path.basename(source_file)
    names = ", ".join(f"`{k.name}`" for k in kernels) or "none"
    classes = class_names(kernels)
    if structs is None:
        structs = list({s.name: s for k in kernels for s in k.structs}.values())
    snames = struct_names(structs, classes)
    exported = [classes[k.name] for k in kernels] + [snames[s.name] for s in structs]
    out = [
        f"# Generated by goldy-import {__version__} from {base}. Do not edit: regenerate with\n",
        f"#   goldy-import {base} -o {os.path.basename(module_path) if module_path else 'kernels.py'}\n",
        f'"""Launch module for {base}: kernels {names}."""\n\n',
        "from __future__ import annotations\n\n",
        "from typing import Annotated, Any, ClassVar, Mapping, Optional, Union\n\n",
        "from numpy.typing import NDArray\n\n",
        "from goldy_import.runtime.core import Buffer, Device, Image, InvokeBuilder, RecordBuilder, Scheme\n",
        "from goldy_import.runtime.eager import LaunchBuilder\n",
        "from goldy_import.runtime.launch import GeneratedKernel, GeneratedPrepared, StructType, check_source, struct_type\n",
        "from goldy_import.runtime.tensor import TensorView\n\n",
        f"SOURCE_FILE = {shown!r}\n",
        f"SOURCE_SHA256 = {source_sha256!r}\n",
        f"__all__ = [{', '.join(repr(n) for n in exported + ['STRUCTS'])}]\n\n",
    ]
    out += _struct_block(structs, snames) + ["\n"]
    if not in_process:
        out.append("check_source(__file__, SOURCE_FILE, SOURCE_SHA256)\n")
    for k in kernels:
        out.append("\n\n")
        out.append(_kernel_class(k, classes[k.name]))
    return "".join(out)
