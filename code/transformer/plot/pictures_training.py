"""Pictures of what a model reads while it trains and while it writes.

Two figures drawn as grids of token cells, from real token sequences:

- :func:`decoding_modes_figure`: the decoder's input at every step of one
  example, under teacher forcing (the correct target is fed in) and under
  free-running greedy decoding (the model's own tokens are fed back in).
- :func:`lm_layouts_figure`: one row of a decoder-only batch in each data
  layout, what the model reads at each position above what it must predict
  there, with the positions that carry no loss greyed out.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

GIVEN = "#cfe0f3"
"""Fill of a cell that holds a correct token handed to the model."""
OWN = "#fbd7a8"
"""Fill of a cell that holds the model's own token, where it is right."""
WRONG = "#f4a6a6"
"""Fill of a cell whose token is wrong."""
RIGHT = "#bfe3b4"
"""Fill of an output cell whose token is right."""
NO_LOSS = "#eeeeee"
"""Fill of a target cell that carries no loss."""
SCORED = "#9cc3e6"
"""Fill of a target cell that the loss scores."""


def _cell(
    ax: Axes, x: float, y: float, text: str, face: str, long: float = 8, **kw: object
) -> None:
    """Draw one token as a labelled square cell centred on ``(x, y)``.

    Tokens of up to three characters are written in 10 points, longer ones
    (``<bos>``) in ``long`` points: large enough to read when the page shrinks
    the figure, small enough to fit the cell.
    """
    ax.add_patch(
        Rectangle(
            (x - 0.45, y - 0.4),
            0.9,
            0.8,
            facecolor=face,
            edgecolor="grey",
            lw=0.6,
            **kw,
        )
    )
    size = 10 if len(text) <= 3 else long
    ax.text(x, y, text, ha="center", va="center", fontsize=size)


def _finish(fig: Figure, title: str, handles: list[Patch], *, bottom: float) -> None:
    """Put the title on top and the legend of cell colours in one row below."""
    fig.legend(handles=handles, loc="lower center", ncol=len(handles), fontsize=8)
    fig.suptitle(title)
    fig.tight_layout(rect=(0, bottom, 1, 1))


def _steps_panel(
    ax: Axes,
    inputs: Sequence[Sequence[str]],
    outputs: Sequence[str],
    target: Sequence[str],
    *,
    given: bool,
    title: str,
    width: int,
) -> None:
    """Draw one decoding mode: row ``t`` holds the input read at step ``t``.

    ``width`` is the number of steps drawn, the same in both panels.
    """
    for t, (row, out) in enumerate(zip(inputs, outputs)):
        for j, token in enumerate(row):
            right = j == 0 or (j - 1 < len(target) and token == target[j - 1])
            face = GIVEN if given or j == 0 else (OWN if right else WRONG)
            _cell(ax, j, t, token, face)
        ok = t < len(target) and out == target[t]
        _cell(ax, width + 0.6, t, out, RIGHT if ok else WRONG)
    ax.set_xlim(-0.6, width + 1.2)
    ax.set_ylim(width - 0.4, -0.6)
    ax.set_xticks([*range(width), width + 0.6])
    ax.set_xticklabels([*map(str, range(width)), "output"], fontsize=8)
    ax.set_yticks(range(width))
    ax.set_xlabel("decoder input position")
    ax.set_ylabel("step t")
    ax.set_title(title)
    for side in ("top", "right", "left", "bottom"):
        ax.spines[side].set_visible(False)


