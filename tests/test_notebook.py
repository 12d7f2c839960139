"""The `%%goldy` cell magic (goldy_import/notebook.py) and docs/quickstart.ipynb, executed
cell by cell in an IPython shell; each cell's printed output must be the one stored in the
notebook. Cells tagged `torch` run where torch is installed (tests/test_torch_ops.py
decides whether its absence is a failure)."""

import importlib.util
import json

import pytest

from oracle import REPO, package_or_skip

NOTEBOOK = REPO / "docs" / "quickstart.ipynb"


@pytest.fixture(scope="module")
def shell():
    package_or_skip("IPython")
    from IPython.core.interactiveshell import InteractiveShell
    sh = InteractiveShell.instance()
    yield sh
    sh.reset()


def _run(shell, source: str):
    from IPython.utils.capture import capture_output
    with capture_output() as out:
        result = shell.run_cell(source, store_history=True)
    return result, out.stdout, out.stderr


def test_quickstart_notebook_runs_and_prints_what_it_shows(shell):
    cells = [c for c in json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"] if c["cell_type"] == "code"]
    assert len(cells) >= 4
    have_torch = importlib.util.find_spec("torch") is not None
    for cell in cells:
        if "torch" in cell["metadata"].get("tags", []) and not have_torch:
            continue
        source = "".join(cell["source"])
        result, stdout, stderr = _run(shell, source)
        assert result.success, f"cell failed:\n{source}\n{stderr}"
        want = "".join("".join(o["text"]) for o in cell["outputs"] if o.get("name") == "stdout")
        assert stdout == want, f"cell printed {stdout!r}, the notebook shows {want!r}:\n{source}"


def test_magic_binds_kernels_and_renders_diagnostics(shell):
    assert _run(shell, "%load_ext goldy_import")[0].success
    assert _run(shell, "%load_ext goldy_import.notebook")[0].success  # the module itself works too
    ok, _, err = _run(shell, "%%goldy mod\n#[goldy::gpu]\nstruct P { a: f32 }\n"
                             "#[goldy::compute(workgroup_size = [64, 1, 1])]\n"
                             "fn first(p: &[P], out: &mut [f32]) { let i = gpu::global_id().x; "
                             "if i < out.len() { out[i] = p[i].a; } }\n")
    assert ok.success and err == ""
    assert repr(shell.user_ns["first"]).endswith(".first'>") and "first" in shell.user_ns["mod"].kernels
    assert shell.user_ns["P"].name == "P"
    bad, out, err = _run(shell, "%%goldy\nfn broken(x: &[f32]) { let q = ; }\n")
    assert not bad.success and out == ""
    assert "error[G0001]: syntax error" in err and "let q = ;" in err and "^" in err
    assert "Traceback" not in err
    bad, _, err = _run(shell, "%%goldy not-a-name\nfn f() {}\n")
    assert not bad.success and "optional module name" in err
