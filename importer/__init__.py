"""The importer: a Rust file in, IR kernels and diagnostics out. Never raises on bad input."""

from __future__ import annotations

import bisect
import hashlib
import itertools
import os
from typing import Optional, Union

import tree_sitter
import tree_sitter_rust

from goldy_import.gcpause import gc_paused
from goldy_import.ir import nodes as N
from goldy_import.ir import types as T
from goldy_import.ir.uniformity import Uniformity
from goldy_import.ir.verify import VerifyError, verify

from . import dialect as D
from goldy_import.ir.diagnostics import CODES, Diagnostic, Label, SourceText, render_human, render_json
from goldy_import.importresult import ImportResult
from .consts import Consts
from .divergence import divergence_diagnostics
from .lints import lint_diagnostics
from .lower import Context, KernelLowerer, _text
from .poot import PootLowerer, is_kernel_attribute
from .syntax import ident

__all__ = ["ImportResult", "import_source", "import_file", "Diagnostic", "render_human", "render_json", "CODES"]

_LANGUAGE = tree_sitter.Language(tree_sitter_rust.language())
MAX_SYNTAX_ERRORS = 20
MAX_HINT_PASSES = 64  # bounds the cost of pathological chains of untyped `let`s


def import_file(path: Union[str, os.PathLike]) -> ImportResult:
    with open(path, "rb") as f:
        data = f.read()
    return import_source(data, os.fspath(path))


def import_source(source: Union[str, bytes], filename: str = "<input>") -> ImportResult:
    with gc_paused():  # goldy_import/gcpause.py
        return _import_source(source, filename)


def _import_source(source: Union[str, bytes], filename: str) -> ImportResult:
    data = source.encode("utf-8") if isinstance(source, str) else bytes(source)
    src = SourceText(data, filename)
    digest = hashlib.sha256(data).hexdigest()
    diags: list[Diagnostic] = []
    parser = tree_sitter.Parser(_LANGUAGE)
    tree = parser.parse(data)
    root = tree.root_node

    bad_regions = _Regions(_syntax_errors(root, src, diags))
    items = _items(root)
    fn_names = {_text(n) for n, _a, _d in items if n.type == "function_item"
                for n in [n.child_by_field_name("name")] if n is not None}
    structs = _gpu_structs(items, src, diags)
    ctx = Context(src, structs, fn_names, _type_kinds(items, structs), Consts(items))
    kernels: list[N.Kernel] = []
    seen: dict[str, N.Span] = {}
    regions: dict[str, tuple[int, int]] = {}
    _misplaced_attributes([it for it in items if not _overlaps(it[0], bad_regions)], src, diags)
    for node, attrs, doc in items:
        if node.type != "function_item":
            continue
        attr = next((a for a in attrs if _is_compute_attr(a) or is_kernel_attribute(_attr_path(a))), None)
        if attr is None:
            continue
        name_node = node.child_by_field_name("name")
        if name_node is not None:
            start = min([a.start_byte for a in attrs] + [node.start_byte])
            first = regions.get(ident(name_node), (start, node.end_byte))
            regions[ident(name_node)] = (min(first[0], start), max(first[1], node.end_byte))
        if _overlaps(node, bad_regions):
            continue  # its syntax errors are reported; lowering it would only add noise
        name_node = node.child_by_field_name("name")
        if name_node is None:
            continue
        name = ident(name_node)
        if name in seen:
            diags.append(Diagnostic("G0036", f"kernel `{name}` is defined twice", filename,
                                    [Label(src.span(name_node.start_byte, name_node.end_byte), "second definition"),
                                     Label(seen[name], "first defined here", primary=False)],
                                    ["rename one of them: kernels are looked up by name"]))
            continue
        seen[name] = src.span(name_node.start_byte, name_node.end_byte)
        lowerer = PootLowerer if is_kernel_attribute(_attr_path(attr)) else KernelLowerer
        kernel, kdiags = _lower_kernel(ctx, node, attr, doc, lowerer)
        diags += kdiags
        if kernel is not None:
            try:
                verify(kernel)
            except VerifyError as e:  # a bug in lowering: say so at the span, keep going
                diags.append(Diagnostic("G0028", f"internal error: {e.message}", filename,
                                        [Label(e.span or kernel.span, "while importing this")],
                                        ["please report this with the kernel's source"]))
                continue
            must = Uniformity(kernel, "must")  # one walk for G0042 and the race lints
            divergent = divergence_diagnostics(kernel, filename, must)  # G0042
            diags += divergent
            if not divergent:
                diags += lint_diagnostics(kernel, filename, must)  # race warnings: G0043, G0044
                kernels.append(kernel)
    diags.sort(key=lambda d: (d.span.start, d.code))
    return ImportResult(kernels, diags, src, digest, structs, regions)


