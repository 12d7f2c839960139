"""A Rust file's import, through the disk cache (goldy_import/cache.py): keyed by the file
name (it is in every span and diagnostic) and the source bytes, so a warm `gi.load` reads
the verified IR back without loading tree-sitter or the importer. Only a result without
errors is stored; what is read back is verified again, and anything that does not decode
is a miss (the fresh import then replaces it)."""

from __future__ import annotations

import hashlib
from typing import Any, Optional

from goldy_import import cache
from goldy_import.importresult import ImportResult
from goldy_import.ir import nodes as N
from goldy_import.ir.diagnostics import Diagnostic, Label, SourceText
from goldy_import.ir.serialize import IR_VERSION, _decode, _encode, kernel_from_dict, kernel_to_dict

KIND = "ir"


def import_cached(data: bytes, filename: str) -> ImportResult:
    """`importer.import_source(data, filename)`, or its stored result."""
    digest = hashlib.sha256(data).hexdigest()
    k = cache.key(KIND, (f"ir {IR_VERSION}", filename, digest))
    doc = cache.get_json(KIND, k)
    if doc is not None:
        hit = _result_from(doc, data, filename, digest)
        if hit is not None:
            return hit
    from goldy_import.importer import import_source
    result = import_source(data, filename)
    if result.ok:
        cache.put_json(KIND, k, _result_to(result))
    return result


def _result_to(r: ImportResult) -> dict[str, Any]:
    return {"kernels": [kernel_to_dict(k) for k in r.kernels],
            "structs": [_encode(s) for s in r.structs.values()],
            "regions": {n: list(span) for n, span in r.kernel_regions.items()},
            "diagnostics": [_diagnostic_to(d) for d in r.diagnostics]}


def _result_from(doc: Any, data: bytes, filename: str, digest: str) -> Optional[ImportResult]:
    from goldy_import.ir.verify import verify
    try:
        kernels = [kernel_from_dict(d) for d in doc["kernels"]]
        for k in kernels:
            verify(k)
        structs = [_decode(s) for s in doc["structs"]]
        if not all(isinstance(s, N.StructDecl) for s in structs):
            return None
        regions = {str(n): (int(a), int(b)) for n, (a, b) in doc["regions"].items()}
        diags = [_diagnostic_from(d) for d in doc["diagnostics"]]
    except Exception:  # a foreign or older entry of any shape: import afresh
        return None
    if any(d.severity == "error" for d in diags):
        return None
    return ImportResult(kernels, diags, SourceText(data, filename), digest, {s.name: s for s in structs}, regions)


def _diagnostic_to(d: Diagnostic) -> dict[str, Any]:
    return {"code": d.code, "message": d.message, "file": d.file, "help": d.help, "notes": d.notes,
            "severity": d.severity, "labels": [[_encode(lb.span), lb.text, lb.primary] for lb in d.labels]}


def _diagnostic_from(d: dict[str, Any]) -> Diagnostic:
    labels = [Label(N.Span(*span), str(text), bool(primary)) for span, text, primary in d["labels"]]
    return Diagnostic(str(d["code"]), str(d["message"]), str(d["file"]), labels, list(d["help"]),
                      list(d["notes"]), str(d["severity"]))
