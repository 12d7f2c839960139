"""Where a decode step's device time goes, per kernel (CUDA; needs PyTorch for its profiler).

    python3 benchmarks/decode_profile.py [--tokens 8] [--fusion] [--specialize] [--greedy] [--small]

Records benchmarks/decode.py's step on the cuda device, runs `--tokens` steps under
`torch.profiler` (CUPTI sees every kernel in the process, ours included) and prints each
kernel's device time per token, the sum, and the wall time per token. `--greedy`: the
step's greedy form (decode.py `generate`), every token queued before one wait.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import goldy_import as gi  # noqa: E402
from decode import SMALL, STORIES15M, GoldyDecoder, settle, tokens_for, weights  # noqa: E402
from fusion import device_us  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=8)
    ap.add_argument("--fusion", action="store_true")
    ap.add_argument("--specialize", action="store_true")
    ap.add_argument("--greedy", action="store_true")
    ap.add_argument("--small", action="store_true")
    a = ap.parse_args()
    import torch
    from torch.profiler import ProfilerActivity, profile

    cfg = SMALL if a.small else STORIES15M
    dec = GoldyDecoder(gi.Device("cuda"), cfg, weights(cfg), a.fusion, a.specialize, a.greedy)
    toks = tokens_for(cfg, 3 + a.tokens)
    for pos in range(3):
        dec.step(toks[pos], pos)
    if a.fusion or a.specialize:
        settle(dec, toks[0])
    torch.cuda.synchronize()
    before = dataclasses.asdict(dec.scheme.stats)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        if a.greedy:
            dec.generate(toks[3], 3, a.tokens)
        else:
            for pos in range(3, 3 + a.tokens):
                dec.step(toks[pos], pos)
        wall = (time.perf_counter() - t0) / a.tokens
    rows = []
    for ev in prof.key_averages():
        dt = device_us(ev)
        if dt:
            rows.append((dt / a.tokens, ev.count / a.tokens, ev.key))
    rows.sort(reverse=True)
    print(f"# {cfg}, {a.tokens} tokens, fusion={a.fusion}, specialization={a.specialize}, greedy={a.greedy}")
    print("| kernel | launches/token | us/token |\n|---|---:|---:|")
    for us, count, key in rows[:25]:
        print(f"| {key[:60]} | {count:.0f} | {us:.1f} |")
    print(f"| device total | | {sum(r[0] for r in rows):.1f} |")
    print(f"| wall per token | | {wall * 1e6:.1f} |")
    # what the scheme did during the timed tokens: a compile, promotion or demotion there
    # means the rows above are not the steady state
    after = dataclasses.asdict(dec.scheme.stats)
    moved = {k: after[k] - before.get(k, 0) for k in after if after[k] != before.get(k, 0)}
    print(f"scheme stats after settling: {before}")
    print(f"changed during the timed tokens: {moved or 'nothing'}")
    if a.specialize:
        print(dec.scheme.specialization_report())


if __name__ == "__main__":
    main()
