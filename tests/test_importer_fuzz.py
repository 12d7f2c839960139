"""Robustness: whatever bytes come in, the importer returns diagnostics (never raises)
and finishes (never hangs). Every kernel it does return verifies and round-trips.

Inputs: deterministic mutations of the example files (deleted, duplicated and swapped
tokens, swapped and deleted lines, random bytes, truncation), hypothesis-generated token
soup and raw bytes, and hand-made extremes (empty, non-UTF-8, 10,000-deep nesting, a
5 MB file). Each case runs under a generous wall-clock bound (SIGALRM), so a hang fails
the test instead of stalling CI.
"""

from __future__ import annotations

import contextlib
import random
import re
import signal
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goldy_import.importer import CODES, import_source, render_human, render_json
from goldy_import.ir import from_json, to_json, verify

DATA = Path(__file__).resolve().parent / "data"
SEEDS = [DATA / "kitchen_sink.rs", DATA / "bad_mix.rs", DATA / "importer" / "whole_file.rs",
         DATA / "importer" / "accept" / "collectives.rs", DATA / "importer" / "accept" / "value_if_blocks.rs"]
CASE_SECONDS = 20  # per case; real cases take milliseconds


class Hang(Exception):
    pass


@contextlib.contextmanager
def deadline(seconds: float):
    def expire(signum, frame):
        raise Hang(f"import took longer than {seconds} s")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def check(source: bytes | str, seconds: float = CASE_SECONDS):
    """Import under a deadline and check everything a caller relies on."""
    with deadline(seconds):
        result = import_source(source, "fuzz.rs")
        for d in result.diagnostics:
            assert d.code in CODES, d.code
            assert "internal error" not in d.message, render_human(d, result.source)
            assert d.labels and all(lb.span.start <= lb.span.end for lb in d.labels)
            render_human(d, result.source)
        render_json(result.diagnostics)
        for k in result.kernels:
            verify(k)
            assert from_json(to_json(k)) == k
    return result


TOKEN = re.compile(rb"\w+|\s+|.", re.S)


def mutate(data: bytes, rng: random.Random) -> bytes:
    if len(data) < 2:  # earlier mutations ate it: grow it again
        return data + bytes(rng.randrange(256) for _ in range(3))
    tokens = TOKEN.findall(data)
    lines = data.split(b"\n")
    kind = rng.randrange(9)
    if kind == 0:  # delete a token
        del tokens[rng.randrange(len(tokens))]
    elif kind == 1:  # duplicate a token
        i = rng.randrange(len(tokens))
        tokens.insert(i, tokens[i])
    elif kind == 2:  # swap two tokens
        i, j = rng.randrange(len(tokens)), rng.randrange(len(tokens))
        tokens[i], tokens[j] = tokens[j], tokens[i]
    elif kind == 3:  # swap two lines
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        return b"\n".join(lines)
    elif kind == 4:  # delete a line
        del lines[rng.randrange(len(lines))]
        return b"\n".join(lines)
    elif kind == 5:  # random bytes somewhere
        i = rng.randrange(len(data) + 1)
        return data[:i] + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8))) + data[i:]
    elif kind == 6:  # truncate
        return data[: rng.randrange(len(data))]
    elif kind == 7:  # insert a dialect word where it does not belong
        words = [b"let", b"mut", b"if", b"else", b"loop", b"for", b"in", b"..", b"..=", b"return", b"break",
                 b"gpu::workgroup_barrier()", b"gpu::workgroup_sum::<64>", b"as", b"u32", b"f32", b"[", b"]",
                 b"{", b"}", b"(", b")", b";", b"=", b"+=", b"<<", b"-", b"!", b"&", b"&mut", b"0", b"1.5",
                 b"x", b"gpu::global_id()", b".x", b"#[goldy::compute]", b"fn", b"match", b"|x|", b"'a"]
        tokens.insert(rng.randrange(len(tokens) + 1), rng.choice(words))
    else:  # several of the above at once
        for _ in range(rng.randrange(2, 6)):
            data = mutate(data, rng)
        return data
    return b"".join(tokens)


