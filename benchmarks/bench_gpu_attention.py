"""GPU: our MultiHeadAttention under a causal mask against nn.MultiheadAttention.

Forward and backward of causal self-attention in bfloat16, B=8, L=1024,
d_model=1024, h=16. Ours gets ``CAUSAL`` (the causal mask, never built),
which reaches PyTorch's kernel as ``is_causal=True``; PyTorch's module gets
``is_causal=True`` with the same mask, as its documentation asks. Same
weights (``to_torch``), interleaved runs, median. Exits with a message when
there is no GPU.

Run: ``python benchmarks/bench_gpu_attention.py [--reps 20]``.
"""

from __future__ import annotations

import argparse

import torch

from gpu_common import cuda_or_exit, describe_device, median_cuda_ms
from transformer import MultiHeadAttention, causal_mask, to_torch, to_torch_mask
from transformer.parts.masks import CAUSAL

B, L, D, H = 8, 1024, 1024, 16


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reps", type=int, default=20)
    args = parser.parse_args()
    device = cuda_or_exit("bench_gpu_attention")
    torch.manual_seed(0)
    ours = MultiHeadAttention(D, H).to(device, torch.bfloat16)
    theirs = to_torch(ours)
    x = torch.randn(B, L, D, device=device, dtype=torch.bfloat16, requires_grad=True)
    blocked = to_torch_mask(causal_mask(L, device=device))

    def run_ours() -> None:
        ours(x, x, x, CAUSAL).sum().backward()

    def run_theirs() -> None:
        out, _ = theirs(x, x, x, attn_mask=blocked, is_causal=True, need_weights=False)
        out.sum().backward()

    ms = median_cuda_ms({"ours": run_ours, "torch": run_theirs}, reps=args.reps)
    print(describe_device())
    print(
        f"B={B} L={L} d_model={D} h={H} bf16, forward+backward, median of {args.reps}"
    )
    print(
        f"ours {ms['ours']:.2f} ms, nn.MultiheadAttention {ms['torch']:.2f} ms, "
        f"ratio {ms['ours'] / ms['torch']:.2f}"
    )


if __name__ == "__main__":
    main()