def _lower_kernel(ctx: Context, node, attr, doc: str, lowerer: type[KernelLowerer] = KernelLowerer):
    """Lower once; if untyped-literal locals turned out to be wanted as another integer
    type (`let mut acc = 0; acc += xs[i];` with u32 `xs`), lower again with those types.
    A hint reaches the locals a `let` is built from at once (`let b = a + 1;`: `a` too), so a
    chain of n such `let`s settles in one more pass, not n. Each pass only adds hints."""
    hints: dict[int, str] = {}
    for passes in itertools.count(1):
        lw = lowerer(ctx, node, attr, doc, hints)
        try:
            kernel = lw.lower()
        except RecursionError:  # MAX_DEPTH should make this unreachable
            d = Diagnostic("G0040", "kernel is nested too deeply", ctx.source.filename,
                           [Label(ctx.source.span(node.start_byte, node.start_byte + 2), "in this kernel")],
                           ["split deep expressions into several `let` bindings"])
            return None, [d]
        except Exception as e:  # a bug: report it where it happened and import the rest
            d = Diagnostic("G0028", f"internal error: {type(e).__name__}: {e}", ctx.source.filename,
                           [Label(ctx.source.span(node.start_byte, node.start_byte + 2), "while importing this kernel")],
                           ["please report this with the kernel's source"])
            return None, [d]
        fresh = {k: v for k, v in lw.new_hints.items() if k not in hints}
        todo = list(fresh)
        while todo:  # close over the `let`s each hinted local is built from
            decl = todo.pop()
            for src in lw.hint_edges.get(decl, ()):
                if src not in hints and src not in fresh:
                    fresh[src] = fresh[decl]
                    todo.append(src)
        if not fresh:
            return kernel, lw.diags
        if passes > MAX_HINT_PASSES:
            errors = [d for d in lw.diags if d.severity == "error"]
            if errors:
                errors[0].notes.append(f"type inference of untyped integer literals stopped after {passes} passes "
                                       "without settling; give the literals a type (`0u32`) to decide it")
            return kernel, lw.diags
        hints = {**hints, **fresh}


def _syntax_errors(root, src: SourceText, diags: list[Diagnostic]) -> list[tuple[int, int]]:
    """Report ERROR and MISSING nodes; returns their byte regions."""
    regions: list[tuple[int, int]] = []
    if not root.has_error:
        return regions
    count = 0
    stack = [root]
    while stack:
        n = stack.pop()
        if not n.has_error:
            continue
        if n.is_missing:
            regions.append((n.start_byte, n.end_byte + 1))
            if count < MAX_SYNTAX_ERRORS:
                diags.append(Diagnostic("G0001", f"expected `{n.type}`", src.filename,
                                        [Label(src.span(n.start_byte, n.end_byte), f"missing `{n.type}` here")]))
            count += 1
            continue
        if n.type == "ERROR":
            regions.append((n.start_byte, n.end_byte))
            if count < MAX_SYNTAX_ERRORS:
                first = n.child(0) if n.child_count else n
                snippet = _text(first)[:20] if first is not None else ""
                end = min(n.end_byte, n.start_byte + max(1, len(first.text) if first is not None else 1))
                diags.append(Diagnostic("G0001", f"syntax error: unexpected `{snippet}`" if snippet.strip()
                                        else "syntax error", src.filename,
                                        [Label(src.span(n.start_byte, max(end, n.start_byte + 1)),
                                               "unexpected token")]))
            count += 1
            continue
        stack.extend(reversed(n.children))
    if count > MAX_SYNTAX_ERRORS:
        d = diags[-1]
        d.notes.append(f"{count - MAX_SYNTAX_ERRORS} more syntax errors not shown")
    return regions


