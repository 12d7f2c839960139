"""Goldy kernels as torch operators (goldy_import/torch.py): eager on CPU tensors, traced by
torch.compile (aot_eager here: inductor's C++ build is too slow for 2 CI cores; inductor
runs on the H200), inside an nn.Module under torch.distributed (gloo, world size 1), and on
CUDA tensors with NCCL and CUDA graph capture on a GPU."""

import inspect
import subprocess
import sys

import numpy as np
import pytest

import goldy_import as gi
from oracle import backend_or_skip, package_or_skip

SRC = """
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn scale(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i]; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn saxpy(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i] + y[i]; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn rowsum(#[tensor(shape = [r, c])] m: gpu::Tensor<f32>, #[tensor(shape = [r])] out: gpu::TensorMut<f32>) {
    let i = gpu::global_id().x;
    if i < m.dim(0) {
        let mut s = 0.0;
        for j in 0..m.dim(1) { s += m[i * m.dim(1) + j]; }
        out[i] = s;
    }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn add(#[tensor(shape = [n])] a: gpu::Tensor<i32>, #[tensor(shape = [n])] b: gpu::Tensor<i32>,
       #[tensor(shape = [n])] out: gpu::TensorMut<i32>) {
    let i = gpu::global_id().x;
    if i < out.dim(0) { out[i] = a[i] + b[i]; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn shifted(x: &[f32], y: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = x[i + 1]; }
}
"""


@pytest.fixture(scope="module")
def torch():
    return package_or_skip("torch")


@pytest.fixture(scope="module")
def ops(torch):
    m = gi.load_source(SRC, "torch_ops.rs")
    return {
        "scale": gi.torch.custom_op(m.scale, outputs={"y": "x"}),
        "saxpy": gi.torch.custom_op(m.saxpy),  # y is written in place
        "rowsum": gi.torch.custom_op(m.rowsum, outputs=["out"]),
        "add": gi.torch.custom_op(m.add, outputs=["out"]),
        "shifted": gi.torch.custom_op(m.shifted, outputs={"y": "x"}),
    }


def _rowsum(m: np.ndarray) -> np.ndarray:  # the kernel's order of additions, in f32
    out = np.zeros(m.shape[0], np.float32)
    for j in range(m.shape[1]):
        out += m[:, j]
    return out


def test_importing_goldy_import_does_not_import_torch():
    code = "import sys, goldy_import as gi; gi.Device; gi.Scheme; assert 'torch' not in sys.modules, 'torch'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_eager_cpu_tensors(torch, ops):
    g = torch.Generator().manual_seed(np.random.SeedSequence().entropy % 2**63)
    x = torch.randn(1000, generator=g)
    assert torch.equal(ops["scale"](x, 3.0), 3.0 * x)
    y = torch.randn(1000, generator=g)
    want = 2.0 * x + y
    assert ops["saxpy"](x, y, 2.0) is None and torch.equal(y, want)  # in place, zero-copy
    m = torch.randn(37, 19, generator=g)
    np.testing.assert_array_equal(ops["rowsum"](m).numpy(), _rowsum(m.numpy()))
    a, b = (torch.randint(-2**31, 2**31 - 1, (500,), dtype=torch.int32, generator=g) for _ in range(2))
    want_add = (a.numpy().astype(np.int64) + b.numpy()).astype(np.int32)  # Rust release: wraps
    np.testing.assert_array_equal(ops["add"](a, b).numpy(), want_add)
    assert ops["scale"](torch.empty(0), 1.0).shape == (0,)  # an empty grid launches nothing
    xt = torch.randn(40, 30, generator=g).t()  # read-only inputs may be strided: made contiguous
    assert torch.equal(ops["scale"](xt, 2.0), 2.0 * xt)


def test_opcheck_schema_fake_and_aot_dispatch(torch, ops):
    """torch's own checks of a custom op: schema (mutations declared), fake implementation
    against the real one, autograd registration, AOT dispatch with dynamic shapes."""
    cases = {"scale": (torch.randn(100), 2.0), "saxpy": (torch.randn(100), torch.randn(100), 2.0),
             "rowsum": (torch.randn(10, 3),), "add": (torch.randint(-9, 9, (7,), dtype=torch.int32),) * 2}
    for name, args in cases.items():
        torch.library.opcheck(ops[name].op, args)


def test_errors_are_goldy_errors(torch, ops):
    with pytest.raises(gi.BindingError, match=r"kernel `scale` parameter `x` \(&\[f32\]\): expected a torch.float32"):
        ops["scale"](torch.zeros(8, dtype=torch.int32), 1.0)
    with pytest.raises(gi.ShapeContractError, match="parameter `b` axis 0: expected `n`=5"):
        ops["add"](torch.zeros(5, dtype=torch.int32), torch.zeros(6, dtype=torch.int32))
    with pytest.raises(gi.BindingError, match="writes this tensor in place, but it is not contiguous"):
        ops["saxpy"](torch.zeros(8), torch.zeros(16)[::2], 1.0)
    with pytest.raises(gi.BindingError, match="takes 2 inputs"):
        ops["scale"].run(torch.zeros(8))
    with pytest.raises(gi.KernelFault, match=r"kernel `shifted`.*index out of bounds.*`x` indexed at 8, but its length is 8"):
        ops["shifted"](torch.randn(8))
    with pytest.raises(gi.BindingError, match="no parameter `z`"):
        gi.torch.custom_op(gi.load_source(SRC, "torch_ops.rs").scale, outputs=["z"])
    with pytest.raises(gi.BindingError, match="does not follow from a shape contract"):
        gi.torch.custom_op(gi.load_source(SRC, "torch_ops.rs").scale, outputs=["y"], name="goldy_test::scale_y")(
            torch.zeros(4), 1.0)


