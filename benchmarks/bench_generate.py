"""Time ``generate`` with and without the KV cache, at the book language model's size.

The model has the sizes of the book's character-level language model (the
language-model chapter): LLaMA-style, d_model=96, h=4, n_kv_heads=2, N=3,
d_ff=256, rotary positions, over the book's characters. Its weights are
untrained: the time of a step does not depend on them. From a prompt of 16
characters it writes 256 more, greedily, with ``use_cache=True`` and
``use_cache=False``; the runs are interleaved and the median of each is
reported, with the check that both wrote the same tokens. Target: the cache
at least 4 times faster.

``--size gpu`` times instead the model of ``bench_gpu_generate.py`` (8 layers,
d_model=512, h=8, n_kv_heads=2, d_ff=1376, V=1000) writing 496 tokens after
16, on the CPU: the comparison issue #21 quotes (6.3x before the cache was
preallocated). Target: at least 6 times faster. It takes minutes per repetition.

Run: ``python benchmarks/bench_generate.py [--size book|gpu] [--reps 5] [--threads 1]``.
This is a benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse

import torch

from bench_multihead import median_ms
from transformer import (
    CharCorpus,
    DecoderOnlyConfig,
    DecoderOnlyTransformer,
    book_chapters,
    generate,
)

# size: (new tokens, target speed-up)
SIZES = {"book": (256, 4.0), "gpu": (496, 6.0)}
PROMPT = 16


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reps", type=int, default=5, help="timed repetitions")
    parser.add_argument("--warmup", type=int, default=1, help="untimed repetitions")
    parser.add_argument("--threads", type=int, default=None, help="torch threads")
    parser.add_argument("--size", choices=SIZES, default="book", help="which model")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    new_tokens, target = SIZES[args.size]

    modern = dict(norm_first=True, norm="rms", activation="swiglu", positional="rope")
    torch.manual_seed(0)
    if args.size == "book":
        corpus = CharCorpus.from_text(list(book_chapters().values()))
        sizes = dict(vocab_size=corpus.vocab_size, d_model=96, h=4, N=3, d_ff=256)
        prompt = corpus.train[:PROMPT][None]  # (1, P)
        max_len = PROMPT + new_tokens
    else:
        sizes = dict(vocab_size=1000, d_model=512, h=8, N=8, d_ff=1376)
        prompt = torch.randint(0, 1000, (1, PROMPT))
        max_len = 1024
    config = DecoderOnlyConfig(
        **sizes, n_kv_heads=2, dropout=0.0, max_len=max_len, **modern
    )
    model = DecoderOnlyTransformer(config).eval()
    outputs = {}

    def run(use_cache: bool):
        def go() -> None:
            outputs[use_cache] = generate(
                model, prompt, new_tokens, use_cache=use_cache
            )

        return go

    median = median_ms(
        {"with the KV cache": run(True), "without": run(False)}, args.reps, args.warmup
    )
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, float32, CPU")
    print(
        f"{config.N} layers, d_model={config.d_model}, h={config.h}, "
        f"n_kv_heads={config.n_kv_heads}, V={config.vocab_size}; prompt {PROMPT}, "
        f"{new_tokens} new tokens, greedy; median of {args.reps}"
    )
    same = torch.equal(outputs[True], outputs[False])
    print(f"same tokens with and without the cache: {same}")
    for name, ms in median.items():
        print(f"  {name:<20} {ms:9.1f} ms")
    speedup = median["without"] / median["with the KV cache"]
    print(f"speed-up with the cache: {speedup:.1f}x  (target >= {target})")


if __name__ == "__main__":
    main()
