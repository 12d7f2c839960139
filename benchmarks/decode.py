"""Decode-step benchmark: a Llama-style FP32 transformer, one token at a time.

    python benchmarks/decode.py [--backend cpu|wgpu|cuda] [--small] [--tokens 32] [--repeat 3] [--no-torch]

The model is llama2.c's `forward` at stories15M sizes (dim 288, 6 layers, 6 heads, hidden
768, vocab 32000, seq 256; `--small`: a toy size for a quick check) with random weights,
written as a user porting it would (benchmarks/llama_decode.rs): embedding gather, RMSNorm
with `workgroup_sum`, naive per-row GEMV loops, RoPE from host tables, attention scores,
`workgroup_softmax_in_place`, the weighted values, SwiGLU, the classifier: 3 + 14 per layer
dispatches (87 at stories15M). The step is recorded once as a Scheme and replayed per token;
`token`, `pos` and the KV-cache offsets change through `set_node_param`.

Checked before timing: the logits of the first tokens against a plain-numpy float32 model
of the same math (within `RTOL` of the largest logit: summation orders differ), and on a
backend other than cpu bit for bit against the cpu backend (every backend computes the
same operations in the same order, the math library included). Tokens/s = timed tokens /
wall time of `submit()` plus the logits readback, per token, after `--warmup` tokens: as
recorded, with `set_automatic_fusion(True)`, and with it and `set_specialization(True)`
(the scalars that stay the same baked into variants: loop bounds become constants). The
three schemes are built first and timed in `--repeat` interleaved rounds (each round in a
rotated order), so a host that changes speed during the run moves all three alike; a row
gives the median tokens/s and the range. Plain numpy, PyTorch eager and `torch.compile`
of the same model run the same token sequence in the same process (torch when importable,
on the cuda device for `--backend cuda`, else on the CPU).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

import goldy_import as gi

HERE = os.path.dirname(os.path.abspath(__file__))
RTOL = 2e-3  # numpy reference vs goldy-import: relative to the largest |logit|
GREEDY = ", greedy on the device (tokens read at the end)"
PIPELINED = ", logits read every token, the positions' scalars set while the device runs"


@dataclass(frozen=True)
class Config:
    dim: int
    layers: int
    heads: int
    hidden: int
    vocab: int
    seq: int

    @property
    def head_size(self) -> int:
        return self.dim // self.heads


STORIES15M = Config(dim=288, layers=6, heads=6, hidden=768, vocab=32000, seq=256)
SMALL = Config(dim=64, layers=2, heads=4, hidden=96, vocab=512, seq=32)
EPS = np.float32(1e-5)


def weights(cfg: Config, seed: int = 0) -> dict:
    """Random weights, scaled so activations stay O(1); RoPE tables as llama2.c makes them."""
    rng = np.random.default_rng(seed)

    def mat(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)

    L, d, h = cfg.layers, cfg.dim, cfg.hidden
    half = cfg.head_size // 2
    freq = 1.0 / (10000.0 ** (np.arange(half) * 2.0 / cfg.head_size))
    ang = np.arange(cfg.seq)[:, None] * freq[None, :]
    return {
        "emb": rng.standard_normal((cfg.vocab, d)).astype(np.float32),
        "rms_att": (1 + 0.1 * rng.standard_normal((L, d))).astype(np.float32),
        "wq": mat(L, d, d), "wk": mat(L, d, d), "wv": mat(L, d, d), "wo": mat(L, d, d),
        "rms_ffn": (1 + 0.1 * rng.standard_normal((L, d))).astype(np.float32),
        "w1": mat(L, h, d), "w3": mat(L, h, d), "w2": mat(L, d, h),
        "rms_final": (1 + 0.1 * rng.standard_normal(d)).astype(np.float32),
        "wcls": mat(cfg.vocab, d),
        "cos": np.cos(ang).astype(np.float32), "sin": np.sin(ang).astype(np.float32),
    }


# ---------------------------------------------------------------- goldy-import


class GoldyDecoder:
    """The recorded step on one device; `step(token, pos)` gives the logits."""

    def __init__(self, dev: gi.Device, cfg: Config, W: dict, fusion: bool = False, specialize: bool = False,
                 greedy: bool = False, pipelined: bool = False):
        self.cfg, self.dev, self.greedy, self.pipelined = cfg, dev, greedy, pipelined
        self.next_pos: Optional[int] = None  # (pipelined) the position the scalars are set for
        self.fusion, self.specialize = fusion, specialize
        m = gi.load(os.path.join(HERE, "llama_decode.rs"))
        k = {name: getattr(m, name).prepare(dev) for name in
             ("embed", "embed_token", "argmax", "rmsnorm", "matvec", "matvec_add", "rope", "scores", "softmax_rows",
              "mix", "swiglu")}
        d, h, L, S, hs = cfg.dim, cfg.hidden, cfg.layers, cfg.seq, cfg.head_size
        B = {name: dev.buffer(np.ascontiguousarray(a).reshape(-1)) for name, a in W.items()
             if name not in ("wq", "wk", "wv", "wo", "w1", "w2", "w3", "rms_att", "rms_ffn")}
        layer = [{name: dev.buffer(np.ascontiguousarray(W[name][l]).reshape(-1))
                  for name in ("wq", "wk", "wv", "wo", "w1", "w2", "w3", "rms_att", "rms_ffn")} for l in range(L)]
        x, xb, q, xb2 = (dev.zeros(d) for _ in range(4))
        hb, hb2 = dev.zeros(h), dev.zeros(h)
        att = dev.zeros(cfg.heads * S)
        kc, vc = dev.zeros(L * S * d), dev.zeros(L * S * d)
        self.logits = dev.zeros(cfg.vocab)
        s = self.scheme = gi.Scheme(dev)
        self.token_nodes, self.pos_nodes, self.cache_nodes = [], [], []
        if greedy:  # the token comes from the last step's argmax, through `tok`
            self.tok, self.hist = dev.zeros(1, np.uint32), dev.zeros(S, np.uint32)
            k["embed_token"].record(s, "embed", B["emb"], x, self.tok, d).over_1d(d)
        else:
            self.token_nodes.append(k["embed"].record(s, "embed", B["emb"], x, 0, d).over_1d(d))
        scale = float(1.0 / np.sqrt(np.float32(hs)))
        for l in range(L):
            w, base = layer[l], l * S * d
            k["rmsnorm"].record(s, f"l{l} att norm", x, w["rms_att"], xb, d, float(EPS)).groups((1, 1, 1))
            k["matvec"].record(s, f"l{l} q", w["wq"], xb, q, d, d, 0).over_1d(d)
            self.cache_nodes.append((k["matvec"].record(s, f"l{l} k", w["wk"], xb, kc, d, d, base).over_1d(d), base))
            self.cache_nodes.append((k["matvec"].record(s, f"l{l} v", w["wv"], xb, vc, d, d, base).over_1d(d), base))
            rope = k["rope"].record(s, f"l{l} rope", q, kc, B["cos"], B["sin"], 0, d, hs, base).over_1d(d // 2)
            self.pos_nodes.append(rope)
            self.cache_nodes.append((rope, base))
            self.pos_nodes.append(k["scores"].record(s, f"l{l} scores", q, kc, att, 0, cfg.heads, hs, S, base,
                                                     scale).over_1d(cfg.heads * S))
            self.pos_nodes.append(k["softmax_rows"].record(s, f"l{l} softmax", att, 0, S).groups((cfg.heads, 1, 1)))
            self.pos_nodes.append(k["mix"].record(s, f"l{l} mix", att, vc, xb2, 0, d, hs, S, base).over_1d(d))
            k["matvec_add"].record(s, f"l{l} wo", w["wo"], xb2, x, d, d).over_1d(d)
            k["rmsnorm"].record(s, f"l{l} ffn norm", x, w["rms_ffn"], xb, d, float(EPS)).groups((1, 1, 1))
            k["matvec"].record(s, f"l{l} w1", w["w1"], xb, hb, h, d, 0).over_1d(h)
            k["matvec"].record(s, f"l{l} w3", w["w3"], xb, hb2, h, d, 0).over_1d(h)
            k["swiglu"].record(s, f"l{l} swiglu", hb, hb2, h).over_1d(h)
            k["matvec_add"].record(s, f"l{l} w2", w["w2"], hb, x, d, h).over_1d(d)
        k["rmsnorm"].record(s, "final norm", x, B["rms_final"], xb, d, float(EPS)).groups((1, 1, 1))
        k["matvec"].record(s, "classifier", B["wcls"], xb, self.logits, cfg.vocab, d, 0).over_1d(cfg.vocab)
        if greedy:
            self.pos_nodes.append(k["argmax"].record(s, "argmax", self.logits, self.tok, self.hist, cfg.vocab,
                                                     0).groups((1, 1, 1)))
        if fusion:
            s.set_automatic_fusion(True)
        if specialize:  # bake the scalars that stay (sizes, offsets of the weights) into variants
            s.set_specialization(True)

    @property
    def dispatches(self) -> int:
        return len(self.scheme.nodes)

    def _at(self, token: int, pos: int) -> None:
        self._at_token(token)
        self._at_pos(pos)

    def _at_token(self, token: int) -> None:
        for n in self.token_nodes:
            self.scheme.set_node_param(n, "token", token)

    def _at_pos(self, pos: int) -> None:
        s, d = self.scheme, self.cfg.dim
        for n in self.pos_nodes:
            s.set_node_param(n, "pos", pos)
        for n, base in self.cache_nodes:
            s.set_node_param(n, "koff" if n.kernel.name == "rope" else "off", base + pos * d)

    def step(self, token: int, pos: int) -> np.ndarray:
        """One token, its logits read back before the next (the host picks the next token).
        Pipelined: the scalars that depend on the position alone are set for pos + 1 while
        the device runs this step (a changed scalar takes effect at the next submit), so
        only the token's remains between reading the logits and the next submit."""
        if self.greedy:
            self.tok.write(np.array([token], np.uint32))
        if not self.pipelined:
            self._at(token, pos)
            self.scheme.submit()
            return self.logits.numpy()
        if self.next_pos != pos:
            self._at_pos(pos)
        self._at_token(token)
        self.scheme.submit(wait=False)
        if pos + 1 < self.cfg.seq:
            self._at_pos(pos + 1)
            self.next_pos = pos + 1
        return self.logits.numpy()  # waits for the step

    def generate(self, token: Optional[int], pos: int, count: int) -> np.ndarray:
        """Greedy decoding of `count` tokens from `token` at `pos` (None: the one the last
        step chose), queued without waiting: each step's argmax feeds the next one's
        embedding on the device. The chosen tokens, read once at the end."""
        if token is not None:
            self.tok.write(np.array([token], np.uint32))
        for p in range(pos, pos + count):
            self._at(0, p)
            self.scheme.submit(wait=False)
        self.dev.synchronize()  # (a fault of any of them is raised here)
        return self.hist.numpy()[pos:pos + count]


