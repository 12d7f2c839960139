"""ir/pipeline.py: verify -> checks -> legalize -> verify, the facts computed once, the
cache key, and the runtime preparing kernels through it."""

import copy

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.ir import nodes as N
from goldy_import.ir import pipeline
from goldy_import.ir.checks import check_sites, insert_checks
from goldy_import.ir.verify import VerifyError

from oracle import kernel_ir

SRC = """
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn mixed(x: &[f32], hist: &mut [u32], out: &mut [f32], img: gpu::DirectSpatial<f32>, d: u32) {
    let i = gpu::global_id().x;
    if i >= out.len() { return; }
    out[i] = x[i] * 2.0;
    gpu::atomic_add(hist, i % 4, 1);
    img[gpu::uint2(i, 0)] = x[i];
    let q = i / d;
    out[0] = q as f32;
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn total(x: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    let scratch = gpu::workgroup_array::<f32, 64>();
    let mut v = 0.0;
    if i < x.len() { v = x[i]; }
    let s = gpu::workgroup_sum::<64>(v, scratch);
    if gpu::local_id().x == 0 { out[gpu::workgroup_id().x] = s; }
}
"""


def _ir(name):
    return kernel_ir(SRC, name)


@pytest.mark.parametrize("target", pipeline.TARGETS)
def test_lower_inserts_checks_and_records_facts(target):
    k = _ir("mixed")
    low = pipeline.lower(k, target, checks=True)
    assert low.target == target and low.checks
    assert [s.id for s in low.info.sites] == [s.id for s in check_sites(low.kernel)]
    assert low.info.has_checks
    kinds = {s.kind for s in low.info.sites}
    assert kinds == {"index", "divide"}
    img_sites = {s.id for s in low.info.sites if s.resource == "img"}
    assert img_sites and low.info.texel_sites == frozenset(img_sites)
    assert low.info.written == {"hist", "out", "img"}
    assert low.info.atomic == {"hist"}
    assert low.info.returns and not low.info.syncs and not low.info.return_before_sync
    # the input is not changed by the pipeline
    assert not check_sites(k)


def test_lower_without_checks_keeps_no_sites():
    low = pipeline.lower(_ir("mixed"), "wgsl", checks=False)
    assert low.info.sites == () and not low.info.has_checks


def test_sync_facts():
    info = pipeline.lower(_ir("total"), "cpu").info
    assert info.syncs and not info.returns
    assert "out" in info.written


def test_cache_key_depends_on_ir_target_and_options():
    k = _ir("mixed")
    keys = {pipeline.lower(k, t, checks=c).key for t in pipeline.TARGETS for c in (True, False)}
    assert len(keys) == 8
    assert pipeline.lower(k, "ptx").key == pipeline.lower(copy.deepcopy(k), "ptx").key
    other = copy.deepcopy(k)
    other.workgroup_size = (128, 1, 1)
    assert pipeline.lower(other, "ptx").key != pipeline.lower(k, "ptx").key


def test_facts_of_a_copy_are_its_own():
    k = insert_checks(_ir("mixed"))
    info = pipeline.kernel_info(k)
    assert pipeline.kernel_info(k) is info  # computed once per kernel object
    twin = copy.deepcopy(k)
    twin.body = [s for s in twin.body if not isinstance(s, N.AtomicAdd)]
    assert pipeline.kernel_info(twin).atomic == frozenset()
    assert pipeline.kernel_info(k).atomic == {"hist"}


def test_invalid_ir_is_refused_before_any_pass():
    k = _ir("mixed")
    bad = copy.deepcopy(k)
    sp = N.NO_SPAN
    bad.body.append(N.Assign(sp, N.Var("f32", sp, "nope"), N.Const("f32", sp, 1.0)))
    with pytest.raises(VerifyError):
        pipeline.lower(bad, "cpu")


def test_unknown_target():
    with pytest.raises(ValueError, match="unknown target"):
        pipeline.lower(_ir("mixed"), "metal")


def test_for_target_reuses_what_lower_produced():
    low = pipeline.lower(_ir("mixed"), "wgsl")
    again = pipeline.for_target(low.kernel, "wgsl")
    assert again.kernel is low.kernel and again.info is low.info


def test_runtime_prepares_through_the_pipeline():
    kernels = gi.load_source(SRC, "mixed.rs")
    dev = gi.Device("cpu")
    pk = kernels.mixed.prepare(dev)
    assert pk.prepared.target_ir is not pk.prepared.ir
    assert pipeline.kernel_info(pk.prepared.target_ir).has_checks
    unchecked = kernels.mixed.prepare(dev, checks=False).prepared
    assert not pipeline.kernel_info(unchecked.target_ir).has_checks
    x = dev.buffer(np.arange(8, dtype=np.float32))
    out = dev.buffer(np.zeros(8, np.float32))
    hist = dev.buffer(np.zeros(4, np.uint32))
    img = dev.image(np.zeros((1, 8), np.float32))
    s = gi.Scheme(dev)
    pk.record(s, "m", x, hist, out, img, 0).over_1d(8)
    with pytest.raises(gi.KernelFault, match="integer division by zero at mixed.rs:9:13"):
        s.submit()


@pytest.mark.parametrize("target", pipeline.TARGETS)
def test_lower_legalizes_for_the_target(target):
    from goldy_import.ir import targets
    low = pipeline.lower(_ir("total"), target)
    kinds = {type(s) for s in N.walk_stmts(low.kernel.body)}
    assert (N.Reduce in kinds) == targets.target(target).has("reduce")
    assert N.Softmax not in kinds or targets.target(target).has("softmax")
    # an emitter handed the pipeline's output does not lower it again
    assert pipeline.for_target(low.kernel, target).kernel is low.kernel