@pytest.mark.parametrize("seed_file", SEEDS, ids=lambda p: p.stem)
def test_mutated_examples_never_raise_or_hang(seed_file: Path) -> None:
    data = seed_file.read_bytes()
    rng = random.Random(seed_file.name)  # deterministic per file
    for case in range(60):
        mutated = mutate(data, rng)
        try:
            check(mutated)
        except BaseException as e:  # name the reproducer in the failure
            raise AssertionError(f"case {case} of {seed_file.name}: {e!r}\n{mutated[:2000]!r}") from e


WORDS = ["#[goldy::compute]", "#[goldy::gpu]", "fn", "k", "(", ")", "{", "}", "[", "]", ";", ",", ":",
         "&", "&mut", "[f32]", "u32", "i32", "f32", "bool", "usize", "let", "mut", "x", "y", "=", "+",
         "*", "-", "/", "%", "<<", ">>", "==", "<", "&&", "||", "!", "if", "else", "while", "loop", "for",
         "in", "..", "..=", "break", "continue", "return", "as", "1", "0u32", "2.5", "1e3", "true",
         "gpu::global_id()", ".x", ".len()", ".max(1.0)", "gpu::workgroup_array::<f32, 64>()",
         "gpu::workgroup_sum::<64>", "gpu::atomic_add", "gpu::Tensor<f32>", "#[tensor(shape = [n, _])]",
         "struct", "S", "match", "|", "'", '"', "unsafe", "async", "impl", "<T>", "mod", "\n", " "]


@settings(max_examples=120, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(st.sampled_from(WORDS), max_size=80))
def test_token_soup_never_raises(words: list[str]) -> None:
    check("#[goldy::compute]\nfn k(o: &mut [f32], n: u32) {\n" + " ".join(words) + "\n}\n" + " ".join(words))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.binary(max_size=400))
def test_random_bytes_never_raise(data: bytes) -> None:
    check(data)
    check(b"#[goldy::compute]\nfn k(o: &mut [f32]) {\n" + data + b"\n}\n")


def nest(open_: str, close: str, inner: str, n: int = 10_000) -> str:
    return open_ * n + inner + close * n


KERNEL = "#[goldy::compute]\nfn k(o: &mut [f32], c: bool) {{\n{}\n}}\n"
EXTREMES = {
    "empty": "",
    "whitespace": " \n\t\r\n" * 100,
    "bom_crlf": "\ufeff" + KERNEL.format("o[0] = 1.0;").replace("\n", "\r\n"),
    "nul_bytes": KERNEL.format("o[0] = 1.0;\0\0"),
    "parens": KERNEL.format("o[0] = " + nest("(", ")", "1.0") + ";"),
    "unclosed_parens": KERNEL.format("o[0] = " + "(" * 10_000 + "1.0;"),
    "blocks": KERNEL.format(nest("{", "}", "o[0] = 1.0;")),
    "ifs": KERNEL.format(nest("if c { ", " }", "o[0] = 1.0;")),
    "if_values": KERNEL.format("o[0] = " + nest("if c { ", " } else { 0.0 }", "1.0") + ";"),
    "negations": KERNEL.format("o[0] = " + "-" * 10_000 + "1.0;"),
    "nots": KERNEL.format("let b = " + "!" * 10_000 + "c;"),
    "long_sum": KERNEL.format("o[0] = " + " + ".join(["1.0"] * 10_000) + ";"),
    "index_chain": KERNEL.format("o[0] = " + "o[" * 3_000 + "0" + "]" * 3_000 + ";"),
    "method_chain": KERNEL.format("o[0] = 1.0" + ".max(1.0)" * 5_000 + ";"),
    "field_chain": KERNEL.format("let v = gpu::float4(1.0);\no[0] = v" + ".x" * 5_000 + ";"),
    "casts": KERNEL.format("o[0] = 1" + " as u32" * 5_000 + " as f32;"),
    "loops": KERNEL.format(nest("loop { ", " }", "break;")),
    "mods": nest("mod m { ", " }", KERNEL.format("o[0] = 1.0;")),
    "ref_types": "#[goldy::compute]\nfn k(o: " + "&" * 10_000 + "[f32]) {}\n",
    "array_types": "#[goldy::compute]\nfn k(o: &[" + "[" * 10_000 + "f32" + "; 2]" * 10_000 + "]) {}\n",
    "generic_types": "#[goldy::compute]\nfn k(o: " + "Vec<" * 10_000 + "f32" + ">" * 10_000 + ") {}\n",
    "shadowing": KERNEL.format("let x = 1.0;\n" * 5_000 + "o[0] = x;"),
    "many_errors": KERNEL.format("o[0] = missing;\n" * 5_000),
    "many_syntax_errors": KERNEL.format("let = ;\n" * 5_000),
    "many_literal_hints": KERNEL.format("".join(f"let a{i} = {'0' if i == 0 else f'a{i - 1}'};\n" for i in range(300))
                                        + "o[a299] = 1.0;"),
    "non_utf8_identifier": b"#[goldy::compute]\nfn k(o: &mut [f32]) { let \xff\xfe = 1.0; o[0] = 2.0; }\n",
    "latin1_comment": b"// caf\xe9\n#[goldy::compute]\nfn k(o: &mut [f32]) { o[0] = 1.0; } // \xe9\n",
    "unicode": KERNEL.format("let \u00e9t\u00e9 = 1.0; // \u65e5\u672c\u8a9e \U0001f600\no[0] = \u00e9t\u00e9;"),
    "unicode_error": KERNEL.format("let \u00e9 = 1.0; o[0] = \u00e9 + 1u32; // \u65e5\u672c"),
    "tabs": KERNEL.format("\t\tlet x = 1u32;\t o[0] = x;"),
    "lone_attribute": "#[goldy::compute]",
    "attribute_at_eof": "fn a() {}\n#[goldy::compute(workgroup_size = [",
    "raw_string": 'fn host() { let s = r#"fn k() { ( "#; }\n' + KERNEL.format("o[0] = 1.0;"),
}


