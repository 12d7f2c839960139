set -o pipefail
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 1

export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
python3 benchmarks/dev_probe2.py 2>&1

