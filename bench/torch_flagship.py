"""The seed document's two examples in PyTorch, each the first call of a fresh
process, one thread: the reference bench/first_call.mjs compares attnwasm's
first calls with. Prints one JSON line {"case", "ms", "freshBytes", "threads", "blas"}
(freshBytes: the call's peak RSS growth; glibc unmaps large freed blocks, so
the new pages it touches can be more).

  sdpa:  softmax(q kᵀ / √d) v on q, k, v of (N, L, E), as the seed writes it
         (torch 1.13 has no F.scaled_dot_product_attention)
  mha:   nn.MultiheadAttention(E, 8, batch_first=True) on x (N, L, E) with a
         causal bool mask, need_weights=False, eval mode, no grad

Usage: /usr/bin/python3 bench/torch_flagship.py sdpa|mha [N] [L] [E]
Needs libopenblas0-pthread (Debian's torch uses the system BLAS: the
reference BLAS is about 15x slower; bench/first_call.mjs checks).
"""
import json
import math
import resource
import sys
import time

import torch


def main():
    case = sys.argv[1]
    n, l, e = (int(v) for v in (sys.argv[2:5] + ["128", "512", "1024"][len(sys.argv[2:5]):]))
    torch.set_num_threads(1)
    torch.manual_seed(0)
    with torch.no_grad():
        if case == "sdpa":
            q, k, v = (torch.rand(n, l, e) - 0.5 for _ in range(3))
            rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            t0 = time.perf_counter()
            out = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(e), dim=-1) @ v
            ms = (time.perf_counter() - t0) * 1000
        elif case == "mha":
            mha = torch.nn.MultiheadAttention(e, 8, batch_first=True).eval()
            x = torch.rand(n, l, e) - 0.5
            mask = torch.triu(torch.ones(l, l, dtype=torch.bool), diagonal=1)
            rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            t0 = time.perf_counter()
            out, _ = mha(x, x, x, attn_mask=mask, need_weights=False)
            ms = (time.perf_counter() - t0) * 1000
        else:
            raise SystemExit(f"case: expected sdpa or mha, got {case!r}")
    # The peak RSS growth of the call (Linux: ru_maxrss in KiB).
    fresh = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) * 1024
    assert out.shape == (n, l, e)
    blas = torch.__config__.show()
    blas = "openblas" if "openblas" in blas.lower() else "system BLAS (see torch.__config__.show())"
    print(json.dumps({"case": case, "ms": ms, "freshBytes": fresh, "threads": torch.get_num_threads(), "blas": blas}))


if __name__ == "__main__":
    main()
