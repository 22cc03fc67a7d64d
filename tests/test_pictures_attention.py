"""Tests of transformer.plot.pictures_attention: a soft lookup, mask conventions."""

import math

import matplotlib

matplotlib.use("Agg")

import pytest  # noqa: E402
import torch  # noqa: E402

from transformer import causal_mask, scaled_dot_product_attention  # noqa: E402
from transformer.plot import mask_conventions_figure, soft_lookup_figure  # noqa: E402


def test_soft_lookup_figure_draws_the_scores_weights_and_output():
    torch.manual_seed(0)
    q, k, v = torch.randn(8), torch.randn(4, 8), torch.randn(4, 3)
    fig = soft_lookup_figure(q, k, v, key_names=list("abcd"))
    ax_s, ax_w, ax_v = fig.axes[:3]
    out, w = scaled_dot_product_attention(q[None], k, v)
    scores = [p.get_height() for p in ax_s.patches]
    torch.testing.assert_close(
        torch.tensor(scores, dtype=torch.float32), k @ q / math.sqrt(8)
    )
    weights = [p.get_height() for p in ax_w.patches]
    torch.testing.assert_close(torch.tensor(weights, dtype=torch.float32), w[0])
    mix = torch.tensor(ax_v.images[0].get_array().data)
    assert mix.shape == (5, 3)
    torch.testing.assert_close(mix[-1], out[0])
    torch.testing.assert_close(mix[:4].sum(dim=0), out[0])
    assert [t.get_text() for t in ax_s.get_xticklabels()] == list("abcd")


def test_soft_lookup_figure_rejects_a_matrix_query():
    with pytest.raises(ValueError, match="vector"):
        soft_lookup_figure(torch.randn(2, 8), torch.randn(4, 8), torch.randn(4, 3))


def test_mask_conventions_figure_writes_each_convention():
    fig = mask_conventions_figure(causal_mask(3))
    assert len(fig.axes) == 4
    texts = [[t.get_text() for t in ax.texts] for ax in fig.axes]
    # row 0 of a causal mask: may attend to key 0 only
    assert texts[0][:3] == ["T", "F", "F"]
    assert texts[1][:3] == ["F", "T", "T"]
    assert texts[2][:3] == ["1", "0", "0"]
    assert texts[3][:3] == ["0", "-inf", "-inf"]
    colours = fig.axes[0].images[0].get_array().data
    assert colours.tolist() == causal_mask(3).int().tolist()


def test_mask_conventions_figure_rejects_an_int_mask():
    with pytest.raises(TypeError, match="boolean"):
        mask_conventions_figure(causal_mask(3).int())
