"""Write-after-read (G0045) and write-after-write (G0046) lints on workgroup arrays
(importer/lints.py): the same span quality as G0043/G0044, and silence on the correct
patterns (own elements, barriers between, one reading lane, disjoint halves, tree
reductions, double buffering; every example and test-data kernel is checked in
tests/test_lints.py). Each racy pattern is also a race the racecheck CPU run reports.
"""

from __future__ import annotations

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.importer import import_source
from test_lints import SHARED, kernel, lints

BARRIER = "    s[lid] = xs[i];\n    gpu::workgroup_barrier();\n"


def span_text(src: str, code: str, nth_label: int):
    r = import_source(src, "t.rs")
    (d,) = [d for d in r.diagnostics if d.code == code]
    lab = d.labels[nth_label]
    return (lab.span.line, lab.span.col, r.source.text(lab.span), lab.primary, lab.text)


@pytest.mark.parametrize("body, line, col, text, read", [
    # every lane reads the maximum, then lane 0 overwrites it (the attention kernel's bug)
    (SHARED + BARRIER + "    let m = s[0];\n    s[lid] = xs[i] - m;\n    out[i] = m;", 10, 5, "s[lid] = xs[i] - m", "s[0]"),
    # a neighbour's element read, then the neighbour writes it
    (SHARED + BARRIER + "    let t = s[lid + 1];\n    s[lid] = t * 2.0;\n    out[i] = t;", 10, 5, "s[lid] = t * 2.0",
     "s[lid + 1]"),
    # within one statement: lane l reads s[l ^ 1] while lane l ^ 1 writes it
    (SHARED + BARRIER + "    s[lid ^ 1] = s[lid] + 1.0;\n    out[i] = 0.0;", 9, 5, "s[lid ^ 1] = s[lid] + 1.0", "s[lid]"),
    # the element every lane read, rewritten by one lane
    (SHARED + BARRIER + "    let t = s[0];\n    if lid == 0 { s[0] = t + 1.0; }\n    out[i] = t;", 10, 19,
     "s[0] = t + 1.0", "s[0]"),
])
def test_write_after_read_is_reported_at_the_write(body, line, col, text, read):
    src = kernel(body)
    assert lints(src) == [("G0045", line, col, line, col + len(text), text)]
    _, _, got, primary, _ = span_text(src, "G0045", 1)
    assert (got, primary) == (read, False)


@pytest.mark.parametrize("body, line, col, text, first", [
    (SHARED + "    s[0] = xs[i];\n    out[i] = 0.0;", 7, 5, "s[0] = xs[i]", None),
    (SHARED + "    for j in 0..4u32 {\n        s[j] = xs[i];\n    }", 8, 9, "s[j] = xs[i]", None),
    (SHARED + "    s[lid] = xs[i];\n    s[lid + 1] = 0.5 * xs[i];", 8, 5, "s[lid + 1] = 0.5 * xs[i]", "s[lid] = xs[i]"),
])
def test_write_after_write_is_reported_at_the_second_write(body, line, col, text, first):
    src = kernel(body)
    assert lints(src) == [("G0046", line, col, line, col + len(text), text)]
    r = import_source(src, "t.rs")
    (d,) = r.diagnostics
    if first is None:
        assert len(d.labels) == 1 and "every thread of a workgroup writes the same element" in d.message
    else:
        assert (r.source.text(d.labels[1].span), d.labels[1].primary) == (first, False)


@pytest.mark.parametrize("body", [
    # a barrier between the read and the write
    SHARED + BARRIER + "    let m = s[0];\n    gpu::workgroup_barrier();\n    s[lid] = xs[i] - m;\n    out[i] = m;",
    # one lane reads and writes the element
    SHARED + BARRIER + "    if lid == 0 { let t = s[0]; s[0] = t + 1.0; }",
    # own elements
    SHARED + "    s[lid] = xs[i];\n    s[lid] = s[lid] * 2.0;\n    s[lid] = 1.0 + s[lid];\n    out[i] = s[lid];",
    # disjoint halves: element 0 read, [64, 128) written
    SHARED + BARRIER + "    let m = s[0];\n    s[lid + 64] = xs[i] - m;\n    out[i] = m;",
    # every lane writes the same value
    SHARED + "    s[0] = 1.0;\n    gpu::workgroup_barrier();\n    out[i] = s[0];",
    # the index changed between the read and the write
    SHARED + BARRIER + "    let mut j = 0u32;\n    let t = s[j];\n    j += 70;\n    if lid == 0 { s[j] = t; }",
    # a tree reduction: the shifted read is guarded by the lanes that write
    SHARED + BARRIER + "    let mut stride = 32u32;\n    while stride > 0 {\n        if lid < stride {\n"
             "            s[lid] += s[lid + stride];\n        }\n        gpu::workgroup_barrier();\n"
             "        stride >>= 1;\n    }\n    out[i] = s[0];",
    # double buffering
    SHARED + BARRIER + "    let mut cur = 0u32;\n    for t in 0..3u32 {\n        let v = s[cur * 64 + (lid + 1) % 64];\n"
             "        s[(1 - cur) * 64 + lid] = v;\n        gpu::workgroup_barrier();\n        cur = 1 - cur;\n    }",
    # after a collective (it ends with a barrier)
    SHARED + "    let t = gpu::workgroup_sum::<64>(xs[i], s);\n    s[lid] = xs[i] / t;\n    gpu::workgroup_barrier();\n"
             "    out[i] = s[(lid + 1) % 64];",
])
def test_correct_patterns_are_silent(body):
    assert lints(kernel(body)) == []


@pytest.mark.parametrize("body", [
    SHARED + BARRIER + "    let m = s[0];\n    s[lid] = xs[i] - m;\n    out[i] = m;",
    SHARED + BARRIER + "    s[lid ^ 1] = s[lid] + 1.0;\n    out[i] = 0.0;",
    SHARED + "    s[lid] = xs[i];\n    s[lid + 1] = 0.5 * xs[i];\n    gpu::workgroup_barrier();\n    out[i] = s[lid];",
    SHARED + "    s[0] = xs[i];\n    gpu::workgroup_barrier();\n    out[i] = s[0];",
])
def test_each_reported_pattern_races_under_racecheck(body):
    src = kernel(body)
    assert lints(src), "the lint reports it"
    mod = gi.load_source(src, "t.rs")
    dev = gi.Device("cpu", racecheck=True)
    xs = dev.buffer(np.random.default_rng(2).standard_normal(64).astype(np.float32))
    out = dev.buffer(np.zeros(64, np.float32))
    s = gi.Scheme(dev)
    mod.k.prepare(dev).record(s, "k", xs, out).over_1d(64)
    with pytest.raises(gi.RaceError) as e:
        s.submit()
    assert e.value.resource == "s"
