set -o pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
python3 -m pip install -q --no-deps --no-index --no-build-isolation . >/dev/null || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
[ -e /usr/share/vulkan/icd.d/nvidia_icd.json ] || export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p $OUT
GOLDY_REQUIRE_BACKENDS=cpu,wgpu,cuda timeout 300 python3 -m pytest -q -p no:cacheprovider -n 8 tests > $OUT/tests.log 2>&1
tail -3 $OUT/tests.log; grep -E "^(FAILED|ERROR)" $OUT/tests.log | head -20
b() { echo "### $*"; timeout ${T:-120} python3 "$@" 2>&1 | grep -v Warning | tail -${N:-16}; }
b benchmarks/fusion.py --backend cuda > $OUT/fusion.log; cat $OUT/fusion.log
N=30 b benchmarks/cuda_backend.py --only stream,softmax,matmul,gemv > $OUT/cuda_backend.log; cat $OUT/cuda_backend.log
N=14 b benchmarks/decode.py --backend cuda --tokens 64 > $OUT/decode.log; cat $OUT/decode.log
b benchmarks/gemv_ceiling.py > $OUT/gemv_ceiling.log; cat $OUT/gemv_ceiling.log
N=24 b benchmarks/decode_profile.py --tokens 8 --fusion --specialize > $OUT/decode_profile.log; tail -12 $OUT/decode_profile.log
