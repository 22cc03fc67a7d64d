"""The FlashAttention chapter's pictures (transformer.plot.pictures_flash): the bars
are the data, one group per length, on a logarithmic scale; the memory pictures
cut every column into blocks and colour the ones a program reads or writes."""

import matplotlib

matplotlib.use("Agg")

import pytest
from matplotlib.colors import same_color
from matplotlib.patches import FancyArrowPatch, Rectangle

from transformer.plot import (
    backward_program_figure,
    forward_program_figure,
    traffic_figure,
)

GREY = "0.85"
"""The face of a block in main memory that the program does not touch."""


def test_traffic_figure_draws_one_bar_per_method_and_length():
    mib = {"naive": [4.0, 16.0], "fused": [1.0, 3.0]}
    fig = traffic_figure([512, 1024], mib)
    ax = fig.axes[0]
    heights = [[bar.get_height() for bar in c] for c in ax.containers]
    assert heights == [[4.0, 16.0], [1.0, 3.0]]
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["L = 512", "L = 1024"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["naive", "fused"]
    labels = [t.get_text() for t in ax.texts]
    assert labels == ["4.00", "16.00", "1.00", "3.00"]


def test_traffic_figure_puts_the_groups_side_by_side():
    fig = traffic_figure([1, 2], {"a": [1.0, 1.0], "b": [2.0, 2.0]})
    a, b = fig.axes[0].containers
    assert a[0].get_x() < b[0].get_x() < a[1].get_x()


def test_traffic_figure_rejects_a_missing_value_and_a_zero():
    with pytest.raises(ValueError, match="one value per length"):
        traffic_figure([1, 2], {"a": [1.0]})
    with pytest.raises(ValueError, match="positive"):
        traffic_figure([1], {"a": [0.0]})


def _boxes(fig):
    """The labelled rectangles of a figure's axes, by label."""
    patches = fig.axes[0].patches
    return {p.get_label(): p for p in patches if isinstance(p, Rectangle)}


def _coloured(boxes, name, L, block):
    """The indices of the blocks of column ``name`` that are not grey."""
    faces = [boxes[f"{name} block {b}"].get_facecolor() for b in range(L // block)]
    return [b for b, face in enumerate(faces) if not same_color(face, GREY)]


@pytest.mark.parametrize(("L", "block", "program"), [(128, 32, 1), (96, 16, 5)])
def test_forward_program_figure_cuts_columns_and_colours_its_blocks(L, block, program):
    fig = forward_program_figure(L, block, 16, program=program)
    boxes = _boxes(fig)
    names = ("Q", "K", "V", "O", "lse")
    blocks = [n for n in boxes if " block " in n]
    assert len(blocks) == len(names) * (L // block)
    for name in ("Q", "O", "lse"):
        assert _coloured(boxes, name, L, block) == [program]
    for name in ("K", "V"):
        assert _coloured(boxes, name, L, block) == [0]
    assert same_color(boxes[f"Q block {program}"].get_facecolor(), "C0")
    assert same_color(boxes[f"O block {program}"].get_facecolor(), "C2")
    assert boxes[f"Q block {program}"].get_y() == program * block


def test_forward_program_figure_draws_the_tiles_to_scale():
    L, block, d = 128, 32, 16
    fig = forward_program_figure(L, block, d, program=2)
    boxes = _boxes(fig)
    assert (boxes["Q tile"].get_width(), boxes["Q tile"].get_height()) == (d, block)
    assert boxes["K, V tile"].get_width() == d
    assert (boxes["scores"].get_width(), boxes["scores"].get_height()) == (block, block)
    assert boxes["Q block 0"].get_width() == d
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert f"{block} × {block}" in texts and f"{block}\n×\n{d}" in texts
    assert {"Q", "K", "V", "O", "lse"} <= set(texts)
    arrows = [p for p in fig.axes[0].patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == 4
    assert "query block 2" in fig.axes[0].get_title()
    assert (
        f"of {L // block}, blocks of {block} rows, d = {d}" in fig.axes[0].get_title()
    )


@pytest.mark.parametrize(("L", "block", "key_block"), [(128, 32, 1), (64, 16, 3)])
def test_backward_program_figure_streams_queries_and_keeps_its_key_block(
    L, block, key_block
):
    fig = backward_program_figure(L, block, 32, key_block=key_block)
    boxes = _boxes(fig)
    query_side, key_side = ("Q", "dO", "lse", "δ"), ("K", "V", "dK", "dV")
    blocks = [n for n in boxes if " block " in n]
    assert len(blocks) == 8 * (L // block)
    for name in query_side:
        assert _coloured(boxes, name, L, block) == [0]
    for name in key_side:
        assert _coloured(boxes, name, L, block) == [key_block]
    assert same_color(boxes[f"K block {key_block}"].get_facecolor(), "C1")
    assert same_color(boxes[f"dV block {key_block}"].get_facecolor(), "C2")
    for name in ("P", "dP", "dS"):
        assert (boxes[name].get_width(), boxes[name].get_height()) == (block, block)
    for name in ("K, V", "dK, dV", "Q, dO"):
        assert boxes[name].get_height() == block
    title = fig.axes[0].get_title()
    assert f"key block {key_block} (counting from 0) of {L // block}" in title


def test_program_figures_reject_a_block_that_does_not_fit():
    with pytest.raises(ValueError, match="block must divide L"):
        forward_program_figure(100, 32, 16, program=0)
    with pytest.raises(ValueError, match="program must be in"):
        forward_program_figure(128, 32, 16, program=4)
    with pytest.raises(ValueError, match="key_block must be in"):
        backward_program_figure(128, 32, 32, key_block=-1)
