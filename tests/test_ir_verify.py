"""The IR verifier accepts what the importer produces and rejects corrupt IR with
VerifyError; the JSON form is versioned and exact."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from goldy_import.importer import import_file, import_source
from goldy_import.ir import IR_VERSION, VerifyError, from_json, kernel_to_dict, to_json, verify
from goldy_import.ir import nodes as N
from goldy_import.ir.pretty import format_kernel

KITCHEN = Path(__file__).resolve().parent / "data" / "kitchen_sink.rs"


@pytest.fixture(scope="module")
def kernel() -> N.Kernel:
    return import_file(KITCHEN).kernel("everything")


def first(k: N.Kernel, cls, pred=lambda s: True):
    return next(s for s in N.walk_stmts(k.body) if isinstance(s, cls) and pred(s))


def first_expr(k: N.Kernel, cls):
    for s in N.walk_stmts(k.body):
        for e in N.stmt_exprs(s):
            for x in N.walk_expr(e):
                if isinstance(x, cls):
                    return x
    raise LookupError(cls)


def corrupt_type_of_binary(k):
    first_expr(k, N.Binary).ty = "bool" if first_expr(k, N.Binary).ty != "bool" else "f32"


def corrupt_undeclared_local(k):
    first(k, N.Let).name = "nowhere"


def corrupt_break_outside_loop(k):
    k.body.append(N.Break(N.NO_SPAN))


def corrupt_store_to_read_only(k):
    first(k, N.Store).resource = "data"  # gpu::BufRO<u32>


def corrupt_load_from_write_only(k):
    first_expr(k, N.Load).resource = "sc"  # gpu::Scattered<i32>


def corrupt_bad_swizzle(k):
    first_expr(k, N.Swizzle).lanes = "q"


def corrupt_const_out_of_range(k):
    c = first_expr(k, N.Const)
    c.ty, c.value = "u32", -1


def corrupt_float_const_as_int(k):
    c = first_expr(k, N.Const)
    c.ty, c.value = "f32", 1


def corrupt_unknown_builtin(k):
    k.builtins.append("lane_id")


def corrupt_undeclared_builtin(k):
    k.builtins.remove("local_id")


def corrupt_workgroup_size(k):
    k.workgroup_size = (0, 1, 1)


def corrupt_duplicate_param(k):
    k.params.append(copy.deepcopy(k.params[0]))


def corrupt_param_category(k):
    k.params[0].category = "texture"


def corrupt_invalid_type(k):
    k.params[1].ty = "u64"


def corrupt_uniform_not_struct(k):
    next(p for p in k.params if p.category == "uniform").ty = "f32"


def corrupt_undeclared_struct(k):
    k.structs.clear()


def corrupt_shape_on_buffer(k):
    k.params[1].shape = [4]


def corrupt_reduce_scratch(k):
    first(k, N.Reduce).scratch = "missing"


def corrupt_collective_size(k):
    first(k, N.Reduce).n = 100


def corrupt_atomic_on_float(k):
    first(k, N.AtomicAdd).resource = "out"


def corrupt_for_var_type(k):
    first(k, N.For).ty = "f32"


def corrupt_if_condition(k):
    first(k, N.If).cond = N.Const("u32", N.NO_SPAN, 1)


def corrupt_assign_to_param(k):
    first(k, N.Assign).target = N.Var("u32", N.NO_SPAN, "n")


def corrupt_local_collides_with_param(k):
    k.locals["n"] = "u32"


def corrupt_deferred_let_immutable(k):
    s = first(k, N.Let)
    s.value, s.mutable = None, False


def corrupt_cast_to_vector(k):
    first_expr(k, N.Cast).ty = "vec2<f32>"


def corrupt_intrinsic_arity(k):
    first_expr(k, N.Call).args.append(N.Const("f32", N.NO_SPAN, 1.0))


def corrupt_construct_lanes(k):
    first_expr(k, N.Construct).args.pop()


def corrupt_unknown_statement(k):
    k.body.append(N.Stmt(N.NO_SPAN))


def corrupt_local_declared_twice(k):
    k.body.append(copy.deepcopy(first(k, N.Let)))


def corrupt_tensor_dim_on_buffer(k):
    first_expr(k, N.TensorDim).resource = "out"


CORRUPTIONS = [f for name, f in sorted(globals().items()) if name.startswith("corrupt_")]


@pytest.mark.parametrize("corrupt", CORRUPTIONS, ids=lambda f: f.__name__.removeprefix("corrupt_"))
def test_corrupt_ir_is_rejected(kernel: N.Kernel, corrupt) -> None:
    k = copy.deepcopy(kernel)
    verify(k)  # intact: accepted
    corrupt(k)
    with pytest.raises(VerifyError) as e:
        verify(k)
    assert e.value.message.startswith("kernel `everything`: ")


def test_verify_error_carries_a_span(kernel: N.Kernel) -> None:
    k = copy.deepcopy(kernel)
    store = first(k, N.Store)
    store.resource = "data"
    with pytest.raises(VerifyError) as e:
        verify(k)
    assert e.value.span == store.span


def test_json_is_versioned(kernel: N.Kernel) -> None:
    d = kernel_to_dict(kernel)
    assert d["goldy_ir_version"] == IR_VERSION
    d["goldy_ir_version"] = IR_VERSION + 1
    with pytest.raises(ValueError, match="unsupported IR version"):
        from_json(json.dumps(d))


def test_json_keeps_float_constants_floats() -> None:
    src = """#[goldy::compute] fn k(o: &mut [f32]) {
        o[0] = 1.0 + f32::INFINITY + f32::NEG_INFINITY + -0.0 + 3.0e38;
    }"""
    k = import_source(src).kernels[0]
    again = from_json(to_json(k))
    consts = [x for s in N.walk_stmts(again.body) for e in N.stmt_exprs(s) for x in N.walk_expr(e)
              if isinstance(x, N.Const) and x.ty == "f32"]
    assert all(isinstance(c.value, float) for c in consts)
    assert [c.value for c in consts] == [1.0, float("inf"), float("-inf"), -0.0, 3.0000000054977558e38]
    assert str(consts[3].value) == "-0.0"  # the sign of zero survives
    assert again == k


def test_pretty_form_reads_like_the_source(kernel: N.Kernel) -> None:
    text = format_kernel(kernel)
    assert text.splitlines()[0] == ("kernel everything workgroup_size=[256, 1, 1] "
                                    "builtins=['global_id', 'local_id']")
    assert "    total = workgroup_sum::<256>(scratch[lid], scratch);" in text
    assert "    old = atomic_add(hist, (bits % hist.len()), 1u32);" in text
