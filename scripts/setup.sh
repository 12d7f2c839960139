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
