import os
import sys

# tests import their helpers (oracle.py) as top-level modules
sys.path.insert(0, os.path.dirname(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pytest_configure(config):
    # the suite's own disk cache, never the user's: one fresh folder per run
    import tempfile
    os.environ["GOLDY_CACHE_DIR"] = config._goldy_cache_dir = tempfile.mkdtemp(prefix="goldy-test-cache-")
    config.addinivalue_line("markers", "cuda: runs kernels on a CUDA GPU (skips cleanly without one)")


def pytest_unconfigure(config):
    folder = getattr(config, "_goldy_cache_dir", None)
    if folder:
        import shutil
        shutil.rmtree(folder, ignore_errors=True)
