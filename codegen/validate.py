"""Emitted code through the validator each target has, where one is installed here:
Python's `compile` for the CPU form, ptxas (on PATH) for PTX, naga (through wgpu) for
WGSL, the Slang compiler (slangpy) for Slang. `goldy-import --emit` runs this before it
reports success, so a rejected emit is a `CodegenError` naming the kernel, the target and
the Rust line, never exit 0. A validator that is not installed is skipped: its backend
would reject the code at prepare time instead, with the same kind of error.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from typing import Any, Optional

from goldy_import.errors import CodegenError
from goldy_import.ir import nodes as N

__all__ = ["validate", "validators"]

_PTX_LINE = re.compile(r"line (\d+)")
_PTX_RUST = re.compile(r"^\s*//\s*\S+?\.rs:(\d+)")  # the emitter's `// file.rs:LINE  text` comments
_devices: dict[str, Any] = {}  # one validating device per target and process (opening one costs ~1 s)


def validators() -> list[str]:
    """The targets whose validator is installed here."""
    out = ["cpu"]
    if shutil.which("ptxas"):
        out.append("ptx")
    if _device("wgsl") is not None:
        out.append("wgsl")
    if _device("slang") is not None:
        out.append("slang")
    return out


def validate(target: str, kernel: N.Kernel, text: str) -> None:
    """Raise CodegenError if the validator of `target` rejects `text`, emitted for `kernel`."""
    check = {"cpu": _python, "ptx": _ptxas, "wgsl": _naga, "slang": _slang}.get(target)
    if check is None:
        return
    problem = check(kernel, text)
    if problem is None:
        return
    detail, rust_line = problem
    line = rust_line or kernel.span.line
    where = f"{kernel.source_file}:{line}"
    raise CodegenError(f"kernel `{kernel.name}`: the {target} code generated for it is invalid "
                       f"(this is a bug in goldy-import; please report it with the kernel)\n"
                       f"  --> {where}\n" + "\n".join("  " + s for s in detail.strip().splitlines()[:30]),
                       kernel=kernel.name, target=target, location=where)


def _python(kernel: N.Kernel, text: str) -> Optional[tuple[str, Optional[int]]]:
    try:
        compile(text, f"<goldy cpu {kernel.name}>", "exec")
    except SyntaxError as e:  # IndentationError and "too many statically nested blocks" included
        return f"Python: {e.msg} (generated line {e.lineno})", None
    except (ValueError, RecursionError, MemoryError) as e:  # NUL bytes; nesting past the parser's stack
        return f"Python: {type(e).__name__}: {e}", None
    return None


def _ptxas(kernel: N.Kernel, text: str) -> Optional[tuple[str, Optional[int]]]:
    exe = shutil.which("ptxas")
    if exe is None:
        return None
    arch = re.search(r"^\s*\.target\s+(sm_\w+)", text, re.M)
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "k.ptx")
        with open(src, "w", encoding="ascii", errors="backslashreplace", newline="\n") as f:
            f.write(text)
        try:
            res = subprocess.run([exe, f"-arch={arch.group(1) if arch else 'sm_90'}", src, "-o", os.path.join(d, "k.o")],
                                 capture_output=True, text=True, timeout=120)
        except (OSError, subprocess.TimeoutExpired):
            return None  # the validator itself could not run: nothing learnt
    if res.returncode == 0:
        return None
    log = (res.stdout + res.stderr).replace(src, "k.ptx")
    m = _PTX_LINE.search(log)
    return log, _rust_line_before(text.split("\n"), int(m.group(1))) if m else None


def _rust_line_before(lines: list[str], ptx_line: int) -> Optional[int]:
    for ln in range(min(ptx_line, len(lines)) - 1, -1, -1):
        m = _PTX_RUST.match(lines[ln])
        if m:
            return int(m.group(1))
    return None


def _naga(kernel: N.Kernel, text: str) -> Optional[tuple[str, Optional[int]]]:
    dev = _device("wgsl")
    if dev is None:
        return None
    try:
        dev.create_shader_module(code=text)
    except Exception as e:  # wgpu-py raises its own error types, naga's report in the text
        from goldy_import.codegen.wgsl import emit_wgsl_module
        from goldy_import.runtime.wgpu import _LOCATION
        module = emit_wgsl_module(kernel)
        m = _LOCATION.search(str(e))
        sp = module.span_of_line(int(m.group(1))) if m and module.code == text else None
        return str(e), sp.line if sp is not None else None
    return None


def _slang(kernel: N.Kernel, text: str) -> Optional[tuple[str, Optional[int]]]:
    dev = _device("slang")
    if dev is None:
        return None
    from goldy_import.codegen import slang as S
    from goldy_import.codegen.slang.handwritten import rename_entry
    if S.uses_barriers(kernel):  # slangpy's CPU target has no barrier: check it as a plain function
        text = rename_entry(text, "cs_main", "cs_main")
    _devices["slang_count"] = _devices.get("slang_count", 0) + 1
    import slangpy as spy
    from goldy_import.runtime.quiet import slang_log_to_logging
    try:
        with slang_log_to_logging(spy):
            dev.load_module_from_source(f"goldy_validate_{_devices['slang_count']}", text)
    except Exception as e:
        return str(e), None
    return None


def _device(target: str) -> Any:
    if target in _devices:
        return _devices[target]
    dev = None
    try:
        if target == "wgsl":
            import wgpu
            from goldy_import.runtime.quiet import ensure_xdg_runtime_dir
            ensure_xdg_runtime_dir()  # else Mesa's Vulkan drivers print an `error:` line from the adapter query
            dev = wgpu.utils.get_default_device()
        elif target == "slang":
            import slangpy as spy
            from goldy_import.codegen import slang as S
            from goldy_import.runtime.quiet import slang_log_to_logging
            opts = spy.SlangCompilerOptions({"include_paths": [S.ABI_DIR], "disable_warnings": ["38040"]})
            with slang_log_to_logging(spy):  # its "[WARN] No supported shader model" is no error of ours
                dev = spy.Device(type=spy.DeviceType.cpu, compiler_options=opts, enable_hot_reload=False)
    except Exception:  # not installed, or no adapter here: no validator
        dev = None
    _devices[target] = dev
    return dev