# ---------------------------------------------------------------- references


class NumpyDecoder:
    """The same model in plain numpy float32 (llama2.c's forward)."""

    def __init__(self, cfg: Config, W: dict):
        self.cfg, self.W = cfg, W
        self.kc = np.zeros((cfg.layers, cfg.seq, cfg.dim), np.float32)
        self.vc = np.zeros_like(self.kc)

    @staticmethod
    def rmsnorm(x, w):
        return x * (np.float32(1) / np.sqrt(np.mean(x * x, dtype=np.float32) + EPS)) * w

    def rope(self, v, pos):
        c, s = self.W["cos"][pos], self.W["sin"][pos]
        pairs = v.reshape(self.cfg.heads, -1, 2)
        a, b = pairs[..., 0], pairs[..., 1]
        return np.stack([a * c - b * s, a * s + b * c], -1).reshape(-1)

    def step(self, token: int, pos: int) -> np.ndarray:
        cfg, W = self.cfg, self.W
        H, hs = cfg.heads, cfg.head_size
        x = W["emb"][token].copy()
        scale = np.float32(1.0 / np.sqrt(np.float32(hs)))
        for l in range(cfg.layers):
            xb = self.rmsnorm(x, W["rms_att"][l])
            q = self.rope(W["wq"][l] @ xb, pos)
            self.kc[l, pos] = self.rope(W["wk"][l] @ xb, pos)
            self.vc[l, pos] = W["wv"][l] @ xb
            K = self.kc[l, :pos + 1].reshape(pos + 1, H, hs)
            V = self.vc[l, :pos + 1].reshape(pos + 1, H, hs)
            att = np.einsum("hd,thd->ht", q.reshape(H, hs), K) * scale
            att = np.exp(att - att.max(1, keepdims=True))
            att /= att.sum(1, keepdims=True)
            x = x + W["wo"][l] @ np.einsum("ht,thd->hd", att, V).reshape(-1)
            xb = self.rmsnorm(x, W["rms_ffn"][l])
            a, b = W["w1"][l] @ xb, W["w3"][l] @ xb
            x = x + W["w2"][l] @ (a / (np.float32(1) + np.exp(-a)) * b)
        return W["wcls"] @ self.rmsnorm(x, W["rms_final"])


