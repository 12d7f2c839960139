"""The package's shape: a lazy facade, no import cycle, emitters that never leak a
traceback, PTX that does not depend on the Rust file still being on disk."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import goldy_import as gi
from goldy_import.codegen import slang
from goldy_import.codegen.cpu import emitter as cpu
from goldy_import.codegen.ptx import emitter as ptx
from goldy_import.codegen.wgsl import emitter as wgsl
from goldy_import.codegen.slang import lanes as slang_lanes, text as slang_text
from goldy_import.errors import BackendError, CodegenError, GoldyError
from goldy_import.importer import import_source
from goldy_import.ir import from_json, kernel_to_dict, to_json, verify
from goldy_import.ir import nodes as N

REPO = Path(__file__).resolve().parent.parent
FOLDERS = {"goldy_import": "goldy_import", "importer": "goldy_import.importer", "ir": "goldy_import.ir",
           "codegen": "goldy_import.codegen", "runtime": "goldy_import.runtime"}
HEAVY = ("tree_sitter", "tree_sitter_rust", "goldy_import.importer", "goldy_import.codegen", "goldy_import.loader",
         "goldy_import.runtime.cpu", "goldy_import.runtime.wgpu", "goldy_import.runtime.cuda",
         "goldy_import.runtime.slang", "wgpu", "slangpy", "cuda")


def modules_after(statement: str) -> set[str]:
    """sys.modules after running `statement` in a fresh interpreter."""
    code = f"import sys, json\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    return set(json.loads(r.stdout.splitlines()[-1]))


@pytest.mark.parametrize("statement", ["import goldy_import.runtime.launch", "import goldy_import.errors",
                                       "import goldy_import", "from goldy_import import GoldyError, __version__"])
def test_light_imports_load_no_parser_emitter_or_backend(statement: str) -> None:
    loaded = modules_after(statement)
    heavy = sorted(m for m in loaded if any(m == h or m.startswith(h + ".") for h in HEAVY))
    assert heavy == [], f"`{statement}` loaded {heavy}"


def test_the_facade_resolves_every_public_name_on_first_use() -> None:
    assert set(gi.__all__) <= set(dir(gi))
    for name in gi.__all__:
        assert getattr(gi, name) is not None, name
    assert gi.Device.__module__ == "goldy_import.runtime.core" and gi.load.__module__ == "goldy_import.loader"
    assert issubclass(gi.CodegenError, gi.BackendError)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        gi.nope  # noqa: B018


# ---------------------------------------------------------------- import graph


def package_modules() -> dict[str, Path]:
    out = {}
    for folder, package in FOLDERS.items():
        for path in sorted((REPO / folder).rglob("*.py")):
            parts = [package, *path.relative_to(REPO / folder).with_suffix("").parts]
            out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The package modules `name` imports anywhere in its body (lazy imports too), except
    under `if TYPE_CHECKING:`."""
    package = name if path.stem == "__init__" else name.rpartition(".")[0]
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
                   and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"
                   for n in ast.walk(node)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
            out |= {f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names}
    return {m for m in out if m in known and m != name}


def test_no_import_cycle_between_package_modules() -> None:
    mods = package_modules()
    graph = {name: imports_of(name, path, set(mods)) for name, path in mods.items()}
    state: dict[str, int] = {}
    cycles = []

    def visit(m: str, stack: list[str]) -> None:
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert cycles == []
    assert "goldy_import.codegen.slang.emitter" not in graph["goldy_import.codegen.slang.lanes"]


@pytest.mark.parametrize("module", sorted(m for m in package_modules()
                                          if m.startswith(("goldy_import.codegen", "goldy_import.runtime"))))
def test_each_codegen_and_runtime_module_imports_alone(module: str) -> None:
    code = f"import importlib\ntry:\n    importlib.import_module({module!r})\nexcept ModuleNotFoundError as e:\n" \
           "    if e.name.startswith('goldy_import'):\n        raise\n    print('MISSING', e.name)\n"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert r.returncode == 0, r.stderr
    if r.stdout.startswith("MISSING"):
        missing = r.stdout.split()[1]
        # only what CI cannot have (a CUDA driver's bindings, GPU libraries) may be missing
        assert missing.split(".")[0] in ("cuda", "cupy", "torch"), f"{module} needs {missing}"
        pytest.skip(f"{module} needs {missing}, not installed here")


# ---------------------------------------------------------------- emitter guard

SRC = """use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn scale(xs: &[f32], ys: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    ys[i] = a * xs[i];
}
"""


def kernel() -> N.Kernel:
    r = import_source(SRC, "scale.rs")
    assert r.ok, r.render()
    verify(r.kernels[0])
    return r.kernels[0]


