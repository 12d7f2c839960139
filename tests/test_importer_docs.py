"""The importer's documentation stays true.

- docs/diagnostics.md has one section per code of `CODES`, titled with its summary; each
  section's example reports that code (and only it), and the rendered block is exactly
  what the importer prints. `GOLDY_UPDATE_SNAPSHOTS=1` rewrites the rendered blocks.
- every kernel example in docs/dialect.md imports without diagnostics, and every example
  it marks `rust,reject` reports an error.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from goldy_import.importer import CODES, import_source

DOCS = Path(__file__).resolve().parent.parent / "docs"
UPDATE = os.environ.get("GOLDY_UPDATE_SNAPSHOTS") == "1"
SECTION = re.compile(r"^## (G\d{4}): (.*?)\n(.*?)```rust\n(.*?)```\n\n```text\n(.*?)```", re.M | re.S)


def sections(text: str) -> list[re.Match]:
    return list(SECTION.finditer(text))


def test_every_code_has_exactly_one_section() -> None:
    text = (DOCS / "diagnostics.md").read_text()
    codes = [m.group(1) for m in sections(text)]
    assert sorted(codes) == sorted(CODES), set(codes) ^ set(CODES)
    assert len(codes) == len(set(codes))
    headings = re.findall(r"^## (G\d{4})", text, re.M)
    assert headings == codes, "a section is malformed (missing rust or text block)"
    for m in sections(text):
        assert m.group(2) == CODES[m.group(1)], f"{m.group(1)}: title differs from CODES"


@pytest.mark.parametrize("code", sorted(CODES))
def test_catalogue_example_reports_its_code(code: str) -> None:
    text = (DOCS / "diagnostics.md").read_text()
    m = next(m for m in sections(text) if m.group(1) == code)
    result = import_source(m.group(4), "example.rs")
    assert result.diagnostics, f"{code}: the example reports nothing"
    # an error example may also draw warnings; it must report its own code and no other error
    assert {d.code for d in result.diagnostics if d.severity == "error" or d.code == code} == {code}, \
        result.render()
    rendered = result.render() + "\n"
    if UPDATE:
        if m.group(5) != rendered:
            start, end = m.span(5)
            (DOCS / "diagnostics.md").write_text(text[:start] + rendered + text[end:])
        return
    assert m.group(5) == rendered, f"{code}: rendered output changed; rerun with GOLDY_UPDATE_SNAPSHOTS=1"


def dialect_examples(kind: str) -> list[str]:
    text = (DOCS / "dialect.md").read_text()
    return [b for b in re.findall(rf"```{re.escape(kind)}\n(.*?)```", text, re.S) if "#[goldy::compute" in b]


def test_dialect_examples_import_cleanly() -> None:
    examples = dialect_examples("rust")
    assert len(examples) >= 4
    for ex in examples:
        result = import_source(ex, "dialect.md")
        assert result.errors == [] and result.kernels, f"{result.render()}\n{ex}"


def test_dialect_rejected_examples_report_errors() -> None:
    for ex in dialect_examples("rust,reject"):
        result = import_source(ex, "dialect.md")
        assert result.errors and not result.kernels, ex
