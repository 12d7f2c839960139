"""Where a decode token's wall time goes: host phases and GPU time, per token (CUDA).

    python3 benchmarks/decode_split.py [--tokens 64]

benchmarks/decode.py's stories15M step, as recorded and with automatic fusion and
specialization (settled first), one token at a time: the 43 `set_node_param` calls, a
`submit(wait=False)`, its wait, and the logits read, each by `perf_counter`; the GPU time
between CUDA events recorded on the backend's stream just before and after the submit
(it includes any time the GPU waited for the host within the submit). Means over the
tokens. Results are not re-checked here (decode.py checks the same step).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import goldy_import as gi  # noqa: E402
import decode  # noqa: E402


def split(g: "decode.GoldyDecoder", tokens: int) -> dict:
    cfg, s, be = g.cfg, g.scheme, g.dev.backend
    drv = be.drv
    ev0, ev1 = drv.cuEventCreate(0)[1], drv.cuEventCreate(0)[1]
    tot = dict.fromkeys(("set_node_param", "submit(wait=False)", "wait", "logits read", "GPU"), 0.0)
    for t in range(tokens + 3):
        pos = t % cfg.seq
        a = time.perf_counter()
        for n in g.token_nodes:
            s.set_node_param(n, "token", t % cfg.vocab)
        for n in g.pos_nodes:
            s.set_node_param(n, "pos", pos)
        for n, base in g.cache_nodes:
            s.set_node_param(n, "koff" if n.kernel.name == "rope" else "off", base + pos * cfg.dim)
        b = time.perf_counter()
        drv.cuEventRecord(ev0, be.stream)
        h = s.submit(wait=False)
        drv.cuEventRecord(ev1, be.stream)
        c = time.perf_counter()
        h.wait()
        d = time.perf_counter()
        g.logits.numpy()
        e = time.perf_counter()
        if t >= 3:  # after warm-up
            for k, v in zip(tot, (b - a, c - b, d - c, e - d, drv.cuEventElapsedTime(ev0, ev1)[1] * 1e-3)):
                tot[k] += v
    return {k: v / tokens * 1e6 for k, v in tot.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tokens", type=int, default=64)
    a = ap.parse_args()
    cfg = decode.STORIES15M
    W = decode.weights(cfg)
    dev = gi.Device("cuda")
    print(f"# decode token split, us per token, {a.tokens} tokens; {dev.describe()}")
    print("| scheme | set_node_param | submit(wait=False) | wait | logits read | GPU |\n|---|---:|---:|---:|---:|---:|")
    for fusion, spec in ((False, False), (True, True)):
        g = decode.GoldyDecoder(dev, cfg, W, fusion, spec)
        if fusion or spec:
            decode.settle(g, 1)
        r = split(g, a.tokens)
        name = "fusion + specialization" if spec else "recorded"
        print(f"| {name} | " + " | ".join(f"{v:.1f}" for v in r.values()) + " |")


if __name__ == "__main__":
    main()
