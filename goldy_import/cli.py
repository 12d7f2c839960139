"""`goldy-import FILE.rs`: diagnose, emit target code, or write a typed launch module;
`goldy-import assets check|regen MANIFEST`: keep `.kir.json` assets in step with their sources;
`goldy-import cache info|clear`: the disk cache (goldy_import/cache.py).

Exit status: 0 success, 1 the Rust source has errors (diagnostics printed), 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from typing import Optional, Sequence

from goldy_import.errors import GoldyError
from goldy_import.version import __version__

EMITTERS = {
    "ir": None,
    "kir": None,  # files, not text: see _write_kir
    "wgsl": ("goldy_import.codegen.wgsl", "emit_wgsl"),
    "ptx": ("goldy_import.codegen.ptx", "emit_ptx"),
    "slang": ("goldy_import.codegen.slang", "emit_slang"),
    "cpu": ("goldy_import.codegen.cpu", "emit_cpu"),
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="goldy-import",
        description="Import GPU compute kernels written in restricted Rust: check them, emit IR, WGSL, PTX "
                    "or Slang, or write a typed Python launch module.")
    p.add_argument("file", help="the Rust source file (.rs)")
    p.add_argument("-o", "--output", metavar="OUT.py", help="write the typed Python launch module here "
                   "(with --emit kir: the directory, or the .kir.json file of one kernel)")
    p.add_argument("--emit", choices=sorted(EMITTERS), help="print the code of one target; kir writes each "
                   "kernel's IR asset, NAME.kir.json (see `goldy-import assets`)")
    p.add_argument("--kernel", metavar="NAME", help="with --emit: only this kernel")
    p.add_argument("--check", action="store_true", help="only diagnose the file")
    p.add_argument("--message-format", choices=("human", "json"), default="human",
                   help="how diagnostics are printed (json: one object per line)")
    p.add_argument("--deny", action="append", choices=("warnings",), default=[],
                   help="--deny warnings turns warnings into errors")
    p.add_argument("--version", action="version", version=f"goldy-import {__version__}")
    return p


def _assets_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="goldy-import assets",
        description="Check or regenerate the .kir.json kernel IR assets a manifest lists (TOML or JSON).")
    p.add_argument("command", choices=("check", "regen"),
                   help="check: fail on any stale, missing or unlisted asset; regen: rewrite them")
    p.add_argument("manifest", help="the manifest (.toml or .json)")
    return p


def _cache_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="goldy-import cache",
        description="Show or empty the disk cache of imported IR, emitted code and device probes "
                    "(GOLDY_CACHE_DIR; GOLDY_CACHE=0 turns it off).")
    p.add_argument("command", choices=("info", "clear"), help="info: where it is and what it holds; "
                   "clear: delete every entry")
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    try:
        code = _main(argv)
        sys.stdout.flush()
        return code
    except BrokenPipeError:  # `goldy-import ... | head`: the reader left; no traceback
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail either
        return 141  # 128 + SIGPIPE, what a shell reports for a tool the pipe ended


def _main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["assets"] and argv[1:2] != [] and not argv[1].endswith(".rs"):
        from goldy_import.assets import main as assets_main
        sub = _assets_parser().parse_args(argv[1:])
        return assets_main(sub.command, sub.manifest)
    if argv[:1] == ["cache"] and argv[1:2] != [] and not argv[1].endswith(".rs"):
        from goldy_import.cache import main as cache_main
        return cache_main(_cache_parser().parse_args(argv[1:]).command)
    args = _parser().parse_args(argv)
    from goldy_import.importer import import_file, render_human, render_json

    try:
        result = import_file(args.file)
    except OSError as e:
        print(f"error: cannot read {args.file}: {e.strerror or e}", file=sys.stderr)
        return 2
    ignored = 0
    if args.kernel is not None and args.kernel not in result.kernel_regions:
        have = ", ".join(result.kernel_regions) or "none"
        print(f"error: no kernel `{args.kernel}` in {args.file} (kernels: {have})", file=sys.stderr)
        return 2
    if args.kernel is not None:
        # --kernel NAME: errors inside the file's other kernels do not stop this one
        ignored = len(result.errors)
        result = result.only([args.kernel])
        ignored -= len(result.errors)
    diags = result.diagnostics
    if "warnings" in args.deny:
        for d in diags:
            if d.severity == "warning":
                d.severity = "error"
    if diags:
        if args.message_format == "json":
            print(render_json(diags), file=sys.stderr if not args.check else sys.stdout)
        else:
            text = "\n\n".join(render_human(d, result.source) for d in diags)
            n_err = sum(d.severity == "error" for d in diags)
            n_warn = len(diags) - n_err
            summary = []
            if n_err:
                summary.append(f"error: could not import {args.file} due to {n_err} previous error{'s' * (n_err != 1)}")
            if n_warn:
                summary.append(f"warning: {n_warn} warning{'s' * (n_warn != 1)} emitted")
            print(text + "\n\n" + "\n".join(summary), file=sys.stderr)
    if ignored:
        print(f"note: ignored {ignored} error{'s' * (ignored != 1)} in other kernels of {args.file} "
              f"(--kernel {args.kernel})", file=sys.stderr)
    has_errors = any(d.severity == "error" for d in diags)
    if has_errors:
        return 1
    if args.check:
        if args.message_format == "human":
            names = ", ".join(k.name for k in result.kernels) or "none"
            print(f"{args.file}: {len(result.kernels)} kernel{'s' * (len(result.kernels) != 1)} ok ({names})")
        return 0
    kernels = result.kernels
    if args.kernel is not None:
        kernels = [k for k in kernels if k.name == args.kernel]
        if not kernels:
            have = ", ".join(k.name for k in result.kernels) or "none"
            print(f"error: no kernel `{args.kernel}` in {args.file} (kernels: {have})", file=sys.stderr)
            return 2
    if args.emit == "kir":
        return _write_kir(kernels, args.output)
    if args.emit == "ptx" and len(kernels) > 1:
        names = ", ".join(k.name for k in kernels)
        print(f"error: --emit ptx prints one PTX module per kernel and {args.file} has {len(kernels)} kernels "
              f"({names}); pick one with --kernel NAME", file=sys.stderr)
        return 2
    if args.emit:
        try:
            print(_emit(args.emit, kernels), end="")
        except GoldyError as e:
            print(f"error: {e}", file=sys.stderr)
            return 1
    if args.output:
        from goldy_import.codegen.pymodule import emit_module
        text = emit_module(kernels, args.file, result.source_hash, module_path=args.output,
                           structs=list(result.structs.values()))
        try:
            os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            print(f"error: cannot write {args.output}: {e.strerror or e}", file=sys.stderr)
            return 2
    if not args.emit and not args.output:
        names = ", ".join(k.name for k in kernels) or "none"
        print(f"{args.file}: {len(kernels)} kernel{'s' * (len(kernels) != 1)} ok ({names}); "
              f"use -o OUT.py to write a launch module or --emit TARGET to see code")
    return 0


def _write_kir(kernels, output: Optional[str]) -> int:
    """One NAME.kir.json per kernel into the directory `output` (default: the current one),
    or into `output` itself when it names a .kir.json file and one kernel is selected."""
    from goldy_import.kir import SUFFIX, asset_name, kir_text
    if output is not None and output.endswith(SUFFIX):
        if len(kernels) != 1:
            print(f"error: {output} holds one kernel, but {len(kernels)} are selected; pick one with --kernel NAME "
                  f"or give a directory", file=sys.stderr)
            return 2
        paths = [output]
    else:
        paths = [os.path.join(output or ".", asset_name(k)) for k in kernels]
    try:
        for k, path in zip(kernels, paths):
            os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(kir_text(k))
            print(f"wrote {path}")
    except OSError as e:
        print(f"error: cannot write {path}: {e.strerror or e}", file=sys.stderr)
        return 2
    return 0


def _emit(target: str, kernels) -> str:
    if target == "ir":
        from goldy_import.ir.serialize import to_json
        return "".join(to_json(k) + "\n" for k in kernels)
    mod_name, fn_name = EMITTERS[target]  # type: ignore[misc]
    try:
        fn = getattr(importlib.import_module(mod_name), fn_name)
    except (ImportError, AttributeError):
        raise GoldyError(f"the {target} emitter is not available in this build") from None
    from goldy_import.codegen.validate import validate
    out = []
    for k in kernels:
        text = fn(k)
        validate(target, k, text)  # ptxas, naga, slangc, compile() where installed: no exit 0 for invalid code
        out.append(text.rstrip("\n") + "\n")
    sep = {"ptx": "\n", "wgsl": "\n", "slang": "\n", "cpu": "\n"}[target]
    return sep.join(out)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