@pytest.mark.parametrize("name", sorted(EXTREMES))
def test_extreme_inputs_never_raise_or_hang(name: str) -> None:
    check(EXTREMES[name])


def test_unicode_columns_count_characters() -> None:
    result = check(EXTREMES["unicode_error"])
    (d,) = result.diagnostics
    assert d.code == "G0019"
    line = result.source.line_text(d.span.line)
    assert line[d.span.col - 1: d.span.end_col - 1] == "1u32"


def test_deep_nesting_is_reported_not_crashed() -> None:
    for name in ("parens", "blocks", "ifs", "negations", "long_sum", "method_chain", "field_chain"):
        assert [d.code for d in check(EXTREMES[name]).diagnostics] == ["G0040"], name


def test_error_flood_is_capped_per_kernel() -> None:
    diags = check(EXTREMES["many_errors"]).diagnostics
    assert len(diags) == 100 and "stopped after 100 errors" in diags[-1].notes[0]


def test_five_megabyte_file() -> None:
    """Kernels around 5 MB of host code, comments and strings: imported in bounded time."""
    kitchen = (DATA / "kitchen_sink.rs").read_text()
    host = "fn host_{0}(a: u64) -> u64 {{ let b = a * 2 + 1; /* {1} */ b }}\n"
    filler = "".join(host.format(i, "x" * 400) for i in range(11_000))
    source = kitchen + filler + "// " + "y" * 100 + "\n" + KERNEL.format("o[0] = 2.0;")
    assert len(source) > 5_000_000
    start = time.perf_counter()
    result = check(source, seconds=60)
    assert [k.name for k in result.kernels] == ["everything", "softmax", "k"]
    assert result.diagnostics == []
    assert time.perf_counter() - start < 60


# ---------------------------------------------------------------- typed random programs
# Mostly well-typed kernels, so the checks above run on IR the lowering produced from
# varied input (verifier agreement, JSON round trip), not only on rejections.

SCALARS = ("u32", "i32", "f32", "bool")


