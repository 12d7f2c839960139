"""The Python IR builder (goldy_import/builder.py, zyx's `Kernel` API).

Kernels built to say what rust_examples/ kernels say lower to exactly the importer's IR
(spans and file names aside), and run bit-identically to them on every backend on fresh
random inputs; zyx's `compile().forward(inputs, shapes)` allocates and returns outputs;
every bad call raises a BuilderError naming this file and line; a failed check at run time
names the builder call's line.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.builder import BuilderError
from goldy_import.importer import import_file
from oracle import REPO, assert_same, device, ir_without_origin

EXAMPLES = REPO / "rust_examples"
HERE = os.path.basename(__file__)


def rng():
    return np.random.default_rng(np.random.SeedSequence().entropy % 2**32)


def saxpy():
    b = gi.KernelBuilder("saxpy", workgroup_size=(256, 1, 1))
    x = b.define("f32", "global", read_only=True, name="x")
    y = b.define("f32", "global", read_only=False, name="y")
    a = b.scalar("f32", name="a")
    i = b.let("i", b.global_id(0))
    with b.if_(i < y.len()):
        b.store(y, a * x[i] + y[i], i)
    return b


def block_sum():
    b = gi.KernelBuilder("block_sum", workgroup_size=(256, 1, 1))
    inp = b.define("f32", "global", read_only=True, name="input")
    sums = b.define("f32", "global", read_only=False, name="sums")
    scratch = b.define("f32", "local", n=256, name="scratch")
    lid = b.let("lid", b.local_id(0))
    i = b.let("i", b.global_id(0))
    v = b.let("v", 0.0, mutable=True)
    with b.if_(i < inp.len()):
        b.assign(v, inp[i])
    b.store(scratch, v, lid)
    b.barrier()
    stride = b.let("stride", b.const(128, "u32"), mutable=True)
    with b.while_(stride > 0):
        with b.if_(lid < stride):
            b.store(scratch, scratch[lid] + scratch[lid + stride], lid)
        b.barrier()
        b.assign(stride, stride >> b.const(1, "i32"))  # `stride >>= 1`: an untyped amount is i32
    with b.if_(lid.eq(0)):
        b.store(sums, scratch[0], b.workgroup_id(0))
    return b


def histogram():
    b = gi.KernelBuilder("histogram", workgroup_size=(128, 1, 1))
    values = b.define(np.uint32, "global", read_only=True, name="values")
    bins = b.define(np.uint32, "global", read_only=False, name="bins")
    i = b.let("i", b.global_id(0))
    with b.if_(i < values.len()):
        bin_ = b.let("bin", values[i] % bins.len())
        b.atomic_add(bins, bin_, 1)
    return b


def collatz_steps():
    b = gi.KernelBuilder("collatz_steps", workgroup_size=(64, 1, 1))
    starts = b.define("u32", "global", name="starts")
    steps = b.define("u32", "global", read_only=False, write_only=True, name="steps")
    limit = b.scalar("u32", name="limit")
    i = b.let("i", b.global_id(0))
    with b.if_(i >= starts.len()):
        b.return_()
    n = b.let("n", starts[i], mutable=True)
    with b.if_(n.eq(0)):
        b.store(steps, 0, i)
        b.return_()
    count = b.let("count", b.const(0, "u32"), mutable=True)
    with b.loop():
        with b.if_(b.or_(n.eq(1), count >= limit)):
            b.break_()
        b.assign(count, count + 1)
        with b.if_((n % 2).eq(0)):
            b.assign(n, n / 2)
            b.continue_()
        b.assign(n, 3 * n + 1)
    b.store(steps, count, i)
    return b


def wg_reduce():  # poot's dialect: rust_examples/poot_reduce.rs
    b = gi.KernelBuilder("wg_reduce", workgroup_size=(64, 1, 1))
    a = b.define("f32", "global", name="a")
    out = b.define("f32", "global", read_only=False, name="out")
    size = b.let("WORKGROUP_SIZE", b.const(64, "u32"))
    lane = b.let("lane", b.local_id(0))
    i = b.let("i", b.global_id(0))
    v = b.let("v", b.const(0.0, "f32"), mutable=True)
    with b.if_(i < a.len()):
        b.assign(v, a[i])
    lds = b.define("f32", "local", n=1024, name="lds0")
    b.store(lds, v, lane)
    b.barrier()
    with b.if_(lane.eq(0)):
        acc = b.let("acc", b.const(0.0, "f32"), mutable=True)
        with b.for_range("j", 0, size) as j:
            b.assign(acc, acc + lds[j])
        b.store(out, acc, b.workgroup_id(0))
    return b


def _f32(r, n):
    return r.standard_normal(n).astype(np.float32)


# builder, source file, inputs(rng), grid
TWINS = {
    "saxpy": (saxpy, "saxpy.rs", lambda r: [_f32(r, 3000), _f32(r, 3000), float(np.float32(r.normal()))],
              ("over_1d", 3000)),
    "block_sum": (block_sum, "reduce_manual.rs", lambda r: [_f32(r, 3000), np.full(12, np.nan, np.float32)],
                  ("over_1d", 3000)),
    "histogram": (histogram, "histogram.rs",
                  lambda r: [r.integers(0, 256, 3000).astype(np.uint32), np.zeros(64, np.uint32)], ("over_1d", 3000)),
    "collatz_steps": (collatz_steps, "collatz.rs",
                      lambda r: [r.integers(0, 5000, 700).astype(np.uint32), np.zeros(700, np.uint32), 200],
                      ("over_1d", 700)),
    "wg_reduce": (wg_reduce, "poot_reduce.rs", lambda r: [_f32(r, 3000), np.full(47, np.nan, np.float32)],
                  ("over_1d", 3000)),
}


@pytest.mark.parametrize("name", list(TWINS))
def test_builder_makes_the_importers_ir(name):
    build, src, _inputs, _grid = TWINS[name]
    imported = import_file(EXAMPLES / src).kernel(name)
    built = build().build().ir
    assert ir_without_origin(built) == ir_without_origin(imported)
    assert built.source_file == __file__ and built.params[0].span.line > 1


def _run(dev, kdef, args, grid):
    pk = kdef.prepare(dev)
    bufs = [dev.buffer(a) if isinstance(a, np.ndarray) else None for a in args]
    scheme = gi.Scheme(dev)
    node = pk.record(scheme, kdef.name, *[b if b is not None else a for a, b in zip(args, bufs)])
    node.groups(grid[1]) if grid[0] == "groups" else getattr(node, grid[0])(*grid[1:])
    scheme.submit()
    return [b.numpy() if b is not None else None for b in bufs]


@pytest.mark.parametrize("backend", ["cpu", "wgpu", "slang", "cuda"])
@pytest.mark.parametrize("name", list(TWINS))
def test_builder_kernel_runs_bit_identically_to_the_imported_one(name, backend):
    dev = device(backend)
    build, src, inputs, grid = TWINS[name]
    args = inputs(rng())
    built = _run(dev, build().build(), args, grid)
    imported = _run(dev, gi.load(EXAMPLES / src).kernels[name].definition(), args, grid)
    for k, (g, w) in enumerate(zip(built, imported)):
        if w is not None:
            assert_same(g, w, what=f"{backend}: `{name}` argument {k}, built vs imported")


def test_zyx_double_example_forward():
    b = gi.KernelBuilder("double", workgroup_size=(64, 1, 1))
    n = 4
    inp = b.define("f32", "global", True, n)
    gidx = b.group_index(0, n)
    loaded = b.load(inp, gidx)
    doubled = b.binary("add", loaded, loaded)
    out = b.define("f32", "global", False, n)
    b.store(out, doubled, gidx)
    compiled = b.build().compile(device("cpu"))
    [result] = compiled.forward([np.array([1.0, 2.0, 3.0, 4.0], np.float32)], [n])
    assert result.tolist() == [2.0, 4.0, 6.0, 8.0]


@pytest.mark.parametrize("backend", ["cpu", "wgpu", "slang", "cuda"])
def test_forward_2d_with_scalars_math_and_casts(backend):
    b = gi.KernelBuilder("blend", workgroup_size=(8, 8, 1))
    w, h = 37, 23
    x = b.define("f32", "global", name="x")
    scale = b.scalar("f32", name="scale")
    out = b.define("f32", "global", read_only=False, name="out")
    idx = b.define("u32", "global", read_only=False, name="idx")
    col = b.group_index(0, w, name="col")
    row = b.group_index(1, h, name="row")
    at = b.let("at", row * w + col)
    v = b.let("v", x[at])
    b.store(out, b.select(v > 0.0, b.sqrt(v) * scale, b.exp(v) - 1.0), at)
    b.store(idx, b.cast(b.max(v * 100.0, 0.0), "u32") + (row << 16), at)
    compiled = b.build().compile(device(backend))
    r = rng()
    xs = _f32(r, w * h)
    got_out, got_idx = compiled.forward([xs, 1.5], [(h, w), w * h])
    want_out, want_idx = b.build().compile(device("cpu")).forward([xs, 1.5], [(h, w), w * h])
    assert got_out.shape == (h, w)
    assert_same(got_out, want_out, what=f"{backend} vs cpu: out")
    assert_same(got_idx, want_idx, what=f"{backend} vs cpu: idx")
    rows = np.repeat(np.arange(h, dtype=np.uint32), w)
    with np.errstate(invalid="ignore"):
        ref = np.where(xs > 0, np.sqrt(xs) * np.float32(1.5), 0).astype(np.float32)
    pos = xs > 0
    assert_same(want_out.reshape(-1)[pos], ref[pos], what="cpu vs numpy: sqrt branch")
    assert_same(want_idx, (np.maximum(xs * np.float32(100), 0).astype(np.uint32) + (rows << 16)),
                what="cpu vs numpy: idx")


def _line(marker: str) -> int:
    return next(n for n, t in enumerate(open(__file__).read().splitlines(), 1) if t.rstrip().endswith(marker))


def test_errors_name_the_builder_call():
    b = gi.KernelBuilder("bad")
    xs = b.define("f32", "global", name="xs")
    out = b.define("u32", "global", read_only=False, name="out")
    i = b.group_index(0)
    with pytest.raises(BuilderError) as e:
        b.store(out, xs[i], i)  # MARK store
    assert str(e.value) == (f"kernel `bad`: {__file__}:{_line('# MARK store')}: store(): mismatched types: "
                            f"an element of `out` is `u32`, found `f32`")
    with pytest.raises(BuilderError, match=rf"{HERE}:{_line('# MARK plus')}: `\+`: mismatched types: `f32 \+ u32`"):
        xs[i] + i  # MARK plus
    with pytest.raises(BuilderError, match=rf"{HERE}:{_line('# MARK ro')}: store\(\): cannot write to read-only `xs`"):
        b.store(xs, 1.0, i)  # MARK ro
    with pytest.raises(BuilderError, match="break` outside of a loop"):
        b.break_()
    with pytest.raises(BuilderError, match="expected `u32`, found the float 0.5"):
        xs[0.5]
    with pytest.raises(BuilderError, match="literal out of range for `u32`: -1"):
        out[-1]
    with pytest.raises(BuilderError, match="has no Python truth value"):
        if i < 3:
            pass
    with pytest.raises(BuilderError, match="unsupported dtype"):
        b.define("f64")
    with pytest.raises(BuilderError, match="`sin` is not defined for `u32`"):
        b.sin(i)


def test_verify_rejects_a_divergent_barrier_at_its_line():
    b = gi.KernelBuilder("divergent")
    out = b.define("f32", "global", read_only=False, name="out")
    i = b.let("i", b.global_id(0))
    with b.if_(i < out.len()):
        b.barrier()  # MARK barrier
    with pytest.raises(BuilderError, match=rf"{HERE}:{_line('# MARK barrier')}: a barrier in control flow"):
        b.build()


def test_a_failed_check_names_the_builder_line():
    b = gi.KernelBuilder("oob")
    xs = b.define("f32", "global", name="xs")
    out = b.define("f32", "global", read_only=False, name="out")
    i = b.group_index(0, 100)
    b.store(out, xs[i + 1], i)  # MARK oob
    with pytest.raises(gi.KernelFault) as e:
        b.build().compile(device("cpu")).forward([np.zeros(100, np.float32)], [100])
    assert f"{HERE}:{_line('# MARK oob')}" in str(e.value)


def test_forward_argument_errors():
    b = gi.KernelBuilder("copy")
    xs = b.define("f32", "global", name="xs")
    out = b.define("f32", "global", read_only=False, name="out")
    i = b.let("i", b.global_id(0))
    with b.if_(i < out.len()):
        b.store(out, xs[i], i)
    c = b.build().compile(device("cpu"))
    with pytest.raises(gi.BindingError, match="forward takes 1 inputs \\(xs\\) and 1 output shapes \\(out\\)"):
        c.forward([], [3])
    with pytest.raises(gi.BindingError, match="pass forward\\(..., grid=n\\)"):
        c.forward([np.ones(3, np.float32)], [3])
    assert c.forward([np.ones(3, np.float32)], [3], grid=3)[0].tolist() == [1.0, 1.0, 1.0]
