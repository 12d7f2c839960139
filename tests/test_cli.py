"""The `goldy-import` command: exit statuses, diagnostics, emitted IR, launch modules."""

import json
import os
import subprocess
import sys

from goldy_import.ir import from_json

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAXPY = os.path.join(REPO, "rust_examples", "saxpy.rs")
BAD = os.path.join(REPO, "tests", "data", "bad_mix.rs")


def cli(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "goldy_import.cli", *args], capture_output=True, text=True, cwd=cwd)


def test_check_good_file_exits_0():
    r = cli(SAXPY, "--check")
    assert r.returncode == 0, r.stderr
    assert "1 kernel ok (saxpy)" in r.stdout


def test_check_bad_file_exits_1_with_rustc_style_errors():
    r = cli(BAD, "--check")
    assert r.returncode == 1
    assert "error[G0005]: `usize` is not supported" in r.stderr
    assert f"--> {BAD}:4:45" in r.stderr
    assert "could not import" in r.stderr


def test_json_diagnostics_one_object_per_line():
    r = cli(BAD, "--check", "--message-format", "json")
    assert r.returncode == 1
    objs = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    assert objs and all({"code", "severity", "message", "spans"} <= set(o) for o in objs)
    first = objs[0]["spans"][0]
    assert (first["line_start"], first["column_start"]) == (4, 45)
    assert first["byte_end"] - first["byte_start"] == len("usize")


def test_missing_file_and_bad_usage_exit_2():
    assert cli("/no/such/file.rs").returncode == 2
    assert cli(SAXPY, "--emit", "nonsense").returncode == 2
    assert cli(SAXPY, "--emit", "ir", "--kernel", "nope").returncode == 2


def test_emit_ir_round_trips():
    r = cli(SAXPY, "--emit", "ir")
    assert r.returncode == 0, r.stderr
    k = from_json(r.stdout)
    assert k.name == "saxpy" and [p.name for p in k.params] == ["x", "y", "a"]


def test_output_module_is_importable(tmp_path):
    out = tmp_path / "saxpy_kernels.py"
    r = cli(SAXPY, "-o", str(out))
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-c", "import saxpy_kernels as m; print(m.saxpy.PARAMS)"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "('x', 'y', 'a')"


def test_console_script_installed():
    exe = os.path.join(os.path.dirname(sys.executable), "goldy-import")
    r = subprocess.run([exe, SAXPY, "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