class ProgramGen:
    def __init__(self, rng: random.Random):
        self.rng = rng
        self.env = {"u32": ["i", "n", "u", "us[i]", "xs.len()", "t.dim(0)", "gpu::global_id().y", "w.x"],
                    "i32": ["a", "k", "acc"], "f32": ["f", "xs[i]", "ys[0]", "p.scale", "v.x", "sh[i]", "t[i]"],
                    "bool": ["b", "flags[i]"], "vec3": ["v", "p.m * v"]}
        self.count = 0

    def lit(self, ty: str) -> str:
        return self.rng.choice({
            "u32": ["0", "1", "7u32", "0xFF", "u32::MAX", "4294967295"],
            "i32": ["0", "-1", "3i32", "-2147483648", "i32::MIN", "0x7fff_ffff"],
            "f32": ["0.0", "1.5", "-2.5e3", "1e-3", "2f32", "f32::EPSILON", "std::f32::consts::PI", "-0.0"],
            "bool": ["true", "false"], "vec3": ["gpu::float3(1.0, 2.0, 3.0)"]}[ty])

    def expr(self, ty: str, d: int) -> str:
        r, e = self.rng, self.expr
        if d <= 0 or r.random() < 0.25:
            return r.choice(self.env[ty] + [self.lit(ty)])
        if ty == "vec3":
            return r.choice([f"({e(ty, d-1)} + {e(ty, d-1)})", f"({e(ty, d-1)} * {e('f32', d-1)})",
                             f"gpu::float3({e('f32', d-1)}, {e('f32', d-1)}, {e('f32', d-1)})",
                             f"-{e(ty, d-1)}", f"{e(ty, d-1)}.zyx", f"min({e(ty, d-1)}, {e(ty, d-1)})"])
        if ty == "bool":
            t = r.choice(["u32", "i32", "f32"])
            return r.choice([f"({e(t, d-1)} {r.choice(['<', '<=', '==', '!=', '>', '>='])} {e(t, d-1)})",
                             f"({e(ty, d-1)} {r.choice(['&&', '||', '==', '!=', '&', '|', '^'])} {e(ty, d-1)})",
                             f"!{e(ty, d-1)}", f"if {e(ty, d-1)} {{ {e(ty, d-1)} }} else {{ {e(ty, d-1)} }}"])
        ops = ["+", "-", "*", "/", "%"] + (["&", "|", "^"] if ty != "f32" else [])
        src = r.choice(["u32", "i32", "f32"] + (["bool"] if ty != "f32" else []))
        opts = [f"({e(ty, d-1)} {r.choice(ops)} {e(ty, d-1)})", f"({e(src, d-1)} as {ty})",
                f"if {e('bool', d-1)} {{ {e(ty, d-1)} }} else {{ {e(ty, d-1)} }}",
                f"{{ let q = {e(ty, d-1)}; q }}", f"{e(ty, d-1)}.{r.choice(['max', 'min'])}({e(ty, d-1)})",
                f"clamp({e(ty, d-1)}, {e(ty, d-1)}, {e(ty, d-1)})"]
        if ty != "f32":
            opts += [f"({e(ty, d-1)} {r.choice(['<<', '>>'])} {e(r.choice(['u32', 'i32']), d-1)})", f"!{e(ty, d-1)}"]
        if ty == "i32":
            opts += [f"-{e(ty, d-1)}", f"{e(ty, d-1)}.abs()"]
        if ty == "u32":
            opts += [f"{e('f32', d-1)}.to_bits()", f"gpu::uint3({e(ty, d-1)}, 1, 2).{r.choice('xyz')}"]
        if ty == "f32":
            opts += [f"-{e(ty, d-1)}", f"{e(ty, d-1)}.{r.choice(['sqrt()', 'abs()', 'floor()', 'exp()'])}",
                     f"f32::from_bits({e('u32', d-1)})", f"{e(ty, d-1)}.mul_add({e(ty, d-1)}, {e(ty, d-1)})",
                     f"dot({e('vec3', d-1)}, {e('vec3', d-1)})", f"length({e('vec3', d-1)})"]
        return r.choice(opts)

    def stmt(self, d: int) -> str:
        r, e = self.rng, self.expr
        c, ty = r.randrange(12), r.choice(SCALARS)
        if c < 3:
            self.count += 1
            value = e(ty, 3)
            self.env[ty].append(f"l{self.count}")
            return f"let mut l{self.count}: {ty} = {value};"
        if c < 5:
            if ty == "bool":
                return f"b2 = {e(ty, 3)};"
            target = r.choice({"u32": ["u", "us[i]"], "i32": ["k", "acc"], "f32": ["f", "ys[i]", "sh[i]", "v.y"]}[ty])
            op = r.choice(["=", "+=", "-=", "*="] + (["<<=", "|=", "^=", "%="] if ty != "f32" else ["/="]))
            return f"{target} {op} {e(ty, 3)};"
        if c == 5 and d:
            return f"if {e('bool', 2)} {{ {self.block(d-1)} }} else {{ {self.block(d-1)} }}"
        if c == 6 and d:
            t = r.choice(["u32", "i32"])
            return f"for j{d} in {e(t, 1)}..{r.choice(['', '='])}{e(t, 1)} {{ {self.block(d-1)} }}"
        if c == 7 and d:
            return f"while {e('bool', 2)} {{ {self.block(d-1)} break; }}"
        if c == 8 and d:
            return f"loop {{ {self.block(d-1)} if {e('bool', 1)} {{ break; }} }}"
        if c == 9:
            return f"let r{self.count} = gpu::workgroup_sum::<64>({e('f32', 2)}, sh);"
        if c == 10:
            return f"let o{self.count} = gpu::atomic_add(us, {e('u32', 2)}, {e('u32', 2)});"
        return r.choice(["gpu::workgroup_barrier();", "return;"])

    def block(self, d: int) -> str:
        saved = {k: list(v) for k, v in self.env.items()}
        out = " ".join(self.stmt(d) for _ in range(self.rng.randrange(1, 4)))
        self.env = saved
        return out

    def kernel(self) -> str:
        body = "\n".join(self.stmt(2) for _ in range(self.rng.randrange(2, 6)))
        return ("#[goldy::gpu] struct P { scale: f32, m: [[f32; 3]; 3] }\n"
                "#[goldy::compute(workgroup_size = [64, 1, 1])]\n"
                "fn k(xs: &[f32], ys: &mut [f32], us: &mut [u32], flags: &[bool], p: gpu::Uniform<P>,\n"
                "     t: gpu::Tensor<f32>, n: u32, a: i32, b: bool) {\n"
                "let sh = gpu::workgroup_array::<f32, 64>();\nlet i = gpu::global_id().x;\n"
                "let mut v = gpu::float3(1.0);\nlet w = gpu::uint2(1, 2);\nlet mut f = 1.0;\nlet mut u = 0u32;\n"
                "let mut acc = 0;\nlet mut k = 1;\nlet mut b2 = false;\n" + body + "\n}\n")


