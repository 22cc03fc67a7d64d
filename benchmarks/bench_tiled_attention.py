"""Time and peak memory of ``tiled_attention`` against plain attention, at three L.

For L = 256, 1024 and 4096 (B=1, h=8, d_k=64, float32, CPU, forward only,
no gradients), each of the two functions runs in a fresh Python process, so
that its peak resident memory can be read from the operating system
(``ru_maxrss``) and compared with the memory in use before the call. Times
are the median of a few calls. No target: the point is the honest numbers.
A plain-PyTorch loop over 64 x 64 blocks pays Python's overhead at every
block, and it only saves memory; FlashAttention's speed needs the loop in one
GPU kernel.

Run: ``python benchmarks/bench_tiled_attention.py [--reps 3]``.
This is a benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import torch

from transformer import scaled_dot_product_attention, tiled_attention

LENGTHS = (256, 1024, 4096)
H, D_K, BLOCK = 8, 64, 64


def measure(kind: str, L: int, reps: int) -> dict[str, float]:
    """Run one function in this process: median seconds and peak extra memory."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    q, k, v = (torch.randn(1, H, L, D_K) for _ in range(3))
    with (
        torch.no_grad()
    ):  # first calls load code and allocate pools: not the peak we want
        tiny = torch.randn(1, H, 8, D_K)
        scaled_dot_product_attention(tiny, tiny, tiny)
        tiled_attention(tiny, tiny, tiny, block_size=4)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    times = []
    with torch.no_grad():
        for _ in range(reps):
            start = time.perf_counter()
            if kind == "naive":
                scaled_dot_product_attention(q, k, v)
            else:
                tiled_attention(q, k, v, block_size=BLOCK)
            times.append(time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "seconds": sorted(times)[len(times) // 2],
        "extra_mib": (peak - before) / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reps", type=int, default=3, help="timed calls per function")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child[0], int(args.child[1]), args.reps)))
        return
    print(
        f"torch {torch.__version__}, 1 thread, float32, CPU; B=1, h={H}, d_k={D_K}, "
        f"blocks of {BLOCK}; forward only; median of {args.reps}"
    )
    print(
        f"{'L':>6} {'naive ms':>10} {'tiled ms':>10} {'time ratio':>11} "
        f"{'naive MiB':>10} {'tiled MiB':>10} {'memory ratio':>13}"
    )
    for L in LENGTHS:
        result = {}
        for kind in ("naive", "tiled"):
            command = [sys.executable, __file__, "--reps", str(args.reps),
                       "--child", kind, str(L)]  # fmt: skip
            out = subprocess.run(command, capture_output=True, text=True, check=True)
            result[kind] = json.loads(out.stdout)
        n, t = result["naive"], result["tiled"]
        print(
            f"{L:>6} {n['seconds'] * 1e3:>10.1f} {t['seconds'] * 1e3:>10.1f} "
            f"{t['seconds'] / n['seconds']:>10.2f}x {n['extra_mib']:>10.1f} "
            f"{t['extra_mib']:>10.1f} "
            f"{t['extra_mib'] / max(n['extra_mib'], 1e-9):>12.3f}x"
        )


if __name__ == "__main__":
    main()
