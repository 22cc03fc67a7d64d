"""Pictures of sampling: which next tokens survive a top-k and a top-p cut.

One figure for the language-model chapter: a next-token distribution drawn as
bars, most likely token first, each bar coloured by the cuts it survives.
:func:`sampling_cuts` computes the two cuts by the same rules as
:func:`~transformer.inference.generate.next_token`, and the tests check that
``next_token`` never draws a token the picture shows as cut.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.patches import Patch

from ..checks.tensors import check_tensor

CUT_COLORS = {
    "kept by both": "#2b6cb0",
    "kept by top-k only": "#90cdf4",
    "kept by top-p only": "#f6ad55",
    "cut by both": "#d9d9d9",
}
"""Bar colours of :func:`sampling_cut_plot`, by what a token survives."""

SHOWN_AS = {" ": "␣", "\n": "↵", "\t": "⇥"}
"""How :func:`token_label` shows the characters that print as nothing."""


def token_label(token: str) -> str:
    """Return a visible label for a token: a space is ``␣``, a newline ``↵``.

    Args:
        token: The token's text.

    Returns:
        The text with each invisible character replaced by its symbol.
    """
    return "".join(SHOWN_AS.get(c, c) for c in token)


def _survives(by_k: torch.Tensor, by_p: torch.Tensor) -> str:
    """Name what a token survives, as a key of ``CUT_COLORS``."""
    if by_k and by_p:
        return "kept by both"
    if by_k:
        return "kept by top-k only"
    return "kept by top-p only" if by_p else "cut by both"


def sampling_cuts(
    probs: torch.Tensor, *, top_k: int, top_p: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Return which tokens a top-k cut and a top-p cut keep.

    Top-k keeps every token whose probability is at least the ``top_k``-th
    largest. Top-p keeps the most likely tokens, in order, until the ones
    already kept reach ``top_p``: a token is dropped when the tokens more
    likely than it add up to ``top_p`` or more.

    Args:
        probs: One next-token distribution.
        top_k: How many of the most likely tokens top-k keeps.
        top_p: The probability mass top-p keeps, in ``(0, 1]``.

    Returns:
        Two boolean tensors, ``True`` where top-k and where top-p keep a token.

    Shape:
        - probs: ``(V,)``
        - output: ``(V,)`` each

    Raises:
        ValueError: If ``probs`` is not a vector or a setting is out of range.
    """
    check_tensor("probs", probs, ndim=1, expected="(V,)")
    if not 1 <= top_k <= len(probs):
        raise ValueError(f"top_k must be in [1, {len(probs)}], got {top_k}")
    if not 0 < top_p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}")
    probs = probs.detach().float()
    kth = probs.topk(top_k).values[-1]
    kept_k = probs >= kth
    sorted_probs, order = probs.sort(descending=True)
    sorted_keep = sorted_probs.cumsum(0) - sorted_probs < top_p
    kept_p = torch.zeros_like(kept_k).scatter(0, order, sorted_keep)
    return kept_k, kept_p


def sampling_cut_plot(
    probs: torch.Tensor,
    labels: Sequence[str],
    *,
    top_k: int,
    top_p: float,
    n_shown: int = 16,
    ax: Axes | None = None,
    title: str = "",
    unit: str = "tokens",
) -> Axes:
    """Draw the most likely next tokens as bars, coloured by the cuts they survive.

    The bars are sorted from the most likely token down. A dashed line marks
    where top-k stops and a dotted line where top-p stops, and each bar's
    colour says whether top-k, top-p, both or neither keep its token.

    Args:
        probs: One next-token distribution.
        labels: The text of every token, in vocabulary order.
        top_k: How many of the most likely tokens top-k keeps.
        top_p: The probability mass top-p keeps, in ``(0, 1]``.
        n_shown: How many of the most likely tokens to draw.
        ax: The axes to draw on; a new figure when ``None``.
        title: The title of the axes.
        unit: The word for the tokens in the x label, e.g. ``"characters"``.

    Returns:
        The axes, with one bar per shown token.

    Shape:
        - probs: ``(V,)``

    Raises:
        ValueError: If ``labels`` does not name every token, or as
            :func:`sampling_cuts`.
    """
    kept_k, kept_p = sampling_cuts(probs, top_k=top_k, top_p=top_p)
    if len(labels) != len(probs):
        raise ValueError(
            f"labels must name all {len(probs)} tokens, got {len(labels)} labels"
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.4))
    n_shown = min(n_shown, len(probs))
    values, order = probs.detach().float().sort(descending=True)
    order = order[:n_shown].tolist()
    colors = [CUT_COLORS[_survives(kept_k[i], kept_p[i])] for i in order]
    ax.bar(range(n_shown), values[:n_shown].tolist(), color=colors)
    ax.set_xticks(range(n_shown))
    ax.set_xticklabels([token_label(labels[i]) for i in order])
    handles = [Patch(color=c, label=n) for n, c in CUT_COLORS.items() if c in colors]
    for n_kept, style, name in [
        (int(kept_k.sum()), "--", f"top-k = {top_k} cuts here"),
        (int(kept_p.sum()), ":", f"top-p = {top_p:g} cuts here"),
    ]:
        if n_kept < n_shown:
            handles.append(
                ax.axvline(n_kept - 0.5, color="black", ls=style, lw=1.2, label=name)
            )
    ax.legend(handles=handles, loc="upper right", fontsize=8, frameon=True)
    ax.set(
        xlabel=f"the {n_shown} most likely next {unit}",
        ylabel="probability",
        ylim=(0.0, min(1.0, float(values[0]) * 1.5)),
        title=title,
    )
    return ax