def test_typed_random_programs_lower_to_verified_ir() -> None:
    rng = random.Random(20261129)
    accepted = 0
    for case in range(40):
        source = ProgramGen(rng).kernel()
        try:
            accepted += bool(check(source).kernels)
        except BaseException as e:
            raise AssertionError(f"case {case}: {e!r}\n{source}") from e
    assert accepted >= 10  # the generator is meant to produce mostly valid kernels


HOSTILE_CASES = 80  # issue 14's shapes (tests/kernel_gen.py `hostile`) at random sizes within the limits


def test_hostile_shapes_stay_bounded() -> None:
    """Deep nesting, long chains, huge literals, hostile names: every source imports under
    the deadline, and every kernel's CPU form compiles (its emit is validated)."""
    import kernel_gen
    from goldy_import.codegen.cpu import emit_cpu
    from goldy_import.codegen.validate import validate
    rng = random.Random(14)
    slowest = (0.0, "")
    for case in range(HOSTILE_CASES):
        label, source = kernel_gen.hostile(rng)
        t = time.process_time()
        try:
            result = check(source)
            for k in result.kernels:
                validate("cpu", k, emit_cpu(k))
        except BaseException as e:
            raise AssertionError(f"case {case} {label}: {e!r}") from e
        slowest = max(slowest, (time.process_time() - t, label))
    print(f"slowest hostile case: {slowest[1]} in {slowest[0]:.2f} CPU s")
