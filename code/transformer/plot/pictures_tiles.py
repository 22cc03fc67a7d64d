"""Pictures of tiled attention: which tiles a causal mask lets through, and
which program of a Triton launch grid owns which rows.

:func:`causal_tiles` classifies every (query block, key block) tile under the
causal mask; :func:`tile_grid` draws that classification.
:func:`launch_grid_figure` draws the program ids that a kernel wrote into a
tensor: the launch grid on the left, the rows each program owns on the right.
"""

from __future__ import annotations

import math

import matplotlib.pyplot as plt
import torch
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch

from .style import MASK_COLORS

SKIPPED, PARTLY_MASKED, COMPUTED = 0, 1, 2
"""The three states of a tile in :func:`causal_tiles`."""

TILE_NAMES = ("skipped", "computed, partly masked", "computed in full")
"""The name of each state, indexed by the state."""

TILE_COLORS = (MASK_COLORS[0], "#90cdf4", MASK_COLORS[1])
"""Grey for skipped tiles, light blue for partly masked ones, blue for full ones."""


def causal_tiles(L: int, S: int, block_size: int) -> torch.Tensor:
    """Classify every tile of an ``(L, S)`` causal mask cut into square blocks.

    The mask is PyTorch's ``is_causal`` one, aligned at the top left: query
    ``i`` may attend to key ``j`` when ``j <= i``. A tile with no allowed entry
    is skipped by a causal tiled loop; a tile with some allowed entries is
    computed and then partly masked; a tile of allowed entries only is
    computed in full.

    Args:
        L: Number of queries.
        S: Number of keys.
        block_size: Rows of queries and of keys per tile.

    Returns:
        One of ``SKIPPED`` (0), ``PARTLY_MASKED`` (1), ``COMPUTED`` (2) per tile.

    Shape:
        - output: ``(ceil(L / block_size), ceil(S / block_size))``

    Raises:
        ValueError: If a size is not positive.
    """
    if min(L, S, block_size) < 1:
        raise ValueError(
            f"L, S and block_size must be positive, got {L}, {S}, {block_size}"
        )
    allowed = torch.ones(L, S, dtype=torch.bool).tril()
    rows, cols = math.ceil(L / block_size), math.ceil(S / block_size)
    states = torch.empty(rows, cols, dtype=torch.long)
    for i in range(rows):
        for j in range(cols):
            tile = allowed[i * block_size : (i + 1) * block_size,
                           j * block_size : (j + 1) * block_size]  # fmt: skip
            if not tile.any():
                states[i, j] = SKIPPED
            elif tile.all():
                states[i, j] = COMPUTED
            else:
                states[i, j] = PARTLY_MASKED
    return states


def tile_grid(
    states: torch.Tensor,
    *,
    block_size: int,
    ax: Axes | None = None,
    title: str | None = None,
) -> Axes:
    """Draw the tiles of :func:`causal_tiles`: query blocks down, key blocks across.

    Each tile is coloured by its state and the legend counts the tiles of each
    state; the title says how many tiles are computed, unless one is given.

    Args:
        states: The output of :func:`causal_tiles`.
        block_size: Rows per block, for the tick labels (first row of a block).
        ax: Axes to draw on; a new figure is made when ``None``.
        title: The title; by default, the number of tiles computed.

    Returns:
        The axes drawn on.

    Shape:
        - states: ``(query blocks, key blocks)``
    """
    if ax is None:
        _, ax = plt.subplots(figsize=(5.6, 4.2))
    counts = [int((states == s).sum()) for s in range(len(TILE_NAMES))]
    ax.imshow(states.numpy(), cmap=ListedColormap(TILE_COLORS), vmin=0, vmax=2)
    rows, cols = states.shape
    ax.set_xticks(range(cols), [str(j * block_size) for j in range(cols)])
    ax.set_yticks(range(rows), [str(i * block_size) for i in range(rows)])
    ax.set_xticks([j - 0.5 for j in range(1, cols)], minor=True)
    ax.set_yticks([i - 0.5 for i in range(1, rows)], minor=True)
    ax.grid(which="minor", color="white", linewidth=2)
    ax.tick_params(which="minor", length=0)
    if title is None:
        computed = counts[PARTLY_MASKED] + counts[COMPUTED]
        title = f"A causal mask in tiles: {computed} of {states.numel()} computed"
    ax.set(
        xlabel="key block (first key)",
        ylabel="query block (first query)",
        title=title,
    )
    # The mask's edge, key = query, in tile units: it cuts the partly masked tiles.
    edge = min(rows, cols) - 0.5
    (line,) = ax.plot([-0.5, edge], [-0.5, edge], color="black", linewidth=1)
    line.set_label("the mask's edge: key = query")
    handles = [
        Patch(color=TILE_COLORS[s], label=f"{TILE_NAMES[s]}: {counts[s]}")
        for s in (COMPUTED, PARTLY_MASKED, SKIPPED)
    ]
    handles.append(line)
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return ax


