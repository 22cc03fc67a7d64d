import math

import pytest
import torch

from transformer import (
    CharCorpus,
    DecoderOnlyConfig,
    ablation_configs,
    bits_per_char,
    count_parameters,
    run_ablation,
    summarise_ablation,
    time_per_step,
)
from transformer.models.decoder_only import DecoderOnlyTransformer
from transformer.training.ablation import AblationRun

TEXT = ["the cat sat on the mat. " * 20, "a dog ran in the fog. " * 20]


def base_config(vocab_size: int = 20) -> DecoderOnlyConfig:
    return DecoderOnlyConfig(
        vocab_size=vocab_size, d_model=16, h=4, N=1, d_ff=48, max_len=16,
        dropout=0.0, norm_first=True,
    )  # fmt: skip


def test_ablation_configs_change_one_part_each_and_all_four_together():
    configs = ablation_configs(base_config(), n_kv_heads=2)
    assert list(configs) == ["2017", "RMSNorm", "SwiGLU", "RoPE", "GQA", "all four"]
    base = configs["2017"]
    assert configs["RMSNorm"].norm == "rms" and configs["RMSNorm"].activation == "relu"
    assert configs["SwiGLU"].activation == "swiglu" and configs["SwiGLU"].d_ff == 32
    assert configs["RoPE"].positional == "rope" and configs["RoPE"].norm == "layer"
    assert configs["GQA"].n_kv_heads == 2 and configs["GQA"].positional == "sinusoidal"
    every = configs["all four"]
    assert (every.norm, every.activation, every.positional, every.n_kv_heads) == (
        "rms", "swiglu", "rope", 2,
    )  # fmt: skip
    assert all(c.norm_first == base.norm_first for c in configs.values())


def test_ablation_configs_keep_swiglu_parameters_close_to_the_paper():
    configs = ablation_configs(base_config(), n_kv_heads=2)
    counts = {
        name: count_parameters(DecoderOnlyTransformer(config))
        for name, config in configs.items()
    }
    assert abs(counts["SwiGLU"] - counts["2017"]) / counts["2017"] < 0.03
    assert counts["GQA"] < counts["2017"]


def test_ablation_configs_reject_a_base_that_is_not_the_paper():
    with pytest.raises(ValueError, match="paper's parts"):
        ablation_configs(
            DecoderOnlyConfig(vocab_size=20, d_model=16, h=4, N=1, d_ff=48, norm="rms"),
            n_kv_heads=2,
        )


def test_run_ablation_is_deterministic_per_seed_and_measures_every_run():
    corpus = CharCorpus.from_text(TEXT)
    configs = ablation_configs(base_config(corpus.vocab_size), n_kv_heads=1)
    configs = {name: configs[name] for name in ("2017", "RoPE")}
    kwargs = dict(steps=4, batch_size=4, block_size=16, lr=1e-2)
    runs = run_ablation(configs, corpus, seeds=[0, 1], **kwargs)
    assert [(r.variant, r.seed) for r in runs] == [
        ("2017", 0), ("RoPE", 0), ("2017", 1), ("RoPE", 1),
    ]  # fmt: skip
    assert all(r.seconds_per_step > 0 and 0 < r.bpc < 10 for r in runs)
    # every step's training loss is kept, in nats, from near log V downwards
    assert all(len(r.train_loss) == 4 for r in runs)
    assert all(0 < r.train_loss[0] < 2 * math.log(corpus.vocab_size) for r in runs)
    # each run keeps its trained model, which scores what the run recorded
    assert all(isinstance(r.model, DecoderOnlyTransformer) for r in runs)
    assert bits_per_char(runs[3].model, corpus.val, 16) == runs[3].bpc
    again = run_ablation({"RoPE": configs["RoPE"]}, corpus, seeds=[1], **kwargs)
    assert again[0].bpc == runs[3].bpc
    assert again[0].train_loss == runs[3].train_loss
    assert runs[0].bpc != runs[2].bpc


