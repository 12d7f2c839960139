"""The collector pause around imports and emits (goldy_import/gcpause.py) always ends."""

from __future__ import annotations

import gc

import pytest

from goldy_import.codegen.ptx import emit_ptx
from goldy_import.gcpause import gc_paused
from goldy_import.importer import import_source

SRC = """use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(y: &mut [f32]) { let i = gpu::global_id().x; if i < y.len() { y[i] = 1.0; } }
"""


def test_import_and_emit_leave_the_collector_as_they_found_it():
    assert gc.isenabled()
    r = import_source(SRC, "k.rs")
    assert gc.isenabled()
    emit_ptx(r.kernels[0])
    assert gc.isenabled()
    gc.disable()
    try:
        import_source(SRC, "k.rs")
        assert not gc.isenabled()  # a caller's own choice stays
    finally:
        gc.enable()


def test_pauses_nest_and_end_on_errors():
    with gc_paused():
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError):
        with gc_paused():
            raise ValueError("inside")
    assert gc.isenabled()
    bad = import_source("fn (", "bad.rs")  # diagnostics, not an exception
    assert bad.diagnostics and gc.isenabled()


def test_what_a_pause_kept_is_old_and_its_cycles_still_collected():
    """The objects a pause allocated and kept go to the oldest generation, not the
    youngest (no scan of them all when it ends), and a cycle made inside is still freed
    by the next full collection."""
    import weakref

    class Node:
        pass

    with gc_paused():
        kept = [[i] for i in range(50_000)]
        a, b = Node(), Node()
        a.other, b.other = b, a  # a cycle, dropped below
        probe = weakref.ref(a)
    assert gc.get_count()[0] < 1_000  # the 50,000 lists are not waiting in generation 0
    del a, b
    gc.collect()
    assert probe() is None and len(kept) == 50_000
