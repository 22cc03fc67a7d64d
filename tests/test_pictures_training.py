"""The pictures of decoding modes and data layouts (transformer.plot.pictures_training):
each draws the tokens it is given, in the cells and colours it promises."""

import matplotlib

matplotlib.use("Agg")

import pytest
from matplotlib.colors import to_hex
from matplotlib.patches import Rectangle

from transformer.plot.pictures_training import (
    GIVEN,
    NO_LOSS,
    OWN,
    RIGHT,
    SCORED,
    WRONG,
    decoding_modes_figure,
    lm_layouts_figure,
)


def _cells(ax):
    """The (x, y, text, face) of every token cell of ``ax``, in drawing order."""
    boxes = [p for p in ax.patches if isinstance(p, Rectangle)]
    texts = [t for t in ax.texts]
    assert len(boxes) == len(texts)
    return [
        (
            round(b.get_x() + b.get_width() / 2, 2),
            round(b.get_y() + b.get_height() / 2, 2),
            t.get_text(),
            to_hex(b.get_facecolor()),
        )
        for b, t in zip(boxes, texts)
    ]


def test_decoding_modes_figure_feeds_the_target_left_and_own_tokens_right():
    target = ["3", "1", "4", "<eos>"]
    forced = ["3", "9", "4", "<eos>"]
    free = ["3", "9", "9", "1", "<eos>"]
    fig = decoding_modes_figure(target, forced, free)
    left, right = fig.axes
    assert "teacher forcing" in left.get_title()
    assert "greedy" in right.get_title()
    # teacher forcing: step t reads <bos> and t target tokens, then one output
    teacher = _cells(left)
    assert len(teacher) == sum(t + 2 for t in range(len(target)))
    step2 = [c for c in teacher if c[1] == 2]
    assert [c[2] for c in step2] == ["<bos>", "3", "1", "4"]
    assert {c[3] for c in step2[:-1]} == {to_hex(GIVEN)}
    assert step2[-1][3] == to_hex(RIGHT)
    assert [c for c in teacher if c[1] == 1][-1][3] == to_hex(WRONG)
    # greedy: step 2 reads the model's own wrong "9", which is marked wrong
    greedy = _cells(right)
    assert len({c[1] for c in greedy}) == len(free)
    step2 = [c for c in greedy if c[1] == 2]
    assert [c[2] for c in step2] == ["<bos>", "3", "9", "9"]
    assert [c[3] for c in step2[1:3]] == [to_hex(OWN), to_hex(WRONG)]
    assert step2[-1][3] == to_hex(WRONG)
    # step 4 is past the target's end: its output cannot be right
    assert [c for c in greedy if c[1] == 4][-1][3] == to_hex(WRONG)


def test_decoding_modes_figure_rejects_a_teacher_row_of_the_wrong_length():
    with pytest.raises(ValueError, match="teacher_outputs"):
        decoding_modes_figure(["1", "<eos>"], ["1"], ["1", "<eos>"])
    with pytest.raises(ValueError, match="free_outputs"):
        decoding_modes_figure(["1", "<eos>"], ["1", "<eos>"], [])


def test_lm_layouts_figure_greys_the_pad_targets_and_keeps_the_others():
    layouts = {
        "aligned": (["5", "4"], ["4", "5"]),
        "prompt": (
            ["<bos>", "5", "4", "<eos>", "4", "5"],
            ["<pad>", "<pad>", "<pad>", "4", "5", "<eos>"],
        ),
    }
    fig = lm_layouts_figure(layouts)
    axes = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in axes] == ["aligned", "prompt"]
    prompt = _cells(axes[1])
    reads = [c[2] for c in prompt if c[1] == 0]
    predicts = [(c[2], c[3]) for c in prompt if c[1] == 1]
    assert reads == layouts["prompt"][0]
    assert predicts[:3] == [("<pad>", to_hex(NO_LOSS))] * 3
    assert predicts[3:] == [(t, to_hex(SCORED)) for t in ["4", "5", "<eos>"]]
    aligned = _cells(axes[0])
    assert all(c[3] == to_hex(SCORED) for c in aligned if c[1] == 1)
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["reads", "predicts"]


def test_lm_layouts_figure_rejects_rows_of_different_lengths():
    with pytest.raises(ValueError, match="same length"):
        lm_layouts_figure({"bad": (["1", "2"], ["2"])})


@pytest.mark.parametrize("which", ["decoding modes", "layouts"])
def test_token_text_is_readable_and_fits_its_cell(which):
    """Every token is at least 8 points and narrower than the cell around it."""
    target = ["4", "1", "9", "8", "5", "3", "3", "5", "9", "<eos>"]
    if which == "decoding modes":
        fig = decoding_modes_figure(target, target, target)
    else:
        reads = ["<bos>", *target[:-1], "<eos>", *target[:-1]]
        fig = lm_layouts_figure({"prompt": (reads, ["<pad>"] * 9 + target + ["<pad>"])})
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        boxes = [p for p in ax.patches if isinstance(p, Rectangle)]
        for box, text in zip(boxes, ax.texts):
            assert text.get_fontsize() >= 8
            cell = box.get_window_extent(renderer)
            assert text.get_window_extent(renderer).width < cell.width