def _items(root):
    """Top-level items (and those of inline `mod` blocks) with their attributes and docs,
    in source order. Iterative: modules nested 10,000 deep cannot overflow the stack."""
    out = []
    stack = [root]
    while stack:
        container = stack.pop(0)
        attrs: list = []
        docs: list[str] = []
        for c in container.children:
            if c.type == "attribute_item":
                attrs.append(c)
            elif c.type == "line_comment":
                t = _text(c)
                if t.startswith("///") and not t.startswith("////"):
                    docs.append(t[3:].removeprefix(" ").rstrip())
            elif c.type == "block_comment":
                t = _text(c)
                if t.startswith("/**"):
                    docs.append(t[3:-2].strip())
            elif c.is_named:
                if c.type == "mod_item":
                    body = c.child_by_field_name("body")
                    if body is not None:
                        stack.append(body)
                out.append((c, attrs, "\n".join(docs)))
                attrs, docs = [], []
    out.sort(key=lambda item: item[0].start_byte)  # source order across modules
    return out


def _misplaced_attributes(items, src: SourceText, diags: list[Diagnostic]) -> None:
    """`#[goldy::compute]` on something other than a free function, or `#[goldy::gpu]` on
    something other than a struct, would otherwise be ignored without a word."""
    def report(attr, what: str, label: str, help: str, code: str = "G0002") -> None:
        diags.append(Diagnostic(code, what, src.filename,
                                [Label(src.span(attr.start_byte, attr.end_byte), label)], [help]))

    for node, attrs, _doc in items:
        for a in attrs:
            if _is_compute_attr(a) and node.type != "function_item":
                report(a, "`#[goldy::compute]` only applies to functions", f"on a `{_kind(node)}`",
                       "put it on a free `fn` whose parameters are the kernel's resources")
            elif _is_gpu_struct_attr(a) and node.type != "struct_item":
                report(a, "`#[goldy::gpu]` only applies to structs", f"on a `{_kind(node)}`",
                       "put it on a `struct` with named `u32`/`i32`/`f32`/vector/matrix fields", "G0037")
        if node.type in ("impl_item", "trait_item"):
            body = node.child_by_field_name("body")
            pending = []
            for c in body.children if body is not None else []:
                if c.type == "attribute_item":
                    pending.append(c)
                    continue
                if c.is_named and c.type not in ("line_comment", "block_comment"):
                    for a in pending:
                        if _is_compute_attr(a):
                            report(a, "kernels must be free functions, not methods", "inside an `impl` or `trait`",
                                   "move the kernel out of the block, to the top level of the file or a `mod`")
                    pending = []


def _type_kinds(items, structs) -> dict[str, str]:
    kinds = {}
    for node, attrs, _doc in items:
        name = node.child_by_field_name("name")
        if name is None or node.type not in ("enum_item", "struct_item", "trait_item", "union_item", "type_item"):
            continue
        kind = _kind(node)
        if node.type == "struct_item" and any(_is_gpu_struct_attr(a) for a in attrs):
            kind = "gpu_struct"
        kinds[_text(name)] = kind
    return kinds


