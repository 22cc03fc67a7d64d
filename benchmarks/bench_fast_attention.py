"""Time MultiHeadAttention's fast path against nn.MultiheadAttention, fwd and bwd.

Both modules hold the same weights (copied with ``to_torch``) and run side by
side in one process on the CPU in float32: self-attention with B=8, L=256,
d_model=512, h=8, without a mask and with a causal mask. Ours runs its
default path (``need_weights=False``: PyTorch's fused kernel, no weights
kept); PyTorch's module is called with ``need_weights=False`` too, so both may
use the fused kernel, and also as by default, which builds the weights. Runs
are interleaved and the median of each is reported. Target: ours / PyTorch
<= 1.0.

Run: ``python benchmarks/bench_fast_attention.py [--reps 30] [--threads 1]``.
This is a benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse

import torch

from bench_multihead import D_MODEL, B, H, L, median_ms, step
from transformer import MultiHeadAttention, causal_mask, to_torch

TARGET = 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reps", type=int, default=30, help="timed repetitions")
    parser.add_argument("--warmup", type=int, default=5, help="untimed repetitions")
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    torch.manual_seed(0)
    ours = MultiHeadAttention(D_MODEL, H)
    theirs = to_torch(ours)
    x = torch.randn(B, L, D_MODEL, requires_grad=True)
    ours_mask = causal_mask(L)  # True = may attend
    theirs_mask = ~ours_mask  # PyTorch: True = blocked
    with torch.no_grad():
        fast = ours(x, x, x, ours_mask)
        slow = ours(x, x, x, ours_mask, need_weights=True)
        reference = theirs(x, x, x, attn_mask=theirs_mask, need_weights=False)[0]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, float32, CPU")
    print(
        f"B={B}, L={L}, d_model={D_MODEL}, h={H}; forward + backward; "
        f"median of {args.reps}"
    )
    print(
        f"largest difference with the causal mask: fast vs need_weights=True "
        f"{(fast - slow).abs().max():.1e}, "
        f"fast vs torch {(fast - reference).abs().max():.1e}"
    )
    for label, mask, torch_mask in [
        ("no mask", None, None),
        ("causal mask", ours_mask, theirs_mask),
    ]:
        runs = {
            "ours, fast path": step(lambda x: ours(x, x, x, mask), x),
            "torch, need_weights=False": step(
                lambda x: theirs(x, x, x, attn_mask=torch_mask, need_weights=False)[0],
                x,
            ),
            "torch, need_weights=True": step(
                lambda x: theirs(x, x, x, attn_mask=torch_mask)[0], x
            ),
            "ours, need_weights=True": step(
                lambda x: ours(x, x, x, mask, need_weights=True), x
            ),
        }
        median = median_ms(runs, args.reps, args.warmup)
        print(f"{label}:")
        for name, ms in median.items():
            print(f"  {name:<28} {ms:8.1f} ms")
        names = list(median)
        print(
            f"  ratio ours fast / torch need_weights=False: "
            f"{median[names[0]] / median[names[1]]:.2f}  (target <= {TARGET}); "
            f"/ torch default: {median[names[0]] / median[names[2]]:.2f}"
        )


if __name__ == "__main__":
    main()
