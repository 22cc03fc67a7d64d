"""GPU: tokens per second of ``generate`` at B=1, eager and compiled.

An 8-layer LLaMA-style model (d_model=512, h=8, n_kv_heads=2, d_ff=1376,
V=1000, max_len=1024, RMSNorm, SwiGLU, rotary positions), untrained,
writes 496 tokens greedily after a 16-token prompt with the KV cache, checks
off: eager, then the same model after ``model.compile(mode="reduce-overhead")``.
Both must write the same tokens. Exits with a message when there is no GPU.

Run: ``python benchmarks/bench_gpu_generate.py [--reps 5]``.
"""

from __future__ import annotations

import argparse
import copy

import torch

from gpu_common import cuda_or_exit, describe_device, median_cuda_ms
from transformer import DecoderOnlyConfig, DecoderOnlyTransformer, generate, no_checks

PROMPT, NEW = 16, 496


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reps", type=int, default=5)
    args = parser.parse_args()
    device = cuda_or_exit("bench_gpu_generate")
    config = DecoderOnlyConfig(
        vocab_size=1000, d_model=512, h=8, n_kv_heads=2, d_ff=1376, N=8,
        max_len=1024, dropout=0.0, norm_first=True, norm="rms",
        activation="swiglu", positional="rope",
    )  # fmt: skip
    torch.manual_seed(0)
    eager = DecoderOnlyTransformer(config).to(device).eval()
    compiled = copy.deepcopy(eager)
    compiled.compile(mode="reduce-overhead")
    prompt = torch.randint(0, 1000, (1, PROMPT), device=device)
    print(describe_device())
    with no_checks():
        same = torch.equal(
            generate(eager, prompt, NEW), generate(compiled, prompt, NEW)
        )
        runs = {
            "eager": lambda: generate(eager, prompt, NEW),
            "compiled": lambda: generate(compiled, prompt, NEW),
        }
        ms = median_cuda_ms(runs, reps=args.reps, warmup=1)
    print(f"B=1, {PROMPT}-token prompt, {NEW} new tokens, same tokens: {same}")
    for name, t in ms.items():
        print(f"{name}: {t:.0f} ms, {NEW / t * 1000:.0f} tokens/s")


if __name__ == "__main__":
    main()
