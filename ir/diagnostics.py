"""rustc-style diagnostics: codes, spans, human and JSON rendering.

In `ir/`, not the importer, so that the verifier, the passes and the emitters can raise
them too; nothing here needs tree-sitter."""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from typing import Optional

from .nodes import Span

_new = object.__new__

_NEWLINE = re.compile(b"\n")
_CONTINUATION = re.compile(b"[\x80-\xbf]")  # UTF-8 bytes that continue a character

# Every code the toolchain can emit. docs/diagnostics.md has an example of each.
CODES = {
    "G0001": "syntax error",
    "G0002": "invalid kernel attribute",
    "G0003": "unsupported parameter type",
    "G0004": "unsupported type",
    "G0005": "`usize`/`isize` are not supported",
    "G0006": "closures are not supported",
    "G0007": "macros are not supported",
    "G0008": "`match` is not supported",
    "G0009": "heap allocation is not supported",
    "G0010": "references are only allowed as resource parameters",
    "G0011": "traits and `dyn` are not supported",
    "G0012": "generics are not supported",
    "G0013": "`async` is not supported",
    "G0014": "`unsafe` is not supported",
    "G0015": "call to a function that is not a builtin",
    "G0016": "panics and `unwrap` are not supported",
    "G0017": "unknown builtin",
    "G0018": "unknown or unsupported method",
    "G0019": "mismatched types",
    "G0020": "cannot find name in this scope",
    "G0021": "cannot assign twice to an immutable variable",
    "G0022": "cannot write to a read-only resource",
    "G0023": "workgroup array must be declared at kernel top level",
    "G0024": "collective size must be a power of two",
    "G0025": "collective must be a `let` or plain assignment",
    "G0026": "`#[tensor]` contract on a non-tensor parameter",
    "G0027": "iterators are not supported",
    "G0028": "unsupported expression or statement",
    "G0029": "wrong number of arguments",
    "G0030": "invalid tensor shape contract",
    "G0031": "unsupported pattern",
    "G0032": "`break`/`continue` outside a loop",
    "G0033": "invalid literal",
    "G0034": "unknown field or swizzle",
    "G0035": "cannot index this value",
    "G0036": "duplicate name",
    "G0037": "unsupported `#[goldy::gpu]` struct",
    "G0038": "invalid collective or atomic argument",
    "G0039": "kernel functions must not return a value",
    "G0040": "nesting too deep",
    "G0041": "use of a possibly uninitialized variable",
    "G0042": "barrier or collective in thread-dependent control flow",
    "G0043": "every thread writes the same element",
    "G0044": "workgroup array read before a barrier",
    "G0045": "workgroup array written before a barrier after another thread's read",
    "G0046": "workgroup array element written by two threads",
}


@dataclass
class Label:
    span: Span
    text: str
    primary: bool = True


@dataclass
class Diagnostic:
    code: str
    message: str
    file: str
    labels: list[Label]
    help: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    severity: str = "error"

    @property
    def span(self) -> Span:
        return self.labels[0].span

    def to_dict(self) -> dict:
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "spans": [
                {
                    "file": self.file,
                    "line_start": lb.span.line,
                    "column_start": lb.span.col,
                    "line_end": lb.span.end_line,
                    "column_end": lb.span.end_col,
                    "byte_start": lb.span.start,
                    "byte_end": lb.span.end,
                    "label": lb.text,
                    "is_primary": lb.primary,
                }
                for lb in self.labels
            ],
            "help": list(self.help),
            "notes": list(self.notes),
        }


class SourceText:
    """The bytes of a Rust file and the mapping from byte offsets to 1-based line/column.

    Columns count characters, not bytes, as rustc's do. Invalid UTF-8 is decoded with
    replacement characters so every byte still maps somewhere.
    """

    def __init__(self, data: bytes, filename: str):
        self.data = data
        self.filename = filename
        self.line_starts = [0] + [m.end() for m in _NEWLINE.finditer(data)]
        self.ascii = data.isascii()  # then columns are byte offsets: no decoding needed
        # otherwise a column counts the bytes before it that start a character
        self.continuation = [] if self.ascii else [m.start() for m in _CONTINUATION.finditer(data)]

    def line_col(self, byte: int) -> tuple[int, int]:
        byte = max(0, min(byte, len(self.data)))
        row = bisect.bisect_right(self.line_starts, byte) - 1
        start = self.line_starts[row]
        if self.ascii:
            return row + 1, byte - start + 1
        skipped = bisect.bisect_left(self.continuation, byte) - bisect.bisect_left(self.continuation, start)
        return row + 1, byte - start - skipped + 1

    def span(self, start: int, end: int) -> Span:
        line, col = self.line_col(start)
        end_line, end_col = self.line_col(end)
        return Span(start, end, line, col, end_line, end_col)

    def node_span(self, node) -> Span:
        """`span(node.start_byte, node.end_byte)`, faster: tree-sitter knows the rows."""
        if not self.ascii:
            return self.span(node.start_byte, node.end_byte)
        (r0, c0), (r1, c1) = node.start_point, node.end_point
        # Span(...) without the frozen dataclass's __init__ (six object.__setattr__ calls):
        # the importer makes several per statement
        sp = _new(Span)
        d = sp.__dict__
        d["start"], d["end"], d["line"], d["col"], d["end_line"], d["end_col"] = \
            node.start_byte, node.end_byte, r0 + 1, c0 + 1, r1 + 1, c1 + 1
        return sp

    def line_text(self, line: int) -> str:
        start = self.line_starts[line - 1]
        end = self.line_starts[line] - 1 if line < len(self.line_starts) else len(self.data)
        return self.data[start:end].decode("utf-8", errors="replace").rstrip("\r")

    def text(self, span: Span) -> str:
        return self.data[span.start:span.end].decode("utf-8", errors="replace")