def torch_decoders(cfg: Config, W: dict, device: str):
    """(eager step, compiled step) of the same model in PyTorch, or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    T = {k: torch.from_numpy(v).to(device) for k, v in W.items()}
    kc = torch.zeros((cfg.layers, cfg.seq, cfg.dim), device=device)
    vc = torch.zeros_like(kc)
    H, hs = cfg.heads, cfg.head_size

    def rms(x, w):
        return x * torch.rsqrt((x * x).mean() + float(EPS)) * w

    def rope(v, c, s):
        p = v.view(H, -1, 2)
        a, b = p[..., 0], p[..., 1]
        return torch.stack([a * c - b * s, a * s + b * c], -1).reshape(-1)

    def step(token: int, pos: int):
        x = T["emb"][token]
        c, s = T["cos"][pos], T["sin"][pos]
        for l in range(cfg.layers):
            xb = rms(x, T["rms_att"][l])
            q = rope(T["wq"][l] @ xb, c, s)
            kc[l, pos] = rope(T["wk"][l] @ xb, c, s)
            vc[l, pos] = T["wv"][l] @ xb
            K = kc[l, :pos + 1].view(pos + 1, H, hs)
            V = vc[l, :pos + 1].view(pos + 1, H, hs)
            att = torch.softmax(torch.einsum("hd,thd->ht", q.view(H, hs), K) / hs ** 0.5, -1)
            x = x + T["wo"][l] @ torch.einsum("ht,thd->hd", att, V).reshape(-1)
            xb = rms(x, T["rms_ffn"][l])
            x = x + T["w2"][l] @ (torch.nn.functional.silu(T["w1"][l] @ xb) * (T["w3"][l] @ xb))
        return T["wcls"] @ rms(x, T["rms_final"])

    def run(fn):
        def go(token, pos):
            with torch.no_grad():
                return fn(token, pos).cpu().numpy()
        return go

    def generating(fn):
        def generate(token, pos, count):
            """Greedy decoding kept on the device (argmax feeds the next step); tokens read at the end."""
            with torch.no_grad():
                tok, out = torch.tensor(token, device=device), []
                for p in range(pos, pos + count):
                    tok = fn(tok, p).argmax()
                    out.append(tok)
                return torch.stack(out).cpu().numpy()
        return generate

    compiled = torch.compile(step, dynamic=True)
    return run(step), run(compiled), generating(step), generating(compiled)


# ---------------------------------------------------------------- driver


def tokens_for(cfg: Config, count: int, seed: int = 1) -> list[int]:
    return [int(t) for t in np.random.default_rng(seed).integers(0, cfg.vocab, count)]


def check(cfg: Config, W: dict, backend_dev: gi.Device, steps: int, fusion: bool, specialize: bool = False) -> None:
    """`steps` tokens as recorded, then `steps` more once the background compiles are done
    (the fused and specialized programs the timed rows run, changed scalars from the live
    block): numpy within RTOL, and the cpu backend's bits off cpu."""
    toks = tokens_for(cfg, 2 * steps)
    ref, got = NumpyDecoder(cfg, W), GoldyDecoder(backend_dev, cfg, W, fusion, specialize)
    pipe = GoldyDecoder(backend_dev, cfg, W, fusion, specialize, pipelined=True)
    cpu = GoldyDecoder(gi.Device("cpu"), cfg, W) if backend_dev.backend_name != "cpu" else None
    for pos, t in enumerate(toks):
        if pos == steps:
            for _ in range(3):  # a fused region is specialized once a submit ran it
                got.scheme.wait_for_fusion()
                got.scheme.wait_for_specialization()
                got.step(t, pos)  # (the same step again below: the cache row is rewritten)
        g, r = got.step(t, pos), ref.step(t, pos)
        if not np.array_equal(pipe.step(t, pos).view(np.uint32), g.view(np.uint32)):
            raise AssertionError(f"pos {pos}: the pipelined step's logits differ")
        bound = RTOL * float(np.abs(r).max())
        err = float(np.abs(g - r).max())
        if not err <= bound:
            raise AssertionError(f"pos {pos}: logits differ from the numpy model by {err:.3g} (bound {bound:.3g})")
        if cpu is not None:
            c = cpu.step(t, pos)
            if not np.array_equal(g.view(np.uint32), c.view(np.uint32)):
                bad = int(np.count_nonzero(g.view(np.uint32) != c.view(np.uint32)))
                raise AssertionError(f"pos {pos}: {bad} logits differ from the cpu backend's bits")
    # its background compiles (fusion, specialization) must not run into the timed rows
    got.scheme.wait_for_fusion()
    got.scheme.wait_for_specialization()