def _boom(*args, **kwargs):
    raise KeyError("boom")


# (what to break, the entry point to call); each breaks a method the emitter calls on the store
GUARDED = {
    "WGSL": (wgsl._Emitter, "expr", lambda k: wgsl.emit_wgsl(k)),
    "PTX": (ptx._Emitter, "stmt", lambda k: ptx.emit_ptx(k)),
    "Slang": (slang_text.Printer, "expr", lambda k: slang.emit_slang(k)),
    "Slang wrapper": (slang_text.Printer, "expr", lambda k: slang.emit_wrapper_from_kernel_def(k)),
    "Slang lanes": (slang_text.Printer, "expr", lambda k: slang_lanes.emit_lane_serial(k)),
    "CPU": (cpu._Emitter, "expr", lambda k: cpu.emit_cpu(k)),
    "CPU compile": (cpu._Emitter, "expr", lambda k: cpu.compile_cpu(k)),
}


@pytest.mark.parametrize("case", sorted(GUARDED))
def test_an_internal_emitter_failure_is_a_codegen_error_at_the_rust_line(case: str, monkeypatch) -> None:
    cls, method, call = GUARDED[case]
    assert hasattr(cls, method), f"{cls.__name__}.{method} is gone: pick another internal method"
    monkeypatch.setattr(cpu, "_CACHE", {})  # compile_cpu must not find an earlier good compile
    monkeypatch.setattr(cls, method, _boom)
    with pytest.raises(CodegenError) as e:
        call(kernel())
    target = case.split()[0]
    msg = str(e.value)
    # the location is the statement being emitted (lines 4-5), not the kernel's `fn` line (3)
    assert re.match(rf"internal error emitting {target} for kernel `scale` \(scale\.rs:[45]:\d+\): ", msg), msg
    assert "KeyError: 'boom'" in msg and "report" in msg
    assert isinstance(e.value, BackendError) and isinstance(e.value, GoldyError)
    assert (e.value.kernel, e.value.target) == ("scale", target) and re.fullmatch(r"scale\.rs:[45]:\d+", e.value.location)
    assert e.value.__cause__ is not None  # the original traceback stays reachable for a bug report


def test_prepare_reports_the_codegen_error(monkeypatch) -> None:
    monkeypatch.setattr(cpu, "_CACHE", {})
    monkeypatch.setattr(cpu._Emitter, "expr", _boom)
    with pytest.raises(CodegenError, match=r"internal error emitting CPU for kernel `scale` \(scale\.rs:5:"):
        gi.load_source(SRC, "scale.rs").scale.prepare(gi.Device("cpu"))


def test_deliberate_emitter_errors_pass_through_unchanged() -> None:
    with pytest.raises(BackendError, match="unsupported PTX target") as e:
        ptx.emit_ptx(kernel(), target="sm_60")
    assert not isinstance(e.value, CodegenError)


# ---------------------------------------------------------------- PTX without the Rust file


def test_ptx_is_the_same_without_the_rust_file(tmp_path, monkeypatch) -> None:
    path = tmp_path / "scale.rs"
    path.write_text(SRC)
    monkeypatch.chdir(tmp_path)
    k = import_source(SRC, "scale.rs").kernels[0]
    present = ptx.emit_ptx(k)
    assert "// scale.rs:5  ys[i] = a * xs[i];" in present
    path.unlink()
    assert ptx.emit_ptx(k) == present
    assert ptx.emit_ptx(from_json(to_json(k))) == present  # a .kir / launch-module kernel
    monkeypatch.chdir(REPO)
    assert ptx.emit_ptx(from_json(to_json(k, indent=None))) == present


def test_ptx_never_opens_the_rust_file(monkeypatch) -> None:
    k = kernel()
    def no_open(*args, **kwargs):
        raise AssertionError(f"the PTX emitter opened {args[0]!r}")
    monkeypatch.setattr("builtins.open", no_open)
    assert "ys[i] = a * xs[i];" in ptx.emit_ptx(k)


def test_ir_written_before_source_lines_still_loads_and_emits() -> None:
    k = kernel()
    doc = kernel_to_dict(k)
    assert doc["kernel"]["source_lines"][0].startswith("fn scale(")
    del doc["kernel"]["source_lines"]
    old = from_json(json.dumps(doc))
    assert old.source_lines == [] and old == dataclasses.replace(k, source_lines=[])
    assert "source_lines" not in to_json(old)  # the default stays out: plain IR reads as before
    text = ptx.emit_ptx(old)
    assert "// scale.rs:5" in text and "ys[i] = a * xs[i];" not in text