def render_human(diag: Diagnostic, source: Optional[SourceText]) -> str:
    """rustc's layout: header, arrow with location, gutter, source line, carets, help."""
    sp = diag.span
    out = [f"{diag.severity}[{diag.code}]: {diag.message}"]
    width = len(str(max(lb.span.end_line for lb in diag.labels)))
    pad = " " * width
    out.append(f"{pad}--> {diag.file}:{sp.line}:{sp.col}")
    if source is not None:
        out.append(f"{pad} |")
        if len(diag.labels) == 1 and sp.end_line > sp.line and sp.line <= len(source.line_starts):
            out += _render_multiline(source, diag.labels[0], width)
        else:
            by_line: dict[int, list[Label]] = {}
            for lb in diag.labels:
                by_line.setdefault(lb.span.line, []).append(lb)
            previous = None
            for line in sorted(by_line):
                if previous is not None and line > previous + 1:
                    out.append("...")  # rustc's mark for skipped source lines
                out += _render_line(source, line, by_line[line], width)
                previous = line
        out.append(f"{pad} |")
    for h in diag.help:
        out.append(f"{pad} = help: {h}")
    for n in diag.notes:
        out.append(f"{pad} = note: {n}")
    return "\n".join(out)


def render_json(diags: list[Diagnostic]) -> str:
    """One JSON object per line, as editors read rustc's `--message-format json`."""
    return "\n".join(json.dumps(d.to_dict()) for d in diags)


def _render_multiline(source: SourceText, lb: Label, width: int) -> list[str]:
    """A label over several lines, as rustc draws it: `/` where it starts, `|` down the
    side, `|___^` under where it ends. Long spans show their first and last two lines."""
    pad = " " * width
    s = lb.span
    last = min(s.end_line, len(source.line_starts))
    lines = list(range(s.line, last + 1))
    if len(lines) > 4:
        lines = lines[:2] + [0] + lines[-2:]
    out = []
    for n in lines:
        if n == 0:
            out.append("...")
            continue
        raw = source.line_text(n)
        text = raw.expandtabs(4)
        if n == s.line:
            start = len(raw[: s.col - 1].expandtabs(4))
            out.append(f"{str(n).ljust(width)} |   {text}" if start else f"{str(n).ljust(width)} | / {text}")
            if start:  # starts mid-line: draw the corner under the start
                out.append(f"{pad} |  {'_' * (start + 1)}^")
        else:
            out.append(f"{str(n).ljust(width)} | | {text}")
    end = len(source.line_text(last)[: max(s.end_col - 2, 0)].expandtabs(4))
    tail = f" {lb.text}" if lb.text else ""
    out.append(f"{pad} | |{'_' * (end + 1)}^{tail}")
    return out


def _render_line(source: SourceText, line: int, labels: list[Label], width: int) -> list[str]:
    """One source line, its underlines, and the label texts (rustc's layout: the
    rightmost label sits after its underline, the others hang below on `|` stems)."""
    pad = " " * width
    raw = source.line_text(line) if line <= len(source.line_starts) else ""
    text = raw.expandtabs(4)
    marks = []
    for lb in labels:
        s = lb.span
        start = len(raw[: s.col - 1].expandtabs(4))
        end = len(raw[: max(s.end_col - 1, s.col)].expandtabs(4)) if s.end_line == s.line else len(text)
        marks.append((start, max(1, end - start), lb))
    marks.sort(key=lambda m: m[0])
    out = [f"{str(line).ljust(width)} | {text}"]
    under = [" "] * (max(m[0] + m[1] for m in marks))
    for start, n, lb in marks:
        for i in range(start, start + n):
            under[i] = "^" if lb.primary else "-"
    last = marks[-1][2]
    tail = f" {last.text}" if last.text else ""
    out.append(f"{pad} | {''.join(under)}{tail}".rstrip())
    hanging = [m for m in marks[:-1] if m[2].text]
    for idx in range(len(hanging) - 1, -1, -1):
        stems = [" "] * (hanging[-1][0] + 1)
        for st, _, _ in hanging[:idx + 1]:
            stems[st] = "|"
        out.append(f"{pad} | {''.join(stems)}".rstrip())
        st, _, lb = hanging[idx]
        row = [" "] * st
        for s2, _, _ in hanging[:idx]:
            row[s2] = "|"
        out.append(f"{pad} | {''.join(row)}{lb.text}")
    return out
