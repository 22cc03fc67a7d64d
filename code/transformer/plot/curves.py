"""Curves: training histories, per-position accuracy and any family of lines."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib as mpl
import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes


def _running_mean(
    steps: Sequence[int], values: Sequence[float], window: int
) -> tuple[list[float], list[float]]:
    """Average each value with the ``window - 1`` values before it (fewer at the start).

    Each mean is drawn at the middle of the steps it averages, so that a
    smoothed curve does not lag behind the raw one.
    """
    xs, ys, total = [], [], 0.0
    for i, value in enumerate(values):
        total += value - (values[i - window] if i >= window else 0.0)
        n = min(i + 1, window)
        xs.append((steps[i] + steps[i - n + 1]) / 2)
        ys.append(total / n)
    return xs, ys


def training_curves(
    history: object,
    *,
    axes: Sequence[Axes] | None = None,
    title: str = "",
    smooth: int = 10,
) -> Sequence[Axes]:
    """Draw loss and token accuracy against step, training batches beside held-out data.

    Args:
        history: A :class:`~transformer.training.train.History` (or anything with its
            ``step``, ``train_loss``, ``train_acc``, ``eval_step``,
            ``eval_loss`` and ``eval_acc`` lists).
        axes: Two axes, for the loss and the accuracy; a new figure when ``None``.
        title: Prefix of both panel titles, e.g. the task's name.
        smooth: Window of the running mean drawn over the noisy per-step
            training values; ``1`` draws them raw.

    Returns:
        The two axes.
    """
    if axes is None:
        _, axes = plt.subplots(1, 2, figsize=(9, 3.4))
    ax_loss, ax_acc = axes
    prefix = f"{title}: " if title else ""
    for ax, train, held_out in [
        (ax_loss, history.train_loss, history.eval_loss),
        (ax_acc, history.train_acc, history.eval_acc),
    ]:
        ax.plot(
            *_running_mean(history.step, train, smooth),
            lw=1.2,
            label=f"training batches (mean of {smooth})"
            if smooth > 1
            else "training batches",
        )
        ax.plot(history.eval_step, held_out, "o-", ms=3, lw=1.2, label="held-out")
        ax.set_xlabel("step")
        ax.legend()
    ax_loss.set(
        yscale="log",
        ylabel="cross-entropy (log scale)",
        title=f"{prefix}loss falls on held-out data too",
    )
    ax_acc.set(
        ylim=(0.0, 1.02), ylabel="token accuracy", title=f"{prefix}token accuracy"
    )
    return axes


def compare_curves(
    histories: dict[str, object],
    *,
    key: str = "train_loss",
    ax: Axes | None = None,
    title: str = "Loss of each run",
    smooth: int = 10,
    log: bool = True,
) -> Axes:
    """Draw one curve of several training runs on one axes, one line per run.

    Args:
        histories: Runs by label, each a :class:`~transformer.training.train.History`.
        key: Which curve: ``"train_loss"``, ``"train_acc"`` (per step) or
            ``"eval_loss"``, ``"eval_acc"`` (per evaluation).
        ax: Axes to draw on; a new figure is made when ``None``.
        title: What the reader should look for.
        smooth: Running-mean window for per-step curves.
        log: Logarithmic y axis.

    Returns:
        The axes drawn on.

    Raises:
        ValueError: If ``key`` is not one of the four curves.
    """
    if key not in ("train_loss", "train_acc", "eval_loss", "eval_acc"):
        raise ValueError(
            "key must be 'train_loss', 'train_acc', 'eval_loss' or 'eval_acc', "
            f"got {key!r}"
        )
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.6))
    for label, history in histories.items():
        values = getattr(history, key)
        if key.startswith("train"):
            ax.plot(*_running_mean(history.step, values, smooth), lw=1.2, label=label)
        else:
            ax.plot(history.eval_step, values, "o-", ms=3, lw=1.2, label=label)
    kind = "held-out" if key.startswith("eval") else "training"
    what = "cross-entropy" if key.endswith("loss") else "token accuracy"
    ax.set(
        xlabel="step",
        ylabel=f"{kind} {what}" + (" (log scale)" if log else ""),
        title=title,
    )
    if log:
        ax.set_yscale("log")
    ax.legend()
    return ax


def position_accuracy_plot(
    accuracy: dict[str, torch.Tensor],
    *,
    ax: Axes | None = None,
    title: str = "Accuracy at each position",
    xlabel: str = "target position",
    chance: float | None = None,
) -> Axes:
    """Draw the accuracy at each position of several runs, one line per run.

    Args:
        accuracy: Per-position accuracies by label, each of shape ``(L,)``,
            e.g. from :func:`~transformer.training.metrics.position_accuracy`.
        ax: Axes to draw on; a new figure is made when ``None``.
        title: What the reader should look for.
        xlabel: Label of the position axis.
        chance: Draw a dotted line at this accuracy, the score of guessing.

    Returns:
        The axes drawn on.
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 3.6))
    for label, values in accuracy.items():
        values = torch.as_tensor(values).detach().cpu().float()
        ax.plot(range(len(values)), values.numpy(), "o-", ms=4, lw=1.2, label=label)
    if chance is not None:
        ax.axhline(chance, color="grey", lw=0.8, ls=":", label=f"chance ({chance:.2f})")
    ax.set(
        xlabel=xlabel,
        ylabel="token accuracy (held-out)",
        ylim=(-0.02, 1.05),
        title=title,
    )
    ax.xaxis.set_major_locator(mpl.ticker.MaxNLocator(integer=True))
    ax.legend()
    return ax


