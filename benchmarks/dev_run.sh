set -o pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
python3 -m pip install -q --no-deps --no-index --no-build-isolation . >/dev/null || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
GOLDY_REQUIRE_BACKENDS=cpu,cuda python3 -m pytest -q -p no:cacheprovider -n 8 tests/test_pdl.py tests/test_host_path.py tests/test_eager_async.py tests/test_fusion.py tests/test_ptx_traps.py 2>&1 | tail -3
python3 benchmarks/host_overhead.py --backend cuda 2>&1 | tail -12
GOLDY_CUDA_PDL=0 python3 benchmarks/host_overhead.py --backend cuda 2>&1 | grep -i replay
python3 benchmarks/fusion.py --backend cuda 2>&1 | tail -14