def test_summarise_ablation_pairs_each_variant_with_the_baseline_of_its_seed():
    runs = [
        AblationRun("2017", 0, 100, 4.0, 1.0),
        AblationRun("RoPE", 0, 90, 3.5, 1.5),
        AblationRun("2017", 1, 100, 3.0, 2.0),
        AblationRun("RoPE", 1, 90, 3.2, 2.0),
    ]
    summary = summarise_ablation(runs)
    rope = summary["RoPE"]
    assert rope.bpc == (3.5, 3.2) and rope.parameters == 90
    assert rope.gain == pytest.approx((0.5, -0.2))
    assert rope.mean_gain == pytest.approx(0.15)
    assert rope.verdict(0.0) == "unclear"  # one seed gains, the other loses
    assert summary["2017"].gain == (0.0, 0.0)


def two_seeds(**bpc):
    """Runs for seeds 0 and 1: the 2017 model at 4.0, each named variant at bpc."""
    runs = [AblationRun("2017", s, 1, 4.0, 1.0) for s in (0, 1)]
    for name, pair in bpc.items():
        runs += [AblationRun(name, s, 1, b, 1.0) for s, b in enumerate(pair)]
    return runs


def test_a_verdict_needs_every_seed_beyond_the_yardstick_on_one_side():
    summary = summarise_ablation(two_seeds(A=(3.9, 3.8), B=(4.1, 4.2), M=(3.5, 4.5)))
    a, b, m = summary["A"], summary["B"], summary["M"]
    # A gains 0.1 and 0.2; B loses 0.1 and 0.2
    assert (a.verdict(0.05), b.verdict(0.05)) == ("better", "worse")
    # against 0.15, A's smaller gain and B's smaller loss are within the noise
    assert (a.verdict(0.15), b.verdict(0.15)) == ("unclear", "unclear")
    # M gains 0.5 in one seed and loses 0.5 in the other: never a verdict
    assert m.verdict(0.01) == "unclear"


def test_a_verdict_as_printed_compares_the_rounded_numbers():
    a = summarise_ablation(two_seeds(A=(3.9, 3.8)))["A"]
    # the smallest gain 0.1 beats 0.09, but not as printed to 1 decimal (0.1 = 0.1)
    assert a.verdict(0.09) == "better" and a.verdict(0.09, decimals=1) == "unclear"
    assert a.verdict(0.04, decimals=1) == "better"


def test_a_variants_spread_is_the_range_of_its_seeds():
    summary = summarise_ablation(two_seeds(A=(3.9, 3.75)))
    assert summary["A"].spread == pytest.approx(0.15)
    # the yardstick of the book: the largest spread of any variant
    assert max(s.spread for s in summary.values()) == pytest.approx(0.15)


def test_summarise_ablation_needs_a_baseline_for_every_seed():
    with pytest.raises(ValueError, match="seeds \\[1\\]"):
        summarise_ablation(
            [AblationRun("2017", 0, 1, 4.0, 1.0), AblationRun("A", 1, 1, 3.0, 1.0)]
        )


def test_run_ablation_measures_on_the_held_out_ids_given():
    corpus = CharCorpus.from_text(TEXT)
    configs = {"2017": base_config(corpus.vocab_size)}
    kwargs = dict(seeds=[0], steps=2, batch_size=4, block_size=16, lr=1e-2)
    whole = run_ablation(configs, corpus, **kwargs)[0]
    part = run_ablation(configs, corpus, held_out=corpus.val[:40], **kwargs)[0]
    assert whole.bpc != part.bpc
    assert torch.isfinite(torch.tensor(part.bpc))


def test_time_per_step_times_every_variant():
    corpus = CharCorpus.from_text(TEXT)
    configs = ablation_configs(base_config(corpus.vocab_size), n_kv_heads=2)
    seconds = time_per_step(
        configs, corpus, batch_size=2, block_size=8, rounds=2, steps=1
    )
    assert list(seconds) == list(configs)
    assert all(0 < s < float("inf") for s in seconds.values())


def test_summarise_ablation_can_work_with_the_numbers_as_printed():
    runs = two_seeds(A=(3.8994, 3.8006))
    exact = summarise_ablation(runs)["A"]
    printed = summarise_ablation(runs, decimals=2)["A"]
    assert exact.gain == pytest.approx((0.1006, 0.1994))
    # 3.8994 prints as 3.90 and 3.8006 as 3.80: the gains are 0.1 and 0.2
    assert printed.bpc == (3.9, 3.8) and printed.gain == pytest.approx((0.1, 0.2))