def line_plot(
    x: Sequence[float] | torch.Tensor,
    curves: dict[str, Sequence[float] | torch.Tensor],
    *,
    ax: Axes | None = None,
    title: str = "",
    xlabel: str = "x",
    ylabel: str = "y",
    logy: bool = False,
    marker: str = "",
    colors: dict[str, str] | None = None,
    bands: dict[str, tuple[Sequence[float] | torch.Tensor, ...]] | None = None,
) -> Axes:
    """Draw one or more curves over a shared x axis, with a legend naming each.

    Args:
        x: The shared x values.
        curves: The y values of each curve, by label; each as long as ``x``.
        ax: Axes to draw on; a new figure is made when ``None``.
        title: What the reader should look for.
        xlabel: Label of the x axis.
        ylabel: Label of the y axis.
        logy: Logarithmic y axis.
        marker: Matplotlib marker drawn at each point, e.g. ``"o"``; none by default.
        colors: A colour for some of the curves, by label; the others take
            matplotlib's next colour.
        bands: For some curves, by label, a ``(low, high)`` pair of values per
            x, shaded in the curve's colour (e.g. the range over seeds).

    Returns:
        The axes drawn on.

    Raises:
        ValueError: If ``curves`` is empty, or a curve's or a band's length
            differs from ``x``'s.
    """
    xs = torch.as_tensor(x).detach().cpu().double()
    if not curves:
        raise ValueError("curves must hold at least one curve, got none")
    if ax is None:
        _, ax = plt.subplots()
    for label, y in curves.items():
        ys = torch.as_tensor(y).detach().cpu().double()
        if ys.shape != xs.shape:
            raise ValueError(
                f"curve {label!r} must have one value per x, shape {tuple(xs.shape)}, "
                f"got shape {tuple(ys.shape)}"
            )
        (line,) = ax.plot(
            xs.numpy(),
            ys.numpy(),
            marker=marker,
            ms=3,
            lw=1.5,
            label=label,
            color=(colors or {}).get(label),
        )
        if bands and label in bands:
            low, high = (
                torch.as_tensor(b).detach().cpu().double() for b in bands[label]
            )
            if low.shape != xs.shape or high.shape != xs.shape:
                raise ValueError(
                    f"band {label!r} must have one (low, high) per x, shape "
                    f"{tuple(xs.shape)}, got shapes {tuple(low.shape)} and "
                    f"{tuple(high.shape)}"
                )
            ax.fill_between(
                xs.numpy(),
                low.numpy(),
                high.numpy(),
                color=line.get_color(),
                alpha=0.2,
                lw=0,
            )
    ax.set(xlabel=xlabel, ylabel=ylabel, title=title)
    if logy:
        ax.set_yscale("log")
    if len(curves) > 1:
        ax.legend()
    return ax
