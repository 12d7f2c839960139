#!/usr/bin/env bash
# What runs on the lent H200 (the `device` tool): every CUDA-capable test file, the examples
# and tensors on cuda and on wgpu through NVIDIA's Vulkan driver, and the wgpu benchmark.
# Carry `.whl` (Python 3.12 wheels: tree-sitter, tree-sitter-rust, wgpu, cffi, pytest, ...)
# and `.gl` (Debian's Vulkan/GL loader packages); see /work/.library/device/README.md.
set -o pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
mkdir -p /tmp/pkg/goldy_import
cp -r goldy_import/* /tmp/pkg/goldy_import/ && cp -r importer ir codegen runtime /tmp/pkg/goldy_import/
export PYTHONPATH=/tmp/site:/tmp/pkg PYTHONUNBUFFERED=1
[ -e /usr/share/vulkan/icd.d/nvidia_icd.json ] || export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -P -c "import goldy_import as gi; print(gi.Device('cuda').describe()); print(gi.Device('wgpu').describe())"
python3 -P -m pytest -q -p no:cacheprovider -rs tests/test_cuda_backend.py tests/test_cuda_interop.py \
    tests/test_regressions.py tests/test_examples.py tests/test_tensors.py tests/test_collectives.py \
    tests/test_differential_fuzz.py tests/test_hostile_host.py tests/test_cuda_traps.py tests/test_ptx_traps.py \
    -k "cuda or interop or wgpu or traps" 2>&1 | tee "$OUT/tests.log"
python3 -P benchmarks/cuda_backend.py --checks-cost 2>&1 | tee "$OUT/checks_cost.log"
python3 -P benchmarks/wgpu_backend.py --mib 256 --reps 10 2>&1 | tee "$OUT/wgpu_bench.log"