def check_greedy(cfg: Config, W: dict, dev: gi.Device, steps: int, fusion: bool, specialize: bool = False) -> None:
    """Greedy decoding on the device, once the background compiles are done, against the cpu
    backend's step fed the same tokens: each chosen token is numpy's argmax of those logits
    (the cpu logits are checked against the numpy model as in `check`), and the device's last
    logits are the cpu backend's bits."""
    got = GoldyDecoder(dev, cfg, W, fusion, specialize, greedy=True)
    first = tokens_for(cfg, 1)[0]
    got.generate(first, 0, steps)
    for _ in range(3):  # a fused region is specialized once a submit ran it
        got.scheme.wait_for_fusion()
        got.scheme.wait_for_specialization()
        got.generate(first, 0, 1)
    chosen = got.generate(first, 0, 2 * steps)
    cpu, ref = GoldyDecoder(gi.Device("cpu"), cfg, W), NumpyDecoder(cfg, W)
    token = first
    for pos, t in enumerate(chosen):
        c, r = cpu.step(token, pos), ref.step(token, pos)
        if not float(np.abs(c - r).max()) <= RTOL * float(np.abs(r).max()):
            raise AssertionError(f"pos {pos}: the cpu backend's logits differ from the numpy model")
        if int(t) != int(np.argmax(c)):
            raise AssertionError(f"pos {pos}: greedy decoding chose token {int(t)}, the logits' argmax is "
                                 f"{int(np.argmax(c))}")
        token = int(t)
    g = got.logits.numpy()
    if not np.array_equal(g.view(np.uint32), c.view(np.uint32)):
        raise AssertionError("greedy decoding's last logits differ from the cpu backend's bits")
    got.scheme.wait_for_fusion()
    got.scheme.wait_for_specialization()


