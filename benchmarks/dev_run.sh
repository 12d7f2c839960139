set -o pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1
python3 -m pip install -q --no-deps --no-index --no-build-isolation . >/dev/null || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 GOLDY_CACHE=0
for i in 1 2; do
echo "## prologue on"; python3 benchmarks/host_overhead.py --backend cuda 2>&1 | grep -E "launch|fresh|replay" 
echo "## prologue off"; python3 -c "import goldy_import.codegen.ptx.pdl as p; p.supported=lambda *a: False; import runpy, sys; sys.argv=['host_overhead.py','--backend','cuda']; runpy.run_path('benchmarks/host_overhead.py', run_name='__main__')" 2>&1 | grep -E "launch|fresh|replay"
done
unset GOLDY_CACHE
timeout 200 python3 -X faulthandler benchmarks/cuda_backend.py --only matmul,gemv 2>&1 | tail -25
