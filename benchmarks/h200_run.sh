#!/usr/bin/env bash
# What runs on the lent H200 (the `device` tool): the WHOLE test suite with cuda and wgpu
# required (wgpu then runs on NVIDIA's Vulkan driver, not lavapipe: every wgpu test, the
# collectives, the math library and the differential fuzz see a real driver), then, with
# `--bench`, every benchmark (`--bench-only`: the benchmarks without the suite), each
# bounded by $BENCH_TIMEOUT seconds, logs under $OUT.
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
MODE=${1:-}
if [ "$MODE" != "--bench-only" ]; then
GOLDY_REQUIRE_BACKENDS=cpu,wgpu,cuda,cc python3 -m pytest -q -p no:cacheprovider -rs ${GOLDY_TESTS:-tests} \
    2>&1 | tee "$OUT/tests.log" | grep -v '^SKIPPED' | tail -40
grep -c '^SKIPPED' "$OUT/tests.log" | sed 's/^/skipped lines: /'
fi
if [ "$MODE" = "--bench" ] || [ "$MODE" = "--bench-only" ]; then
    # each benchmark bounded, so one slow peer cannot take the whole call
    b() { local log=$1; shift; echo "### $*" | tee "$OUT/$log"; timeout "${BENCH_TIMEOUT:-150}" python3 "$@" 2>&1 | tee -a "$OUT/$log"; }
    b cuda_bench.log benchmarks/cuda_backend.py ${CUDA_BENCH_ARGS:-}
    b fusion_cuda.log benchmarks/fusion.py --backend cuda
    b host_overhead.log benchmarks/host_overhead.py --backend cuda
    b specialization.log benchmarks/specialization.py --backend cuda --reps 50
    b decode_cuda.log benchmarks/decode.py --backend cuda --tokens 64
    b decode_split.log benchmarks/decode_split.py
    b cold_start.log benchmarks/cold_start.py --backends cpu,cuda,wgpu --repeat 3
    b wgpu_bench.log benchmarks/wgpu_backend.py --mib 256 --reps 10
    b fusion_wgpu.log benchmarks/fusion.py --backend wgpu --reps 10
    b decode_wgpu.log benchmarks/decode.py --backend wgpu --tokens 16
    b torch_op.log benchmarks/torch_op.py
fi
