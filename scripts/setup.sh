#!/usr/bin/env bash
# Sets up everything `make demo` and `make test` need on a fresh machine: the .venv with
# the package and its test extras, and (as root on Debian) lavapipe, Mesa's software
# Vulkan driver, when no Vulkan driver is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

if [ ! -x "$VENV/bin/python" ]; then
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null 2>&1 || true
"$VENV/bin/python" -m pip install -q -e ".[test]"

# PyTorch for tests/test_torch_ops.py, only where pip has torch==2.13.0 without a download
# (a local wheelhouse, e.g. its CPU build): never PyPI's multi-GB CUDA build. GOLDY_TORCH=0
# skips it (the torch tests then skip; without torch they fail when CI is set).
if [ "${GOLDY_TORCH:-1}" != 0 ] && ! "$VENV/bin/python" -c "import torch" >/dev/null 2>&1; then
    if timeout 300 "$VENV/bin/python" -m pip install -q --no-index --no-deps "torch==2.13.0" >/dev/null 2>&1; then
        timeout 300 "$VENV/bin/python" -m pip install -q "torch==2.13.0" \
            || echo "setup: torch's dependencies did not install; the torch tests may fail" >&2
    else
        echo "setup: torch==2.13.0 is not available without a download: not installed (GOLDY_TORCH=0 silences this)" >&2
    fi
fi

# A C compiler for the cpu backend's C form (codegen/cpu/native.py; without one it stays numpy).
if ! command -v "${CC:-cc}" >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: no C compiler found; installing gcc (the cpu backend's compiled form)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null
        apt-get install -y -qq --no-install-recommends gcc libc6-dev >/dev/null
    else
        echo "setup: no C compiler (cc) and not root on Debian: the cpu backend runs numpy only" >&2
    fi
fi

# A Vulkan driver for wgpu: lavapipe when nothing else is there.
if ! ls /usr/share/vulkan/icd.d/*.json >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "setup: no Vulkan driver found; installing mesa-vulkan-drivers (lavapipe)"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null
        apt-get install -y -qq --no-install-recommends mesa-vulkan-drivers libvulkan1 >/dev/null
    else
        echo "setup: no Vulkan driver found and not root on Debian: the wgpu backend may be unavailable" >&2
    fi
fi
