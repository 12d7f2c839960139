"""Kernel IR assets (`.kir.json`, goldy_import/kir.py) and their drift guard
(goldy_import/assets.py, `goldy-import assets check|regen`).

rust_examples/assets.toml lists every kernel of rust_examples/ as a committed asset under
rust_examples/kir/; the check regenerates each from its source and passes byte for byte.
On a copy of the tree, an edited asset, an edited source, a missing asset and an unlisted
file each fail it, and `regen` repairs them. `gi.load_kir` runs an asset without loading
the Rust parser and gives the same bits as the kernel imported from Rust.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import goldy_import as gi
from goldy_import import assets
from goldy_import.cli import main as cli
from goldy_import.importer import import_file
from oracle import REPO, assert_same, device

MANIFEST = REPO / "rust_examples" / "assets.toml"
KIR = REPO / "rust_examples" / "kir"


def test_committed_assets_match_their_kernel_sources():
    m = assets.read_manifest(str(MANIFEST))
    problems = assets.check(m)
    assert problems == [], "\n".join(p.render() for p in problems) + \
        "\nregenerate with `goldy-import assets regen rust_examples/assets.toml`"


def test_manifest_lists_every_example_kernel():
    m = assets.read_manifest(str(MANIFEST))
    listed = {(a.source, a.kernel) for a in m.assets}
    want = {(p.relative_to(REPO).as_posix(), k.name)
            for p in sorted((REPO / "rust_examples").glob("*.rs")) for k in import_file(p).kernels}
    assert listed == want


def test_cli_check_passes_on_the_committed_assets(capsys):
    assert cli(["assets", "check", str(MANIFEST)]) == 0
    count = len(assets.read_manifest(str(MANIFEST)).assets)
    assert f"{count} assets up to date" in capsys.readouterr().out


@pytest.fixture
def tree(tmp_path):
    """A copy of rust_examples/ with its manifest and assets."""
    shutil.copytree(REPO / "rust_examples", tmp_path / "rust_examples")
    return tmp_path


def _check(tree, capsys):
    code = cli(["assets", "check", str(tree / "rust_examples" / "assets.toml")])
    return code, capsys.readouterr().err


def test_an_edited_asset_fails_the_check_and_regen_repairs_it(tree, capsys):
    path = tree / "rust_examples" / "kir" / "saxpy.kir.json"
    text = path.read_text()
    path.write_text(text.replace('"a"', '"b"', 1))
    code, err = _check(tree, capsys)
    assert code == 1
    assert "error: rust_examples/kir/saxpy.kir.json: differs from its source: line" in err
    assert "goldy-import assets regen" in err
    assert cli(["assets", "regen", str(tree / "rust_examples" / "assets.toml")]) == 0
    assert "wrote rust_examples/kir/saxpy.kir.json" in capsys.readouterr().out
    assert path.read_text() == text
    assert _check(tree, capsys)[0] == 0


def test_one_byte_of_difference_fails(tree, capsys):
    path = tree / "rust_examples" / "kir" / "histogram.kir.json"
    path.write_bytes(path.read_bytes() + b" ")
    code, err = _check(tree, capsys)
    assert code == 1 and "histogram.kir.json: differs from its source" in err


def test_an_edited_source_makes_its_assets_stale(tree, capsys):
    src = tree / "rust_examples" / "saxpy.rs"
    src.write_text(src.read_text().replace("a * x[i] + y[i]", "a * x[i] - y[i]"))
    code, err = _check(tree, capsys)
    assert code == 1
    assert "saxpy.kir.json: differs from its source" in err and err.count("differs") == 1


def test_missing_and_unlisted_files_fail(tree, capsys):
    kir = tree / "rust_examples" / "kir"
    (kir / "matmul.kir.json").unlink()
    (kir / "old_kernel.kir.json").write_text("{}")
    (kir / "notes.txt").write_text("not an asset")
    code, err = _check(tree, capsys)
    assert code == 1
    assert "rust_examples/kir/matmul.kir.json: missing" in err
    assert "rust_examples/kir/old_kernel.kir.json: not listed in" in err
    assert "rust_examples/kir/notes.txt: not listed in" in err
    # regen restores the asset and deletes the stale one, but leaves a file that is no asset
    assert cli(["assets", "regen", str(tree / "rust_examples" / "assets.toml")]) == 1
    out = capsys.readouterr()
    assert "removed rust_examples/kir/old_kernel.kir.json" in out.out and "notes.txt" in out.err
    assert (kir / "matmul.kir.json").exists() and not (kir / "old_kernel.kir.json").exists()
    (kir / "notes.txt").unlink()
    assert _check(tree, capsys)[0] == 0


def test_a_source_with_errors_or_a_missing_kernel_fails(tree, capsys):
    src = tree / "rust_examples" / "collatz.rs"
    src.write_text(src.read_text().replace("fn collatz_steps", "fn collatz_renamed"))
    code, err = _check(tree, capsys)
    assert code == 1 and "no kernel `collatz_steps` in rust_examples/collatz.rs" in err
    src.write_text("#[goldy::compute]\nfn collatz_steps(x: f64) {}\n")
    code, err = _check(tree, capsys)
    assert code == 1 and "rust_examples/collatz.rs: the source has errors" in err and "G0004" in err


@pytest.mark.parametrize("manifest,message", [
    ("root = 3\n", "`root` is a path"),
    ("[[asset]]\nsource = 'a.rs'\nkernel = 'k'\n", "exactly the string keys"),
    ("[[asset]]\nsource = 'a.rs'\nkernel = 'k'\ndest = 'k.json'\n", "dest ends in .kir.json"),
    ("[[asset]]\nsource = 'a.rs'\nkernel = 'k'\ndest = 'k.kir.json'\n" * 2, "listed twice"),
    ("this is not toml", "not a valid TOML manifest"),
    ("extra = 1\n", "`root` and `[[asset]]` tables only"),
])
def test_malformed_manifests_are_usage_errors(tmp_path, capsys, manifest, message):
    path = tmp_path / "m.toml"
    path.write_text(manifest)
    assert cli(["assets", "check", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_json_manifest(tmp_path, capsys):
    shutil.copy(REPO / "rust_examples" / "saxpy.rs", tmp_path / "saxpy.rs")
    doc = {"asset": [{"source": "saxpy.rs", "kernel": "saxpy", "dest": "kir/saxpy.kir.json"}]}
    (tmp_path / "m.json").write_text(json.dumps(doc))
    assert cli(["assets", "check", str(tmp_path / "m.json")]) == 1
    assert cli(["assets", "regen", str(tmp_path / "m.json")]) == 0
    assert cli(["assets", "check", str(tmp_path / "m.json")]) == 0
    assert json.loads((tmp_path / "kir" / "saxpy.kir.json").read_text())["kernel"]["source_file"] == "saxpy.rs"


def test_emit_kir_writes_the_committed_bytes(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(REPO)
    assert cli(["rust_examples/transpose.rs", "--emit", "kir", "-o", str(tmp_path)]) == 0
    assert sorted(os.listdir(tmp_path)) == ["laplacian.kir.json", "transpose.kir.json"]
    for f in os.listdir(tmp_path):
        assert (tmp_path / f).read_bytes() == (KIR / f).read_bytes()
    one = tmp_path / "one.kir.json"
    assert cli(["rust_examples/transpose.rs", "--emit", "kir", "--kernel", "laplacian", "-o", str(one)]) == 0
    assert one.read_bytes() == (KIR / "laplacian.kir.json").read_bytes()
    assert cli(["rust_examples/transpose.rs", "--emit", "kir", "-o", str(one)]) == 2
    assert "pick one with --kernel NAME" in capsys.readouterr().err


def test_load_kir_needs_no_rust_parser():
    code = textwrap.dedent(f"""
        import sys, numpy as np, goldy_import as gi
        mod = gi.load_kir({str(KIR)!r})
        dev = gi.Device("cpu")
        x, y = dev.buffer(np.arange(300, dtype=np.float32)), dev.buffer(np.ones(300, np.float32))
        s = gi.Scheme(dev)
        mod.saxpy.prepare(dev).record(s, "saxpy", x, y, 2.0).over_1d(300)
        s.submit()
        assert np.array_equal(y.numpy(), np.arange(300, dtype=np.float32) * 2 + 1)
        heavy = [m for m in ("tree_sitter", "tree_sitter_rust", "goldy_import.importer") if m in sys.modules]
        assert not heavy, heavy
        print(sorted(mod.kernels))
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    assert out.returncode == 0, out.stderr
    assert "collatz_steps" in out.stdout


