"""Tests for the pictures of the layers: the two stacks unrolled, weight tying and
dropout's places."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_rgba

from transformer import Decoder, Encoder
from transformer.plot import dropout_sites_figure, stacks_figure
from transformer.plot.pictures_layers import DROPOUT_SOURCES


def _gids(fig):
    return [p.get_gid() for p in fig.axes[0].patches if p.get_gid()]


def test_stacks_figure_draws_one_box_and_one_memory_arrow_per_layer():
    encoder, decoder = Encoder(8, 2, 16, 3), Decoder(8, 2, 16, 3)
    fig = stacks_figure(encoder, decoder, src_shape=(2, 5, 8), tgt_shape=(2, 4, 8))
    gids = _gids(fig)
    assert [g for g in gids if g.startswith("encoder-layer")] == [
        f"encoder-layer-{i}" for i in range(3)
    ]
    assert sum(g.startswith("decoder-layer") for g in gids) == 3
    assert sum(g.startswith("memory-arrow") for g in gids) == 3
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert "memory (2, 5, 8)" in texts
    assert "output (2, 4, 8)" in texts
    plt.close(fig)


def test_stacks_figure_names_the_final_norm():
    post = stacks_figure(
        Encoder(8, 2, 16, 1),
        Decoder(8, 2, 16, 1),
        src_shape=(1, 3, 8),
        tgt_shape=(1, 2, 8),
    )
    pre = stacks_figure(
        Encoder(8, 2, 16, 1, norm_first=True),
        Decoder(8, 2, 16, 1, norm_first=True),
        src_shape=(1, 3, 8),
        tgt_shape=(1, 2, 8),
    )
    post_texts = [t.get_text() for t in post.axes[0].texts]
    pre_texts = [t.get_text() for t in pre.axes[0].texts]
    assert "Identity (none)" in post_texts
    assert "LayerNorm" in pre_texts
    plt.close("all")


def test_stacks_figure_rejects_stacks_of_different_depth():
    with pytest.raises(ValueError, match="same number of layers"):
        stacks_figure(
            Encoder(8, 2, 16, 2),
            Decoder(8, 2, 16, 1),
            src_shape=(1, 3, 8),
            tgt_shape=(1, 2, 8),
        )


SITES = [
    ("embeddings + positions", "on the sum", "paper"),
    ("self-attention", "on the weights", "implementations"),
    ("Add & Norm", "before the add", "paper"),
]


def test_dropout_sites_figure_draws_one_box_and_dot_per_site_bottom_to_top():
    fig = dropout_sites_figure(SITES)
    ax = fig.axes[0]
    boxes = [p for p in ax.patches if (p.get_gid() or "").startswith("site-")]
    assert [b.get_gid() for b in boxes] == [f"site-{i}" for i in range(len(SITES))]
    heights = [b.get_y() for b in boxes]
    assert heights == sorted(heights)
    texts = [t.get_text() for t in ax.texts]
    for box, what, _ in SITES:
        assert box in texts
        assert f"dropout {what}" in texts
    # an arrow between each pair of neighbouring boxes
    assert sum(t.get_text() == "" for t in ax.texts) == len(SITES) - 1
    plt.close(fig)


def test_dropout_sites_figure_colours_each_site_by_who_puts_it_there():
    colours = {"paper": "green", "implementations": "purple"}
    fig = dropout_sites_figure(SITES, colours=colours, title="dropout")
    ax = fig.axes[0]
    dots = {line.get_gid(): line for line in ax.lines if line.get_gid()}
    for i, (_, what, who) in enumerate(SITES):
        assert to_rgba(dots[f"dot-{i}"].get_color()) == to_rgba(colours[who])
        label = next(t for t in ax.texts if t.get_text() == f"dropout {what}")
        assert to_rgba(label.get_color()) == to_rgba(colours[who])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [f"dropout from the {who}" for who in colours]
    assert ax.get_title() == "dropout"
    plt.close(fig)


def test_dropout_sites_figure_rejects_a_source_without_a_colour():
    assert set(DROPOUT_SOURCES) == {"paper", "implementations"}
    with pytest.raises(ValueError, match="key of colours"):
        dropout_sites_figure([("box", "somewhere", "a blog")])
    with pytest.raises(ValueError, match="at least one"):
        dropout_sites_figure([])
