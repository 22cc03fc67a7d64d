"""Tests of transformer.plot.pictures_early: an embedding lookup, attention shapes."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from transformer import TokenEmbedding, scaled_dot_product_attention  # noqa: E402
from transformer.plot import (  # noqa: E402
    attention_shapes_figure,
    embedding_lookup_figure,
)


def test_embedding_lookup_figure_frames_the_looked_up_rows():
    torch.manual_seed(0)
    embed = TokenEmbedding(6, 4)
    ids = [1, 5, 1]
    fig = embedding_lookup_figure(embed, ids, list("abcdef"))
    table_ax, out_ax = fig.axes[:2]
    assert table_ax.images[0].get_array().shape == (6, 4)
    shown = torch.tensor(out_ax.images[0].get_array().data)
    torch.testing.assert_close(shown, embed(torch.tensor([ids]))[0].detach())
    frames = [p for p in table_ax.patches if isinstance(p, Rectangle)]
    assert sorted(round(f.get_y() + 0.5) for f in frames) == sorted(ids)
    labels = [t.get_text() for t in out_ax.get_yticklabels()]
    assert labels == ["position 0: b", "position 1: f", "position 2: b"]
    assert "(6, 4)" in table_ax.get_title() and "(3, 4)" in out_ax.get_title()
    plt.close("all")


def test_embedding_lookup_figure_shares_one_colour_scale():
    torch.manual_seed(0)
    embed = TokenEmbedding(6, 4)
    fig = embedding_lookup_figure(embed, [1, 5, 1], list("abcdef"))
    table_ax, out_ax = fig.axes[:2]
    assert table_ax.images[0].get_clim() == out_ax.images[0].get_clim()
    low, high = out_ax.images[0].get_clim()
    looked_up = embed(torch.tensor([[1, 5, 1]]))[0].detach()
    assert high == -low == pytest.approx(looked_up.abs().max().item())
    assert len(fig.axes) == 3  # the two panels and their one colour bar
    plt.close("all")


def test_embedding_lookup_figure_needs_a_label_per_row():
    with pytest.raises(ValueError, match="tokens must name all V = 6 rows"):
        embedding_lookup_figure(TokenEmbedding(6, 4), [0], ["a"])


def test_attention_shapes_figure_draws_each_tensor_with_its_shape():
    torch.manual_seed(0)
    q, k, v = torch.randn(3, 8), torch.randn(4, 8), torch.randn(4, 5)
    fig = attention_shapes_figure(q, k, v)
    shapes = [tuple(ax.images[0].get_array().shape) for ax in fig.axes]
    assert shapes == [(3, 8), (8, 4), (3, 4), (4, 5), (3, 5)]
    titles = [ax.get_title() for ax in fig.axes]
    assert titles[2].endswith("(L, S) = (3, 4)")
    assert titles[4].endswith("(L, d_v) = (3, 5)")
    out, w = scaled_dot_product_attention(q, k, v)
    torch.testing.assert_close(torch.tensor(fig.axes[2].images[0].get_array().data), w)
    torch.testing.assert_close(
        torch.tensor(fig.axes[4].images[0].get_array().data), out
    )
    plt.close("all")