def settle(dec: "GoldyDecoder", token: int, rounds: int = 3) -> None:
    """Steps until the background compiles are done: a fused region is specialized only
    after a submit has run it, so each wait can start the next compile. On the cpu
    backend also its C builds, and enough steps for each dispatch to time both forms
    (codegen/cpu/ckernel.py)."""
    from goldy_import.codegen.cpu import ckernel
    if dec.dev.backend_name == "cpu":
        rounds = max(rounds, ckernel.WARMUP_RUNS + 2 * ckernel.DECIDE_RUNS + 2)
    for _ in range(rounds):
        dec.step(token, 0)
        dec.scheme.wait_for_fusion()
        dec.scheme.wait_for_specialization()
        ckernel.wait_for_builds()


def rate(step, toks: list[int], warmup: int) -> float:
    """Tokens/s over toks[warmup:], each step reading its logits back."""
    for pos in range(warmup):
        step(toks[pos], pos)
    t0 = time.perf_counter()
    for pos in range(warmup, len(toks)):
        step(toks[pos], pos)
    return (len(toks) - warmup) / (time.perf_counter() - t0)


def greedy_rate(generate, first: int, warmup: int, count: int) -> float:
    """Tokens/s of `count` greedy tokens after `warmup` (the tokens read once, at the end)."""
    last = int(generate(first, 0, warmup)[-1])
    t0 = time.perf_counter()
    generate(last, warmup, count)
    return count / (time.perf_counter() - t0)


