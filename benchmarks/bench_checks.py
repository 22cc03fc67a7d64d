"""Time a full Transformer forward and backward pass with the input checks on and off.

One model, one batch, one process: each repetition runs the training step
once with checks on and once with them off (``transformer.set_checks``), in
alternating order, so that a slow moment of the machine hits both alike. The
median of each is reported, with their ratio. The target is a ratio <= 1.03.

Two sizes are timed: the model and batch of the training chapter (small, so
Python overhead weighs most), and a larger one closer to real training.

Run: ``python benchmarks/bench_checks.py [--reps 200] [--threads 1]``.
This is a benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch

from transformer import (
    Transformer,
    TransformerConfig,
    causal_mask,
    padding_mask,
    set_checks,
)

TARGET = 1.03
SIZES = {
    # name: (B, S, L, d_model, h, d_ff, N, V)
    "training chapter": (64, 12, 12, 32, 4, 64, 2, 16),
    "larger": (32, 32, 32, 128, 8, 512, 2, 1000),
}


def make_step(B: int, S: int, L: int, d_model: int, h: int, d_ff: int, N: int, V: int):
    """Return one training step (forward, loss, backward) of a fresh model."""
    config = TransformerConfig(
        src_vocab_size=V,
        tgt_vocab_size=V,
        d_model=d_model,
        h=h,
        d_ff=d_ff,
        N=N,
        dropout=0.1,
        max_len=max(S, L),
    )
    model = Transformer(config).train()
    src, tgt = torch.randint(0, V, (B, S)), torch.randint(0, V, (B, L))
    src_mask = padding_mask(torch.randint(S // 2, S + 1, (B,)), S)  # (B, 1, 1, S)
    tgt_mask = causal_mask(L) & padding_mask(torch.full((B,), L), L)  # (B, 1, L, L)

    def step() -> None:
        model.zero_grad(set_to_none=True)
        logits = model(src, tgt, src_mask, tgt_mask)  # (B, L, V)
        loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), tgt.flatten())
        loss.backward()

    return step


def time_once(step, checks: bool) -> float:
    set_checks(checks)
    try:
        start = time.perf_counter()
        step()
        return time.perf_counter() - start
    finally:
        set_checks(True)


def compare(step, reps: int, warmup: int) -> tuple[float, float]:
    """Median seconds with checks on and off, interleaved in alternating order."""
    for _ in range(warmup):
        time_once(step, True)
        time_once(step, False)
    on: list[float] = []
    off: list[float] = []
    for rep in range(reps):
        order = (True, False) if rep % 2 == 0 else (False, True)
        for checks in order:
            (on if checks else off).append(time_once(step, checks))
    return statistics.median(on), statistics.median(off)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    print(
        f"torch {torch.__version__}, {args.threads} thread(s), float32 CPU, "
        f"forward + backward, median of {args.reps} interleaved repetitions"
    )
    for name, sizes in SIZES.items():
        B, S, L, d_model, h, d_ff, N, V = sizes
        on, off = compare(make_step(*sizes), args.reps, args.warmup)
        print(
            f"{name}: B={B}, S={S}, L={L}, d_model={d_model}, h={h}, d_ff={d_ff}, "
            f"N={N}, V={V}: checks on {on * 1e3:.2f} ms, off {off * 1e3:.2f} ms, "
            f"ratio {on / off:.3f} (target <= {TARGET})"
        )


if __name__ == "__main__":
    main()
