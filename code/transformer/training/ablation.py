"""What each of Part II's changes buys: one language model, trained in variants.

The ablation chapter trains the character language model of
:mod:`~transformer.training.charlm` with the parts of 2017, with each of
Part II's four changes alone, and with all four together, at one budget and
several seeds. :func:`ablation_configs` builds the variants,
:func:`run_ablation` trains and measures them, :func:`summarise_ablation`
sets each variant against the 2017 model trained with the same seed, and
:func:`time_per_step` times a training step of each.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

import torch

from ..data.batches import LMBatch
from ..models.config import count_parameters
from ..models.decoder_config import DecoderOnlyConfig
from ..models.decoder_only import DecoderOnlyTransformer
from .charlm import CharCorpus, bits_per_char, next_char_loss, train_lm
from .timing import fastest_seconds
from .train import train_step

BASELINE = "2017"
"""The name of the variant with the paper's parts."""


def ablation_configs(
    base: DecoderOnlyConfig, *, n_kv_heads: int
) -> dict[str, DecoderOnlyConfig]:
    """Return the 2017 config, each of the four changes alone, and all four together.

    SwiGLU has three matrices where the paper's network has two, so its
    hidden width is ``2 * d_ff // 3``: the parameter count stays close to
    the paper's.

    Args:
        base: A config with the paper's parts: ``norm="layer"``,
            ``activation="relu"``, ``positional="sinusoidal"`` and
            ``n_kv_heads=None``. Where the norm sits (``norm_first``) is
            kept as given in every variant.
        n_kv_heads: Key/value heads of the grouped-query variants.

    Returns:
        Configs by name: ``"2017"``, ``"RMSNorm"``, ``"SwiGLU"``, ``"RoPE"``,
        ``"GQA"`` and ``"all four"``.

    Raises:
        ValueError: If ``base`` does not have the paper's parts.
    """
    _check_paper_parts(base)
    changes: dict[str, dict[str, object]] = {
        BASELINE: {},
        "RMSNorm": {"norm": "rms"},
        "SwiGLU": {"activation": "swiglu", "d_ff": 2 * base.d_ff // 3},
        "RoPE": {"positional": "rope"},
        "GQA": {"n_kv_heads": n_kv_heads},
    }
    changes["all four"] = {k: v for c in list(changes.values()) for k, v in c.items()}
    return {name: replace(base, **change) for name, change in changes.items()}


def _check_paper_parts(base: DecoderOnlyConfig) -> None:
    """Raise a ValueError unless ``base`` has the paper's parts."""
    paper = {"norm": "layer", "activation": "relu", "positional": "sinusoidal"}
    given = {name: getattr(base, name) for name in paper}
    if given != paper or base.n_kv_heads is not None:
        raise ValueError(
            f"base must have the paper's parts {paper} and n_kv_heads=None, got "
            f"{given} and n_kv_heads={base.n_kv_heads}"
        )


@dataclass(frozen=True)
class AblationRun:
    """One variant trained with one seed.

    Attributes:
        variant: The variant's name.
        seed: Seeds the initial weights and the order of the training windows.
        parameters: The model's parameter count.
        bpc: Bits per character on the held-out text after training.
        seconds_per_step: Wall-clock time of training divided by the steps.
        train_loss: The training loss of every step, in nats, as
            :func:`~transformer.training.charlm.train_lm` logged it.
        model: The trained model, for measurements beyond the score.
    """

    variant: str
    seed: int
    parameters: int
    bpc: float
    seconds_per_step: float
    train_loss: tuple[float, ...] = ()
    model: DecoderOnlyTransformer | None = field(
        default=None, repr=False, compare=False
    )


def run_ablation(
    configs: Mapping[str, DecoderOnlyConfig],
    corpus: CharCorpus,
    *,
    seeds: Sequence[int],
    steps: int,
    batch_size: int,
    block_size: int,
    lr: float,
    held_out: torch.Tensor | None = None,
) -> list[AblationRun]:
    """Train every variant with every seed at one budget; measure each.

    With one seed, every variant starts from weights drawn by the same
    generator state and sees the same windows in the same order;
    :func:`summarise_ablation` compares the variants within a seed. Each run
    is :func:`~transformer.training.charlm.train_lm` with one validation
    measurement, at the end, and its clock time is kept; for comparing
    speeds, :func:`time_per_step` is steadier.

    Args:
        configs: The variants, e.g. from :func:`ablation_configs`.
        corpus: The text.
        seeds: One run per variant and seed.
        steps: Optimiser steps of every run.
        batch_size: Windows per step.
        block_size: Characters per window.
        lr: Peak learning rate.
        held_out: The ids on which bits per character are measured;
            ``None`` means ``corpus.val``.

    Returns:
        One :class:`AblationRun` per seed and variant, seed by seed.
    """
    held_out = corpus.val if held_out is None else held_out
    budget = dict(steps=steps, batch_size=batch_size, block_size=block_size, lr=lr)
    runs = []
    for seed in seeds:
        for name, config in configs.items():
            torch.manual_seed(seed)
            model = DecoderOnlyTransformer(config)
            start = time.perf_counter()
            history = train_lm(
                model, corpus, **budget, eval_every=steps, eval_batches=1, seed=seed
            )
            seconds = (time.perf_counter() - start) / steps
            bpc = bits_per_char(model, held_out, block_size)
            params = count_parameters(model)
            losses = tuple(history.train_loss)
            runs.append(AblationRun(name, seed, params, bpc, seconds, losses, model))
    return runs


@dataclass(frozen=True)
class VariantSummary:
    """One variant over every seed, set against the 2017 model of the same seed.

    Attributes:
        variant: The variant's name.
        parameters: Its parameter count.
        bpc: Its bits per character, one per seed.
        gain: The 2017 model's bits per character minus this variant's, one
            per seed (positive: the change helped).
    """

    variant: str
    parameters: int
    bpc: tuple[float, ...]
    gain: tuple[float, ...]

    @property
    def mean_bpc(self) -> float:
        """The mean bits per character over the seeds."""
        return statistics.fmean(self.bpc)

    @property
    def mean_gain(self) -> float:
        """The mean gain over the seeds."""
        return statistics.fmean(self.gain)

    @property
    def spread(self) -> float:
        """How far luck alone moves this variant (largest minus smallest bpc)."""
        return max(self.bpc) - min(self.bpc)

    def verdict(self, yardstick: float, *, decimals: int | None = None) -> str:
        """Return ``"better"``, ``"worse"`` or ``"unclear"``: the one rule.

        A change is better when its gain is larger than ``yardstick`` in
        every seed, worse when it is smaller than ``-yardstick`` in every
        seed, and unclear otherwise: somewhere luck alone could explain it.

        Args:
            yardstick: How far luck alone moves a model, e.g. the largest
                ``spread`` of any variant.
            decimals: If given, compare the gains and the yardstick as
                printed, rounded to this many decimals, so that a reader can
                check the verdict.
        """
        gains = self.gain
        if decimals is not None:
            gains = tuple(round(g, decimals) for g in gains)
            yardstick = round(yardstick, decimals)
        if all(g > yardstick for g in gains):
            return "better"
        if all(g < -yardstick for g in gains):
            return "worse"
        return "unclear"


def summarise_ablation(
    runs: Sequence[AblationRun], *, decimals: int | None = None
) -> dict[str, VariantSummary]:
    """Set each variant's runs against the 2017 runs of the same seeds.

    Args:
        runs: The runs of :func:`run_ablation`, including the ``"2017"`` ones.
        decimals: If given, round each run's bits per character to this many
            decimals first, as a page prints them, so that every gain and
            spread is a difference of printed numbers.

    Returns:
        One :class:`VariantSummary` per variant, in the order of ``runs``.

    Raises:
        ValueError: If a seed has no ``"2017"`` run.
    """
    if decimals is not None:
        runs = [replace(r, bpc=round(r.bpc, decimals)) for r in runs]
    base = {r.seed: r for r in runs if r.variant == BASELINE}
    missing = {r.seed for r in runs} - set(base)
    if missing:
        raise ValueError(f"runs must hold a {BASELINE!r} run for every seed, "
                         f"none for seeds {sorted(missing)}")  # fmt: skip
    by_variant: dict[str, list[AblationRun]] = {}
    for r in runs:
        by_variant.setdefault(r.variant, []).append(r)
    return {
        name: VariantSummary(
            variant=name,
            parameters=rs[0].parameters,
            bpc=tuple(r.bpc for r in rs),
            gain=tuple(base[r.seed].bpc - r.bpc for r in rs),
        )
        for name, rs in by_variant.items()
    }


def time_per_step(
    configs: Mapping[str, DecoderOnlyConfig],
    corpus: CharCorpus,
    *,
    batch_size: int,
    block_size: int,
    rounds: int = 5,
    steps: int = 5,
) -> dict[str, float]:
    """Return each variant's time per training step: the fastest of several rounds.

    A busy machine slows some steps and not others. So the variants take
    turns, ``rounds`` times ``steps`` training steps each, on one batch, and
    each keeps its fastest round: the time its step takes when nothing else
    gets in the way. A step is what
    :func:`~transformer.training.charlm.train_lm` runs: forward, loss,
    backward, clipping and an AdamW update.

    Args:
        configs: The variants.
        corpus: The text the batch is drawn from.
        batch_size: Windows per step.
        block_size: Characters per window.
        rounds: Turns each variant takes.
        steps: Steps per turn.

    Returns:
        Seconds per step, by variant.
    """
    x, y = corpus.batch(
        "train", batch_size, block_size, torch.Generator().manual_seed(0)
    )
    models = {name: DecoderOnlyTransformer(config) for name, config in configs.items()}
    optimizers = {name: torch.optim.AdamW(m.parameters()) for name, m in models.items()}

    def turn(name: str) -> Callable[[], None]:
        def run() -> None:
            for _ in range(steps):
                batch = LMBatch(x, None, y)
                train_step(
                    models[name], optimizers[name], batch, lr=1e-3,
                    loss_fn=next_char_loss,
                )  # fmt: skip

        return run

    seconds = fastest_seconds({name: turn(name) for name in models}, rounds=rounds)
    return {name: s / steps for name, s in seconds.items()}