def launch_grid_figure(program_ids: torch.Tensor, *, block_size: int) -> Figure:
    """Draw a launch grid and the rows of a tensor that each program wrote.

    ``program_ids[bh, r]`` is the id of the program that wrote row ``r`` of
    the ``(batch, head)`` pair ``bh``, as ``pid0 * grid1 + pid1``, or ``-1``
    where no program wrote. Left, the grid of programs, ``pid0`` across and
    ``pid1`` down; right, the rows of every ``(batch, head)``, one column
    each, coloured by the program that wrote them, down to the next whole
    block; the rows past ``L``, which no program may write, stay white
    below a dashed line.

    Args:
        program_ids: What a kernel wrote, one id per row.
        block_size: Rows per program, to size the grid.

    Returns:
        The figure, with the two axes.

    Shape:
        - program_ids: ``(B·h, L)``
    """
    n_bh, L = program_ids.shape
    grid1 = math.ceil(L / block_size)
    n = n_bh * grid1
    colors = ListedColormap(plt.get_cmap("tab20")(range(n)))
    fig, (left, right) = plt.subplots(1, 2, figsize=(9.5, 4.4), width_ratios=(1, 1.3))
    # (grid1, n_bh): the id of program (pid0, pid1) is pid0 * grid1 + pid1
    ids = torch.arange(n).view(n_bh, grid1).T
    left.imshow(ids.numpy(), cmap=colors, vmin=0, vmax=n - 1)
    for pid1 in range(grid1):
        for pid0 in range(n_bh):
            left.text(pid0, pid1, f"({pid0}, {pid1})", ha="center", va="center")
    left.set_xticks(range(n_bh))
    left.set_yticks(range(grid1))
    left.set(
        xlabel="tl.program_id(0): batch · head",
        ylabel="tl.program_id(1): query block",
        title=f"The launch grid: {n_bh} × {grid1} programs",
    )
    # (grid1 · block_size, B·h): one cell per row of q and of the output,
    # padded with NaN (white) to whole blocks: the rows that the mask skips
    padded = torch.full((grid1 * block_size, n_bh), float("nan"))
    padded[:L] = program_ids.T.float().masked_fill(program_ids.T < 0, float("nan"))
    right.imshow(padded.numpy(), cmap=colors, vmin=0, vmax=n - 1, aspect="auto")
    for program in range(n):
        # The rows this program wrote, read from the data, not from the formula.
        bh, row = (program_ids == program).nonzero(as_tuple=True)
        if len(row):
            pid0, pid1 = divmod(program, grid1)
            label = f"({pid0}, {pid1}): rows {row.min()}-{row.max()}"
            x, y = bh.float().mean().item(), row.float().mean().item()
            right.text(x, y, label, ha="center", va="center")
    for pid0 in range(n_bh - 1):
        right.axvline(pid0 + 0.5, color="white", linewidth=3)
    if grid1 * block_size > L:
        right.axhline(L - 0.5, color="black", linewidth=1, linestyle="--")
        last = grid1 * block_size - 1
        note = f"rows {L}-{last}: masked, not written"
        right.text((n_bh - 1) / 2, (L + last) / 2, note, ha="center", va="center")
    right.set_xticks(range(n_bh))
    right.set(
        xlabel="batch · head",
        ylabel=f"row written (L = {L})",
        title="The rows each program wrote",
    )
    fig.tight_layout()
    return fig
