"""The pictures of the FlashAttention chapter: bytes moved by three ways of attending.

``traffic_figure`` draws, for several sequence lengths, how many bytes each
way of computing attention moves between a GPU's main memory and the chip:
bars side by side, one group per length, on a logarithmic scale, because the
counts grow with the square of the length.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure


def traffic_figure(
    lengths: Sequence[int],
    mib: Mapping[str, Sequence[float]],
    *,
    title: str = "Bytes moved between main memory and the chip",
) -> Figure:
    """Draw grouped bars: for each length, the MiB each method moves.

    Each bar is labelled with its value, to two decimals, so the picture can
    be read without the table it comes from.

    Args:
        lengths: The sequence lengths, one group of bars each.
        mib: For each method, in the order of the legend, its MiB at each
            length.
        title: The title.

    Returns:
        The figure, with one axes whose containers hold the bars, one
        container per method.

    Raises:
        ValueError: If a method has not one value per length, or a value is
            not positive (the scale is logarithmic).
    """
    for name, values in mib.items():
        if len(values) != len(lengths):
            raise ValueError(
                f"mib[{name!r}] must have one value per length ({len(lengths)}), "
                f"got {len(values)}"
            )
        if min(values) <= 0:
            raise ValueError(f"mib[{name!r}] must be positive, got {list(values)}")
    fig, ax = plt.subplots(figsize=(8.5, 4.2))
    x = np.arange(len(lengths))
    width = 0.8 / len(mib)
    for n, (name, values) in enumerate(mib.items()):
        bars = ax.bar(x + (n - (len(mib) - 1) / 2) * width, values, width, label=name)
        ax.bar_label(bars, labels=[f"{v:.2f}" for v in values], fontsize=8)
    ax.set_yscale("log")
    ax.set_xticks(x, [f"L = {L}" for L in lengths])
    ax.set(ylabel="MiB read and written", title=title)
    ax.legend(frameon=False, fontsize=9)
    fig.tight_layout()
    return fig
