"""Tests for the unrolled picture of the two stacks."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from transformer import Decoder, Encoder
from transformer.plot import stacks_figure


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