class _Regions:
    """Byte regions, asked whether a node overlaps any: by bisection, since a file of n
    broken kernels asks n times about n regions."""

    def __init__(self, regions: list[tuple[int, int]]):
        regions = sorted(regions)
        self.starts = [s for s, _e in regions]
        self.max_end = list(itertools.accumulate((e for _s, e in regions), max))  # over regions[:i + 1]

    def overlaps(self, node) -> bool:
        i = bisect.bisect_left(self.starts, node.end_byte)  # regions[:i] start before the node ends
        return node.type == "ERROR" or (i > 0 and self.max_end[i - 1] > node.start_byte)


def _overlaps(node, regions: _Regions) -> bool:
    return regions.overlaps(node)


def _kind(node) -> str:
    return node.type.removesuffix("_item").removesuffix("_declaration").replace("_", " ")


def _attr_path(a) -> str:
    inner = next((x for x in a.children if x.type == "attribute"), None)
    if inner is None or inner.child_count == 0:
        return ""
    return _text(inner.child(0)).replace(" ", "")


def _is_compute_attr(a) -> bool:
    return _attr_path(a) in ("goldy::compute", "compute")


def _is_gpu_struct_attr(a) -> bool:
    return _attr_path(a) in ("goldy::gpu", "gpu")


def _gpu_structs(items, src: SourceText, diags: list[Diagnostic]) -> dict[str, N.StructDecl]:
    structs: dict[str, N.StructDecl] = {}
    for node, attrs, _doc in items:
        if node.type != "struct_item" or not any(_is_gpu_struct_attr(a) for a in attrs):
            continue
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is None or node.has_error:
            continue  # syntax errors are reported already
        name = _text(name_node)

        def bad(n, msg, label, help=None):
            diags.append(Diagnostic("G0037", msg, src.filename,
                                    [Label(src.span(n.start_byte, n.end_byte), label)], help or []))

        if node.child_by_field_name("type_parameters") is not None:
            bad(node.child_by_field_name("type_parameters"), f"`#[goldy::gpu]` struct `{name}` cannot be generic",
                "generic parameters")
            continue
        if body is None or body.type != "field_declaration_list":
            bad(node, f"`#[goldy::gpu]` struct `{name}` needs named fields", "not a struct with named fields",
                ["write `struct Name { field: f32, ... }`"])
            continue
        fields = []
        ok = True
        for f in body.children:
            if f.type != "field_declaration":
                continue
            if f.child_by_field_name("name") is None or f.child_by_field_name("type") is None:
                continue
            fname = _text(f.child_by_field_name("name"))
            tnode = f.child_by_field_name("type")
            ty = _field_type(tnode)
            if ty is None:
                bad(tnode, f"unsupported field type `{_text(tnode)}`", "not a GPU field type",
                    ["fields are `u32`, `i32`, `f32`, `bool`, `[T; 2..4]` vectors or square `[[f32; N]; N]` matrices"])
                ok = False
                continue
            fields.append(N.StructField(fname, ty, src.span(f.start_byte, f.end_byte)))
        if not fields and ok:
            bad(node, f"`#[goldy::gpu]` struct `{name}` has no fields", "empty struct")
            continue
        if ok:
            structs[name] = N.StructDecl(name, fields, src.span(node.start_byte, node.end_byte))
    return structs


def _field_type(node) -> Optional[str]:
    if node is None:
        return None
    t = _text(node).replace(" ", "")
    if node.type == "primitive_type" and t in ("u32", "i32", "f32", "bool"):
        return t
    if node.type == "array_type":
        elem = node.child_by_field_name("element")
        length = node.child_by_field_name("length")
        if elem is None or length is None or _text(length) not in ("2", "3", "4"):
            return None
        n = int(_text(length))
        if elem.type == "primitive_type" and _text(elem) in ("u32", "i32", "f32"):
            return T.vec(_text(elem), n)
        if elem.type == "array_type" and _text(elem).replace(" ", "") == f"[f32;{n}]":
            return T.mat(n)
        return None
    if node.type in ("type_identifier", "scoped_type_identifier"):
        name = t.split("::")[-1]
        return D.VECTOR_TYPES.get(name)
    return None