def main(argv=None) -> list[str]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cpu", choices=("cpu", "wgpu", "cuda", "slang"))
    ap.add_argument("--small", action="store_true", help="a toy model (quick check)")
    ap.add_argument("--tokens", type=int, default=32, help="timed tokens")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--check-steps", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3, help="interleaved timed rounds per goldy-import variant")
    ap.add_argument("--no-torch", action="store_true")
    a = ap.parse_args(argv)
    if a.repeat < 1:
        ap.error("--repeat must be at least 1")
    cfg = SMALL if a.small else STORIES15M
    total = a.warmup + a.tokens
    if total > cfg.seq:
        ap.error(f"--warmup + --tokens = {total} exceeds the sequence length {cfg.seq}")
    W = weights(cfg)
    dev = gi.Device(a.backend)
    toks = tokens_for(cfg, total, seed=2)
    variants = ((False, False), (True, False), (True, True))  # (automatic fusion, specialization)
    for fusion, spec in variants:
        check(cfg, W, dev, a.check_steps, fusion, spec)
        check_greedy(cfg, W, dev, a.check_steps, fusion, spec)
    rows = []
    decs = []
    for greedy in (False, True):
        for fusion, spec in variants:
            # on the cpu backend a device each: the six decoders' transposed weights (codegen/cpu/
            # transposed.py) would overflow one device's cache and evict each other
            dec = GoldyDecoder(gi.Device("cpu") if a.backend == "cpu" else dev, cfg, W, fusion, spec, greedy)
            if fusion or spec or a.backend == "cpu":
                settle(dec, toks[0])
            decs.append(dec)
    # the per-token loop with the positions' scalars set while the device runs (step's pipelined)
    dec = GoldyDecoder(gi.Device("cpu") if a.backend == "cpu" else dev, cfg, W, True, True, pipelined=True)
    settle(dec, toks[0])
    decs.append(dec)

    def timed(dec: GoldyDecoder) -> float:
        if dec.greedy:
            return greedy_rate(dec.generate, toks[0], a.warmup, a.tokens)
        return rate(dec.step, toks, a.warmup)

    rates: list[list[float]] = [[] for _ in decs]
    per = [0.0] * len(decs)
    for r in range(a.repeat):
        for i in [(r + j) % len(decs) for j in range(len(decs))]:
            st = decs[i].scheme.stats
            s0, d0 = st.submits, st.dispatches
            rates[i].append(timed(decs[i]))
            per[i] = (st.dispatches - d0) / max(1, st.submits - s0)
    for dec, rs, p in zip(decs, rates, per):
        spread = f" ({min(rs):.0f}-{max(rs):.0f})" if len(rs) > 1 else ""
        rows.append(f"| goldy-import {a.backend}{', automatic fusion' if dec.fusion else ''}"
                    f"{', specialization' if dec.specialize else ''}{GREEDY if dec.greedy else ''}"
                    f"{PIPELINED if dec.pipelined else ''} | "
                    f"{dec.dispatches} recorded, {p:.0f} per token | {float(np.median(rs)):.1f}{spread} |")
    numpy_step = NumpyDecoder(cfg, W).step
    rows.append(f"| plain numpy (float32, BLAS matvec) | | {rate(numpy_step, toks, a.warmup):.1f} |")
    torch_dev = "cuda" if a.backend == "cuda" else "cpu"
    fns = None if a.no_torch else torch_decoders(cfg, W, torch_dev)
    if fns is None:
        rows.append("| PyTorch | skipped (not importable or --no-torch) | |")
    else:
        for name, fn, gen in zip(("PyTorch eager", "torch.compile"), fns[:2], fns[2:]):
            r = NumpyDecoder(cfg, W).step(toks[0], 0)
            try:
                g = fn(toks[0], 0)  # pos 0 again below: the cache row is overwritten
            except Exception as e:  # e.g. no compiler toolchain for torch.compile
                rows.append(f"| {name} ({torch_dev}) | failed: {type(e).__name__}: {str(e)[:80]} | |")
                continue
            assert np.abs(g - r).max() <= RTOL * np.abs(r).max(), f"{name} disagrees with the numpy model"
            rows.append(f"| {name} ({torch_dev}) | | {rate(fn, toks, a.warmup):.1f} |")
            assert int(gen(toks[0], 0, 1)[0]) == int(np.argmax(fn(toks[0], 0))), f"{name}: greedy argmax"
            rows.append(f"| {name} ({torch_dev}){GREEDY} | | {greedy_rate(gen, toks[0], a.warmup, a.tokens):.1f} |")
    size = "small" if a.small else "stories15M"
    print(f"decode step, {size} {cfg}, {a.tokens} timed tokens after {a.warmup}, goldy-import rows: median of "
          f"{a.repeat} interleaved rounds (range); {platform.node()}, "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; device {dev.describe()}")
    print("| implementation | dispatches | tokens/s |\n|---|---|---|")
    print("\n".join(rows))
    return rows


if __name__ == "__main__":
    main(sys.argv[1:])
