"""Time our MultiHeadAttention against nn.MultiheadAttention, forward and backward.

Both modules hold the same weights (copied with ``to_torch``) and run side by
side in one process on the CPU in float32, self-attention with
B=8, L=256, d_model=512, h=8. Repetitions are interleaved so that a slow
moment of the machine hits both alike; the median of each is reported.

PyTorch is timed twice: as called by default (``need_weights=True``, which,
like ours, materialises the ``(B, h, L, L)`` weights) and with
``need_weights=False``, which lets it use its fused attention kernel. The
target is ours <= 1.25 x the default call. See README.md for the findings.

``--breakdown`` also times, in the same interleaved way, the two places where
our code differs from PyTorch's: three separate projections against one
fused in-projection, and scaling the ``(B, h, L, L)`` scores against
scaling the ``(B, h, L, d_k)`` queries.

Run: ``python benchmarks/bench_multihead.py [--reps 30] [--threads N] [--breakdown]``.
This is a benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

import torch

from transformer import MultiHeadAttention, to_torch

B, L, D_MODEL, H = 8, 256, 512, 8
TARGET = 1.25


def step(
    forward: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor
) -> Callable[[], None]:
    """Return a function that runs one forward and backward pass."""

    def run() -> None:
        x.grad = None
        forward(x).sum().backward()

    return run


def median_ms(
    runs: dict[str, Callable[[], None]], reps: int, warmup: int
) -> dict[str, float]:
    """Run each function ``warmup`` times, then ``reps`` times interleaved; medians."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(warmup):
        for run in runs.values():
            run()
    for _ in range(reps):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(t) * 1e3 for name, t in times.items()}


def breakdown(reps: int, warmup: int) -> dict[str, float]:
    """Time the pieces in which our forward and backward differ from PyTorch's."""
    x = torch.randn(B, L, D_MODEL, requires_grad=True)
    separate = [torch.nn.Linear(D_MODEL, D_MODEL) for _ in range(3)]
    fused = torch.nn.Linear(D_MODEL, 3 * D_MODEL)
    d_k = D_MODEL // H
    q, k = (torch.randn(B, H, L, d_k, requires_grad=True) for _ in range(2))
    return median_ms(
        {
            # Both return q + k + v, so that they do the same extra work.
            "q, k, v projections: 3 separate": step(
                lambda x: sum(p(x) for p in separate), x
            ),
            "q, k, v projections: 1 fused": step(
                lambda x: sum(fused(x).chunk(3, dim=-1)), x
            ),
            "scores: (q @ k^T) / sqrt(d_k)": step(
                lambda q: q @ k.transpose(-2, -1) / d_k**0.5, q
            ),
            "scores: (q / sqrt(d_k)) @ k^T": step(
                lambda q: (q / d_k**0.5) @ k.transpose(-2, -1), q
            ),
        },
        reps,
        warmup,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--reps", type=int, default=30, help="timed repetitions of each"
    )
    parser.add_argument(
        "--warmup", type=int, default=5, help="untimed repetitions first"
    )
    parser.add_argument(
        "--threads", type=int, default=None, help="torch threads (default: torch's)"
    )
    parser.add_argument(
        "--breakdown", action="store_true", help="also time the pieces that differ"
    )
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)

    torch.manual_seed(0)
    ours = MultiHeadAttention(D_MODEL, H)
    theirs = to_torch(ours)
    x = torch.randn(B, L, D_MODEL, requires_grad=True)
    with torch.no_grad():
        difference = (ours(x, x, x) - theirs(x, x, x)[0]).abs().max().item()

    runs = {
        "ours (MultiHeadAttention)": step(lambda x: ours(x, x, x), x),
        "torch, need_weights=True (default)": step(lambda x: theirs(x, x, x)[0], x),
        "torch, need_weights=False": step(
            lambda x: theirs(x, x, x, need_weights=False)[0], x
        ),
    }
    median = median_ms(runs, args.reps, args.warmup)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, float32, CPU")
    print(
        f"B={B}, L={L}, d_model={D_MODEL}, h={H}; forward + backward; "
        f"median of {args.reps}"
    )
    print(f"largest output difference, ours vs torch: {difference:.1e}")
    for name, ms in median.items():
        print(f"  {name:<36} {ms:8.1f} ms")
    names = list(median)
    ratio = median[names[0]] / median[names[1]]
    print(f"ratio ours / torch default:          {ratio:.2f}  (target <= {TARGET})")
    print(
        "ratio ours / torch need_weights=False: "
        f"{median[names[0]] / median[names[2]]:.2f}"
    )
    if args.breakdown:
        print("breakdown, forward + backward of the pieces that differ:")
        for name, ms in breakdown(args.reps, args.warmup).items():
            print(f"  {name:<36} {ms:8.1f} ms")


if __name__ == "__main__":
    main()
