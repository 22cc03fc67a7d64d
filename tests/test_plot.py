"""Tests of transformer.plot: the figures the chapters draw."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from transformer import causal_mask  # noqa: E402
from transformer.plot import attention_heatmap, mask_heatmap, use_book_style  # noqa: E402


def test_attention_heatmap_draws_weights_with_labels():
    w = torch.softmax(torch.randn(1, 3, 4), dim=-1)
    ax = attention_heatmap(w, xticklabels=list("abcd"), title="look here")
    image = ax.images[0].get_array()
    assert image.shape == (3, 4)
    assert ax.get_title() == "look here"
    assert ax.get_xlabel() and ax.get_ylabel()
    assert [t.get_text() for t in ax.get_xticklabels()] == list("abcd")
    assert len(ax.texts) == 12  # small matrices are annotated
    plt.close("all")


def test_mask_heatmap_shows_allowed_cells():
    ax = mask_heatmap(causal_mask(3))
    assert ax.images[0].get_array().tolist() == [[1, 0, 0], [1, 1, 0], [1, 1, 1]]
    assert ax.get_legend() is not None
    plt.close("all")


def test_heatmaps_reject_non_matrices_and_float_masks():
    with pytest.raises(ValueError, match=r"weights must be a matrix \(L, S\)"):
        attention_heatmap(torch.rand(2, 3, 4))
    with pytest.raises(TypeError, match="mask must be a boolean tensor"):
        mask_heatmap(torch.ones(3, 3))


def test_book_style_has_opaque_white_background():
    use_book_style()
    assert matplotlib.rcParams["savefig.transparent"] is False
    assert matplotlib.rcParams["figure.facecolor"] == "white"