def decoding_modes_figure(
    target: Sequence[str],
    teacher_outputs: Sequence[str],
    free_outputs: Sequence[str],
    *,
    bos: str = "<bos>",
    title: str = "What the decoder reads: teacher forcing against writing alone",
) -> Figure:
    """Draw the decoder's input at every step of one example, in two modes.

    Under teacher forcing, step ``t`` reads ``bos`` and the first ``t`` tokens
    of the correct target; under free-running decoding it reads ``bos`` and the
    first ``t`` tokens the model wrote itself. Each row ends in the token the
    model outputs at that step, green where it equals the target, red where
    not; a token the model fed back to itself is orange, or red if wrong.

    Args:
        target: The correct output tokens, ``<eos>`` included.
        teacher_outputs: The model's most likely token at each position under
            teacher forcing, one per target token.
        free_outputs: The tokens greedy decoding wrote, ``<eos>`` included if
            it wrote one.
        bos: The start token every decoder input begins with.
        title: The figure's title.

    Returns:
        The figure, with the teacher-forcing panel first.

    Raises:
        ValueError: If ``teacher_outputs`` and ``target`` differ in length, or
            ``free_outputs`` is empty.
    """
    if len(teacher_outputs) != len(target):
        raise ValueError(
            f"teacher_outputs must have one token per target token ({len(target)}), "
            f"got {len(teacher_outputs)}"
        )
    if not free_outputs:
        raise ValueError("free_outputs must hold at least one token, got none")
    steps = max(len(target), len(free_outputs))
    fig, axes = plt.subplots(1, 2, figsize=(2.0 + steps, 1.2 + 0.4 * steps))
    teacher = [[bos, *target[:t]] for t in range(len(target))]
    free = [[bos, *free_outputs[:t]] for t in range(len(free_outputs))]
    _steps_panel(
        axes[0],
        teacher,
        teacher_outputs,
        target,
        given=True,
        title="teacher forcing: reads the target",
        width=steps,
    )
    _steps_panel(
        axes[1],
        free,
        free_outputs,
        target,
        given=False,
        title="greedy decoding: reads its own output",
        width=steps,
    )
    axes[1].set_ylabel("")
    legend = {
        GIVEN: "handed in (correct)",
        OWN: "fed back, right",
        WRONG: "wrong",
        RIGHT: "output right",
    }
    _finish(
        fig,
        title,
        [Patch(facecolor=c, edgecolor="grey", label=t) for c, t in legend.items()],
        bottom=0.08,
    )
    return fig


def lm_layouts_figure(
    layouts: dict[str, tuple[Sequence[str], Sequence[str]]],
    *,
    pad: str = "<pad>",
    title: str = "One training sequence in each layout",
) -> Figure:
    """Draw one row of a decoder-only batch in each layout, input above target.

    Args:
        layouts: For each layout's name, the tokens the model reads and the
            tokens it must predict, one per position (e.g. a batch's ``x`` and
            ``targets`` rows, decoded).
        pad: The target token that carries no loss; its cells are greyed.
        title: The figure's title.

    Returns:
        The figure, one panel per layout in the order given.

    Raises:
        ValueError: If a layout's two rows differ in length.
    """
    for name, (reads, predicts) in layouts.items():
        if len(reads) != len(predicts):
            raise ValueError(
                f"layout {name!r}: the input ({len(reads)} tokens) and the targets "
                f"({len(predicts)} tokens) must have the same length"
            )
    width = max(len(reads) for reads, _ in layouts.values())
    fig, axes = plt.subplots(
        len(layouts),
        1,
        figsize=(1.6 + 0.55 * width, 1.0 + 1.2 * len(layouts)),
        squeeze=False,
    )
    for ax, (name, (reads, predicts)) in zip(axes[:, 0], layouts.items()):
        for j, (x, y) in enumerate(zip(reads, predicts)):
            _cell(ax, j, 0, x, "white", long=9)
            scored = y != pad
            _cell(
                ax,
                j,
                1,
                y,
                SCORED if scored else NO_LOSS,
                long=9,
                hatch=None if scored else "///",
            )
        ax.set_xlim(-0.6, width - 0.4)
        ax.set_ylim(1.6, -0.6)
        ax.set_xticks(range(len(reads)))
        ax.set_yticks([0, 1])
        ax.set_yticklabels(["reads", "predicts"])
        ax.tick_params(length=0)
        ax.set_title(name, fontsize=10)
        for side in ("top", "right", "left", "bottom"):
            ax.spines[side].set_visible(False)
    axes[-1, 0].set_xlabel("position")
    scored = Patch(facecolor=SCORED, edgecolor="grey", label="in the loss")
    unscored = Patch(
        facecolor=NO_LOSS, edgecolor="grey", hatch="///", label="no loss (target <pad>)"
    )
    _finish(fig, title, [scored, unscored], bottom=0.07)
    return fig
