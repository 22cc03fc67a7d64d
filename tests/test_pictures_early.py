"""Tests of transformer.plot.pictures_early: batches, a lookup, attention shapes."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
from matplotlib.text import Annotation  # noqa: E402

from transformer import TokenEmbedding, scaled_dot_product_attention  # noqa: E402
from transformer.plot import (  # noqa: E402
    attention_shapes_figure,
    embedding_lookup_figure,
    padded_batch_figure,
    shift_right_figure,
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


def _boxes(ax):
    return [p for p in ax.patches if isinstance(p, Rectangle)]


def test_padded_batch_figure_greys_the_padding_in_both_panels():
    tokens = ["<pad>", "a", "b", "c"]
    batch = torch.tensor([[1, 2, 0, 0], [3, 1, 2, 0], [2, 2, 3, 1]])
    lengths = [2, 3, 4]
    fig = padded_batch_figure(batch, lengths, tokens)
    ids_ax, mask_ax = fig.axes
    B, L = batch.shape
    for ax in (ids_ax, mask_ax):
        boxes = _boxes(ax)
        assert len(boxes) == B * L
        grey = {
            (round(p.get_x()), round(p.get_y()))
            for p in boxes
            if p.get_facecolor() != to_rgba("white")
        }
        assert grey == {(t, b) for b in range(B) for t in range(lengths[b], L)}
        rows = [t.get_text() for t in ax.get_yticklabels()]
        assert rows == [f"row {b}" for b in range(B)]
    assert [t.get_text() for t in ids_ax.texts] == [
        tokens[i] for row in batch.tolist() for i in row
    ]
    assert [t.get_text() for t in mask_ax.texts] == [
        str(int(t < n)) for n in lengths for t in range(L)
    ]
    plt.close("all")


def test_padded_batch_figure_takes_lengths_as_a_tensor():
    fig = padded_batch_figure(torch.tensor([[1, 0]]), torch.tensor([1]), ["<pad>", "x"])
    assert [t.get_text() for t in fig.axes[1].texts] == ["1", "0"]
    assert fig.axes[0].get_xlim() == (0.0, 2.0)
    plt.close("all")


def test_shift_right_figure_joins_each_target_token_to_the_next_input():
    tokens = ["<pad>", "<bos>", "<eos>", "x", "y", "z"]
    sequence = [1, 3, 5, 4, 3, 2]
    decoder_input, target = sequence[:-1], sequence[1:]
    fig = shift_right_figure(decoder_input, target, tokens)
    (ax,) = fig.axes
    n = len(decoder_input)
    assert len(_boxes(ax)) == 2 * n
    labels = [t for t in ax.texts if not isinstance(t, Annotation)]
    assert [t.get_text() for t in labels] == [tokens[i] for i in decoder_input + target]
    # the token written in each box, by (position, row), the input row on top
    at = {
        (round(t.get_position()[0] - 0.5), t.get_position()[1] > 1): t.get_text()
        for t in labels
    }
    arrows = [t for t in ax.texts if isinstance(t, Annotation)]
    assert len(arrows) == n - 1
    for t, arrow in enumerate(arrows):
        # from the target box at t (bottom row) up to the input box at t + 1
        start, end = round(arrow.xyann[0] - 0.5), round(arrow.xy[0] - 0.5)
        assert (start, end) == (t, t + 1) and arrow.xyann[1] < arrow.xy[1]
        assert at[start, False] == at[end, True] == tokens[target[t]]
    assert ax.get_xlim() == (0.0, float(n))
    plt.close("all")


def test_shift_right_figure_rejects_a_target_that_is_not_the_shift():
    with pytest.raises(ValueError, match="one id per input position"):
        shift_right_figure([1, 3], [3], ["<pad>", "<bos>", "<eos>", "x"])
    with pytest.raises(ValueError, match=r"decoder_input\[t \+ 1\]"):
        shift_right_figure([1, 3], [2, 2], ["<pad>", "<bos>", "<eos>", "x"])