class _Model:
    """A small nn.Module around the ops (built lazily: torch is optional)."""

    @staticmethod
    def make(torch, ops):
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = 1.5

            def forward(self, x, m):
                y = ops["scale"](torch.relu(x), self.a)
                return y + 1.0, ops["rowsum"](m) * 2.0

        return Net()


def test_torch_compile_traces_through_the_fake_implementation(torch, ops):
    torch._dynamo.reset()
    net = torch.compile(_Model.make(torch, ops), backend="aot_eager", fullgraph=True)  # fullgraph: no graph break
    x, m = torch.randn(300), torch.randn(20, 9)
    y, r = net(x, m)
    assert torch.equal(y, 1.5 * torch.relu(x) + 1.0)
    np.testing.assert_array_equal(r.numpy(), _rowsum(m.numpy()) * 2.0)
    y2, _ = net(torch.randn(301), torch.randn(21, 9))  # another shape: retraced or dynamic, still right
    assert y2.shape == (301,)


def _distributed(torch, ops, tmp_path, backend: str, device: str) -> None:
    import torch.distributed as dist
    dist.init_process_group(backend, init_method=f"file://{tmp_path}/pg", rank=0, world_size=1)
    try:
        torch._dynamo.reset()
        net = torch.compile(_Model.make(torch, ops), backend="aot_eager", fullgraph=True)
        x, m = torch.randn(256, device=device), torch.randn(16, 8, device=device)
        y, r = net(x, m)
        dist.all_reduce(y)  # world size 1: the sum is the one rank's value
        assert torch.equal(y, 1.5 * torch.relu(x) + 1.0)
        np.testing.assert_array_equal(r.cpu().numpy(), _rowsum(m.cpu().numpy()) * 2.0)
    finally:
        dist.destroy_process_group()


def test_distributed_world_size_one_gloo(torch, ops, tmp_path):
    _distributed(torch, ops, tmp_path, "gloo", "cpu")


@pytest.fixture
def cuda(torch):
    backend_or_skip("cuda")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    return torch.device("cuda")


def test_cuda_tensors_eager(torch, ops, cuda):
    x = torch.randn(100_000, device=cuda)
    assert torch.equal(ops["scale"](x, 3.0), 3.0 * x)
    y = torch.randn(100_000, device=cuda)
    want = 2.0 * x + y
    ops["saxpy"](x, y, 2.0)
    assert torch.equal(y, want)
    m = torch.randn(300, 17, device=cuda)
    np.testing.assert_array_equal(ops["rowsum"](m).cpu().numpy(), _rowsum(m.cpu().numpy()))
    with pytest.raises(gi.BindingError, match="parameter `y`: tensor on cuda:0, the others on cpu"):
        ops["saxpy"](torch.zeros(8), torch.zeros(8, device=cuda), 1.0)
    with pytest.raises(gi.KernelFault, match="kernel `shifted`"):
        ops["shifted"](torch.randn(8, device=cuda))


def test_cuda_inductor(torch, ops, cuda):
    pytest.importorskip("triton")  # inductor's CUDA code generator
    torch._dynamo.reset()
    net = torch.compile(_Model.make(torch, ops), fullgraph=True)
    x, m = torch.randn(4096, device=cuda), torch.randn(64, 8, device=cuda)
    y, r = net(x, m)
    assert torch.equal(y, 1.5 * torch.relu(x) + 1.0)
    np.testing.assert_array_equal(r.cpu().numpy(), _rowsum(m.cpu().numpy()) * 2.0)


def test_cuda_distributed_world_size_one_nccl(torch, ops, cuda, tmp_path):
    _distributed(torch, ops, tmp_path, "nccl", "cuda")


def test_cuda_graph_capture(torch, ops, cuda):
    x = torch.randn(4096, device=cuda)
    static_out = ops["scale"](x, 2.0)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = ops["scale"](x, 2.0)
    x.copy_(torch.randn(4096, device=cuda))
    g.replay()
    torch.cuda.synchronize()
    assert torch.equal(static_out, 2.0 * x)


def test_docs_api_md_documents_the_torch_api(torch):
    from test_api_docs import API, render
    spans = [render(gi.torch.custom_op, "gi.torch.custom_op"), render(gi.torch.device_for, "gi.torch.device_for")]
    spans += [render(v, f"GoldyOp.{a}") for a, v in vars(gi.torch.GoldyOp).items()
              if inspect.isfunction(v) and not a.startswith("_")]
    missing = [s for s in spans if f"`{s}`" not in API]
    assert not missing, "docs/api.md lacks:\n" + "\n".join(missing)
