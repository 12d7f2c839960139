set -o pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null
python3 -m pip install -q --no-deps --no-index --no-build-isolation . >/dev/null || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
for i in 1 2 3; do timeout 100 python3 benchmarks/fusion.py --backend cuda 2>&1 | grep -E "^\| (automatic|torch.compile|unfused|FusedKernel)"; done
timeout 150 python3 -X faulthandler benchmarks/cuda_backend.py --only stream,softmax 2>&1 | tail -14
timeout 100 python3 benchmarks/decode.py --backend cuda --tokens 64 2>&1 | tail -8
