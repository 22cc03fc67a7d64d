"""Time ``flash_attention`` against PyTorch's fused attention and ``tiled_attention``.

On a CUDA GPU, in bfloat16, B=4, h=16, d=64 (h_kv = h), for L = S = 1024,
4096 and 8192, without and with the causal mask, forward only and forward +
backward: the Triton kernels of ``transformer.flash_attention`` (blocks of
64), ``F.scaled_dot_product_attention`` (PyTorch's FlashAttention kernel on
this GPU) and ``transformer.tiled_attention`` (the same loop in PyTorch,
blocks of 64), side by side in one process. Each time is the median of
``--reps`` calls after ``--warmup`` untimed ones (``tiled_attention``, a
Python loop of thousands of small kernels at L = 8192: ``--tiled-reps``
calls after one), measured with CUDA events;
the ratios are to PyTorch's. Before timing, the script checks that the three
agree. No target: the point is the honest numbers.

Run: ``python benchmarks/bench_flash_attention.py [--reps 20]``, on a machine
with a CUDA GPU, with ``TRITON_INTERPRET`` unset. Without a GPU it says so and
exits with status 1. This is a benchmark, not a test: nothing here asserts a
time.
"""

from __future__ import annotations

import argparse
import os
import sys

import torch
import torch.nn.functional as F

LENGTHS = (1024, 4096, 8192)
B, H, D, BLOCK = 4, 16, 64, 64


def functions(is_causal: bool) -> dict:
    from transformer import flash_attention, tiled_attention

    return {
        "flash_attention": lambda q, k, v: flash_attention(
            q, k, v, is_causal=is_causal, block_size=BLOCK
        ),
        "torch sdpa": lambda q, k, v: F.scaled_dot_product_attention(
            q, k, v, is_causal=is_causal
        ),
        "tiled_attention": lambda q, k, v: tiled_attention(
            q, k, v, is_causal=is_causal, block_size=BLOCK
        ),
    }


def median_ms(fn, inputs, backward: bool, reps: int, warmup: int) -> float:
    """Median milliseconds of ``fn(*inputs)`` (and its backward pass)."""
    grad = torch.randn_like(inputs[0])
    times = []
    for i in range(warmup + reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        out = fn(*inputs)
        if backward:
            torch.autograd.grad(out, inputs, grad)
        end.record()
        torch.cuda.synchronize()
        if i >= warmup:
            times.append(start.elapsed_time(end))
    return sorted(times)[len(times) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reps", type=int, default=20, help="timed calls")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls")
    parser.add_argument(
        "--tiled-reps", type=int, default=3, help="timed calls of tiled_attention"
    )
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("bench_flash_attention.py needs a CUDA GPU; this machine has none.")
    if os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        sys.exit("unset TRITON_INTERPRET: it would run the kernels on the CPU.")
    import triton

    torch.manual_seed(0)
    print(
        f"{torch.cuda.get_device_name()}, torch {torch.__version__}, "
        f"triton {triton.__version__}, CUDA {torch.version.cuda}; bfloat16, B={B}, "
        f"h={H}, d={D}, blocks of {BLOCK}; median of {args.reps} (ms)"
    )
    names = list(functions(False))
    header = " ".join(f"{n:>16}" for n in names)
    print(f"{'L':>5} {'causal':>6} {'pass':>9} {header} {'flash/sdpa':>10}")
    for L in LENGTHS:
        inputs = [
            torch.randn(
                B, H, L, D, device="cuda", dtype=torch.bfloat16
            ).requires_grad_()
            for _ in range(3)
        ]
        for is_causal in (False, True):
            fns = functions(is_causal)
            with torch.no_grad():
                reference = fns["torch sdpa"](*inputs).float()
                for name in ("flash_attention", "tiled_attention"):
                    diff = (fns[name](*inputs).float() - reference).abs().max()
                    if diff > 5e-2:
                        sys.exit(f"{name} differs from torch sdpa by {diff:.2e}")
            for backward in (False, True):
                ms = {
                    n: median_ms(
                        f,
                        inputs,
                        backward,
                        args.tiled_reps if n == "tiled_attention" else args.reps,
                        min(args.warmup, 1) if n == "tiled_attention" else args.warmup,
                    )
                    for n, f in fns.items()
                }
                cells = " ".join(f"{ms[n]:>16.2f}" for n in names)
                ratio = ms["flash_attention"] / ms["torch sdpa"]
                label = "fwd+bwd" if backward else "fwd"
                print(f"{L:>5} {str(is_causal):>6} {label:>9} {cells} {ratio:>10.2f}")


if __name__ == "__main__":
    main()
