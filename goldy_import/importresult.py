"""`ImportResult`, what the importer returns: here, outside the importer package, so that a
result read back from the disk cache (goldy_import/ircache.py) needs no tree-sitter."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from goldy_import.ir import nodes as N
from goldy_import.ir.diagnostics import Diagnostic, SourceText, render_human


@dataclass
class ImportResult:
    kernels: list[N.Kernel]
    diagnostics: list[Diagnostic]
    source: SourceText
    source_hash: str
    structs: dict[str, N.StructDecl] = field(default_factory=dict)
    # every `#[goldy::compute]` function's name -> its byte range (attributes included),
    # whether or not it imported: what `only` attributes diagnostics by
    kernel_regions: dict[str, tuple[int, int]] = field(default_factory=dict)

    def only(self, names) -> "ImportResult":
        """The result for the kernels `names` alone: those kernels, and the file's
        diagnostics less those inside other kernels (errors outside every kernel, such as
        a bad `#[goldy::gpu]` struct or a syntax error in host code, still count)."""
        want = set(names)
        others = [r for n, r in self.kernel_regions.items() if n not in want]
        diags = [d for d in self.diagnostics if not any(s <= d.span.start < e for s, e in others)]
        return ImportResult([k for k in self.kernels if k.name in want], diags, self.source, self.source_hash,
                            self.structs, {n: r for n, r in self.kernel_regions.items() if n in want})

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def render(self) -> str:
        return "\n\n".join(render_human(d, self.source) for d in self.diagnostics)

    def kernel(self, name: str) -> Optional[N.Kernel]:
        return next((k for k in self.kernels if k.name == name), None)
