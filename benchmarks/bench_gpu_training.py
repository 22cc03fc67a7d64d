"""GPU: a GPT-2-small training step, the book's decoder against two references.

124 M parameters (d_model=768, h=12, N=12, d_ff=3072, V=50257, learned
positions, pre-norm, tied embeddings), B=8, L=1024, bf16 autocast, fused
AdamW. Eager: the book's ``DecoderOnlyTransformer`` (checks off) against a
stack of ``nn.TransformerEncoderLayer`` under ``is_causal=True``. Compiled
(``torch.compile``): the book's model against a minimal nanoGPT-style
reference written here, compiled the same way. Interleaved runs, median.
Exits with a message when there is no GPU.

Run: ``python benchmarks/bench_gpu_training.py [--reps 10] [--no-compile]``.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

from gpu_common import cuda_or_exit, describe_device, median_cuda_ms
from transformer import DecoderOnlyConfig, DecoderOnlyTransformer, no_checks

B, L, D, H, N, V = 8, 1024, 768, 12, 12, 50257


class TorchLayers(nn.Module):
    """GPT-2 small from nn.TransformerEncoderLayer, causal by ``is_causal``."""

    def __init__(self) -> None:
        super().__init__()
        self.tok, self.pos = nn.Embedding(V, D), nn.Embedding(L, D)
        layer = nn.TransformerEncoderLayer(
            D, H, 4 * D, dropout=0.0, activation="gelu", batch_first=True,
            norm_first=True,
        )  # fmt: skip
        self.layers = nn.TransformerEncoder(layer, N, enable_nested_tensor=False)
        self.norm, self.head = nn.LayerNorm(D), nn.Linear(D, V, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.tok(x) + self.pos(torch.arange(x.shape[1], device=x.device))
        mask = nn.Transformer.generate_square_subsequent_mask(x.shape[1], x.device)
        return self.head(self.norm(self.layers(h, mask=mask, is_causal=True)))


class Block(nn.Module):
    """One nanoGPT block: pre-norm causal attention and a GELU MLP."""

    def __init__(self) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.mlp = nn.Sequential(nn.Linear(D, 4 * D), nn.GELU(), nn.Linear(4 * D, D))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(D, dim=2)
        q, k, v = (z.view(b, t, H, D // H).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, D))
        return x + self.mlp(self.ln2(x))


class NanoGPT(nn.Module):
    """A minimal nanoGPT-style GPT-2 small, the compiled reference."""

    def __init__(self) -> None:
        super().__init__()
        self.tok, self.pos = nn.Embedding(V, D), nn.Embedding(L, D)
        self.blocks = nn.ModuleList(Block() for _ in range(N))
        self.norm, self.head = nn.LayerNorm(D), nn.Linear(D, V, bias=False)
        self.head.weight = self.tok.weight

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.tok(x) + self.pos(torch.arange(x.shape[1], device=x.device))
        for block in self.blocks:
            h = block(h)
        return self.head(self.norm(h))


def book_model() -> nn.Module:
    config = DecoderOnlyConfig(
        vocab_size=V, d_model=D, h=H, d_ff=4 * D, N=N, max_len=L, dropout=0.0,
        norm_first=True, positional="learned", activation="gelu",
        share_embeddings=True,
    )  # fmt: skip
    return DecoderOnlyTransformer(config)


def step_of(model: nn.Module, x: torch.Tensor, y: torch.Tensor):
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)

    def step() -> None:
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = F.cross_entropy(model(x).flatten(0, 1).float(), y.flatten())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--no-compile", action="store_true")
    args = parser.parse_args()
    device = cuda_or_exit("bench_gpu_training")
    torch.manual_seed(0)
    x, y = torch.randint(0, V, (2, B, L), device=device)
    print(describe_device())
    with no_checks():
        ours, torch_layers = book_model().to(device), TorchLayers().to(device)
        n = sum(p.numel() for p in ours.parameters()) / 1e6
        print(f"GPT-2 small ({n:.0f} M parameters), B={B} L={L}, bf16, fused AdamW")
        runs = {"ours": step_of(ours, x, y), "torch": step_of(torch_layers, x, y)}
        ms = median_cuda_ms(runs, reps=args.reps)
        print(
            f"eager: ours {ms['ours']:.1f} ms, nn.TransformerEncoderLayer "
            f"{ms['torch']:.1f} ms, ratio {ms['ours'] / ms['torch']:.2f}"
        )
        if args.no_compile:
            return
        ours_c = torch.compile(book_model().to(device))
        nano_c = torch.compile(NanoGPT().to(device))
        runs = {"ours": step_of(ours_c, x, y), "nano": step_of(nano_c, x, y)}
        ms = median_cuda_ms(runs, reps=args.reps)
        print(
            f"compiled: ours {ms['ours']:.1f} ms, nanoGPT-style {ms['nano']:.1f} ms,"
            f" ratio {ms['ours'] / ms['nano']:.2f}"
        )


if __name__ == "__main__":
    main()