@pytest.mark.parametrize("backend", ["cpu", "wgpu", "slang", "cuda"])
def test_asset_and_source_give_the_same_bits(backend):
    dev = device(backend)
    rng = np.random.default_rng(np.random.SeedSequence().entropy % 2**32)
    x = rng.standard_normal(5000).astype(np.float32)
    outs = []
    for mod in (gi.load_kir(KIR / "wg_reduce.kir.json"), gi.load(REPO / "rust_examples" / "poot_reduce.rs")):
        out = dev.buffer(np.full(-(-5000 // 64), np.nan, np.float32))
        s = gi.Scheme(dev)
        mod.wg_reduce.prepare(dev).record(s, "wg_reduce", dev.buffer(x), out).over_1d(5000)
        s.submit()
        outs.append(out.numpy())
    assert_same(outs[0], outs[1], what=f"{backend}: wg_reduce from its asset vs from Rust")


def test_load_kir_reports_bad_files(tmp_path):
    bad = tmp_path / "bad.kir.json"
    bad.write_text("{not json")
    with pytest.raises(gi.DiagnosticError, match="not a goldy-import kernel IR asset"):
        gi.load_kir(bad)
    doc = json.loads((KIR / "saxpy.kir.json").read_text())
    doc["goldy_ir_version"] = 99
    bad.write_text(json.dumps(doc))
    with pytest.raises(gi.DiagnosticError, match="unsupported IR version 99"):
        gi.load_kir(bad)
    doc["goldy_ir_version"] = 1
    doc["kernel"]["params"][0]["ty"] = "u64"
    bad.write_text(json.dumps(doc))
    with pytest.raises(gi.DiagnosticError, match="kernel `saxpy` is not valid IR"):
        gi.load_kir(bad)
    with pytest.raises(gi.DiagnosticError, match="cannot read"):
        gi.load_kir(tmp_path / "absent.kir.json")
    shutil.copy(KIR / "saxpy.kir.json", tmp_path / "a.kir.json")
    shutil.copy(KIR / "saxpy.kir.json", tmp_path / "b.kir.json")
    bad.unlink()
    with pytest.raises(gi.DiagnosticError, match="kernel `saxpy` is also defined in"):
        gi.load_kir(tmp_path)
