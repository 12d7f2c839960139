import os
import sys

# tests import their helpers (oracle.py) as top-level modules
sys.path.insert(0, os.path.dirname(__file__))
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pytest_configure(config):
    config.addinivalue_line("markers", "cuda: runs kernels on a CUDA GPU (skips cleanly without one)")
