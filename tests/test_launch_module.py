"""Generated launch modules: typed, documented, warn on stale source, pass mypy --strict."""

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import goldy_import as gi

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def generate(src: str, out: str) -> None:
    r = subprocess.run([sys.executable, "-m", "goldy_import.cli", src, "-o", out], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def import_path(path: str):
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_module_runs_saxpy(tmp_path):
    shutil.copy(os.path.join(REPO, "rust_examples", "saxpy.rs"), tmp_path / "saxpy.rs")
    generate(str(tmp_path / "saxpy.rs"), str(tmp_path / "saxpy_kernels.py"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m = import_path(str(tmp_path / "saxpy_kernels.py"))
    assert m.saxpy.__doc__.startswith("y = a * x + y, one element per thread.")
    dev = gi.Device("cpu")
    rng = np.random.default_rng()
    x, y = rng.standard_normal(1000).astype(np.float32), rng.standard_normal(1000).astype(np.float32)
    bx, by = dev.buffer(x), dev.buffer(y)
    k = m.saxpy.prepare(dev)
    scheme = gi.Scheme(dev)
    k.record(scheme, "saxpy", bx, by, 2.0).over_1d(1000)
    scheme.submit()
    np.testing.assert_array_equal(by.numpy(), np.float32(2.0) * x + y)


def test_load_gives_the_same_classes_as_the_generated_module(tmp_path):
    src = os.path.join(REPO, "rust_examples", "transpose.rs")
    generate(src, str(tmp_path / "t_kernels.py"))
    gen = import_path(str(tmp_path / "t_kernels.py"))
    loaded = gi.load(src)
    for name in ("transpose", "laplacian"):
        a, b = getattr(gen, name), getattr(loaded, name)
        assert a.IR_JSON == b.IR_JSON and a.PARAMS == b.PARAMS and a.__doc__ == b.__doc__
        assert a.definition().identity == b.definition().identity


def test_stale_source_warns(tmp_path):
    shutil.copy(os.path.join(REPO, "rust_examples", "saxpy.rs"), tmp_path / "saxpy.rs")
    generate(str(tmp_path / "saxpy.rs"), str(tmp_path / "saxpy_kernels.py"))
    with open(tmp_path / "saxpy.rs", "a") as f:
        f.write("\n// edited\n")
    with pytest.warns(UserWarning, match="has changed since"):
        import_path(str(tmp_path / "saxpy_kernels.py"))


def _package_tree(root) -> str:
    """goldy_import laid out as an ordinary package (the editable install maps folders
    with an import hook, which mypy cannot follow)."""
    pkg = root / "goldy_import"
    pkg.mkdir(parents=True)
    for f in os.listdir(os.path.join(REPO, "goldy_import")):
        if f.endswith(".py") or f == "py.typed":
            os.symlink(os.path.join(REPO, "goldy_import", f), pkg / f)
    for sub in ("importer", "ir", "codegen", "runtime"):
        os.symlink(os.path.join(REPO, sub), pkg / sub)
    return str(root)


def test_generated_module_and_user_script_pass_mypy_strict(tmp_path):
    if os.environ.get("CI"):
        import mypy  # noqa: F401  (the test extra installs it: missing in CI is a failure)
    else:
        pytest.importorskip("mypy")
    shutil.copy(os.path.join(REPO, "rust_examples", "particles.rs"), tmp_path / "particles.rs")
    shutil.copy(os.path.join(REPO, "rust_examples", "saxpy.rs"), tmp_path / "saxpy.rs")
    generate(str(tmp_path / "particles.rs"), str(tmp_path / "particles_kernels.py"))
    generate(str(tmp_path / "saxpy.rs"), str(tmp_path / "saxpy_kernels.py"))
    (tmp_path / "user.py").write_text(textwrap.dedent("""
        import numpy as np
        import goldy_import as gi
        from saxpy_kernels import saxpy

        def run(n: int) -> float:
            dev = gi.Device("cpu")
            x = dev.buffer(np.ones(n, np.float32))
            y = dev.buffer(np.zeros(n, np.float32))
            k = saxpy.prepare(dev)
            scheme = gi.Scheme(dev)
            node: gi.Node = k.record(scheme, "saxpy", x, y, 2.0).over_1d(n)
            scheme.submit()
            scheme.set_node_param(node, "a", 3.0)
            return float(y.numpy()[0])
    """))
    (tmp_path / "bad_user.py").write_text(textwrap.dedent("""
        import goldy_import as gi
        from saxpy_kernels import saxpy

        def run(dev: gi.Device, scheme: gi.Scheme, x: gi.Buffer) -> None:
            saxpy.prepare(dev).record(scheme, "saxpy", x, x, "two").over_1d(4)
    """))
    stubs = _package_tree(tmp_path / "pkgs")
    env = dict(os.environ, MYPYPATH=stubs)
    cmd = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent",
           "--cache-dir", str(tmp_path / ".mypy_cache")]
    r = subprocess.run(cmd + ["particles_kernels.py", "saxpy_kernels.py", "user.py"], capture_output=True,
                       text=True, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run(cmd + ["bad_user.py"], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert r.returncode == 1 and 'Argument 5 to "record"' in r.stdout, r.stdout + r.stderr
