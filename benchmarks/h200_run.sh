#!/usr/bin/env bash
# What runs on the lent H200 (the `device` tool): the WHOLE test suite with cuda and wgpu
# required (wgpu then runs on NVIDIA's Vulkan driver, not lavapipe: every wgpu test, the
# collectives, the math library and the differential fuzz see a real driver), then, with
# `--bench`, the CUDA checks-cost table and the wgpu benchmark.
# Carry `.whl` (Python 3.12 wheels: tree-sitter, tree-sitter-rust, wgpu, rendercanvas, cffi,
# pycparser) and `.gl` (Debian's Vulkan/GL loader packages); see /work/.library/device/README.md.
# slangpy is not carried (its wheel is over the carry limit): the slang tests skip there.
set -o pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
# a real (non-editable) install, console script included, as a user's would be
python3 -m pip install -q --no-deps --no-index --no-build-isolation . >/dev/null || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
[ -e /usr/share/vulkan/icd.d/nvidia_icd.json ] || export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -c "import goldy_import as gi; print(gi.Device('cuda').describe()); print(gi.Device('wgpu').describe())" | tee -a "$OUT/gpu.txt"
GOLDY_REQUIRE_BACKENDS=cpu,wgpu,cuda python3 -m pytest -q -p no:cacheprovider -rs ${GOLDY_TESTS:-tests} \
    2>&1 | tee "$OUT/tests.log" | grep -v '^SKIPPED' | tail -40
grep -c '^SKIPPED' "$OUT/tests.log" | sed 's/^/skipped lines: /'
if [ "${1:-}" = "--bench" ]; then
    python3 benchmarks/cuda_backend.py --checks-cost 2>&1 | tee "$OUT/checks_cost.log"
    python3 benchmarks/wgpu_backend.py --mib 256 --reps 10 2>&1 | tee "$OUT/wgpu_bench.log"
    python3 benchmarks/fusion.py 2>&1 | tee "$OUT/fusion.log"
    python3 benchmarks/host_overhead.py --backend cuda 2>&1 | tee "$OUT/host_overhead.log"
fi
