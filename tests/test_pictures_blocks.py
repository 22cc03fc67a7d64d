"""The pictures of the blocks (transformer.plot.pictures_blocks): where each norm
sits is read from the modules, and each attention is labelled with its mask."""

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

from transformer import (
    DecoderLayer,
    Encoder,
    EncoderLayer,
    causal_mask,
    padding_mask,
    record_attention,
)
from transformer.plot.pictures_blocks import (
    _mask_name,
    layer_masks_figure,
    norm_placement_figure,
)


def _labels_bottom_up(ax):
    """The box names of a panel, from the bottom of the stack to the top."""
    names = ("norm", "final norm", "self-attention", "feed-forward")
    texts = [t for t in ax.texts if t.get_text().startswith(names)]
    return [t.get_text() for t in sorted(texts, key=lambda t: t.get_position()[1])]


def test_norm_placement_figure_puts_each_norm_where_the_module_has_it():
    post = Encoder(8, 2, 16, 1, norm_first=False)
    pre = Encoder(8, 2, 16, 1, norm_first=True)
    fig = norm_placement_figure([post, pre])
    ax_post, ax_pre = fig.axes
    assert _labels_bottom_up(ax_post) == [
        "self-attention",
        "norm, on the stream",
        "feed-forward",
        "norm, on the stream",
    ]
    assert _labels_bottom_up(ax_pre) == [
        "norm, on the branch",
        "self-attention",
        "norm, on the branch",
        "feed-forward",
        "final norm, on the stream",
    ]
    assert ax_post.get_title() == "post-norm: the stream passes 2 norms"
    assert ax_pre.get_title() == "pre-norm: the stream passes 1 norm"


def test_norm_placement_figure_counts_two_norms_per_post_norm_layer():
    fig = norm_placement_figure([Encoder(8, 2, 16, 2, norm_first=False)])
    assert fig.axes[0].get_title().endswith("passes 4 norms")


def test_norm_placement_figure_rejects_a_layer():
    with pytest.raises(TypeError, match="Encoder"):
        norm_placement_figure([EncoderLayer(8, 2, 16)])


def test_layer_masks_figure_names_each_attentions_mask_and_shapes():
    B, S, L, d_model = 2, 5, 4, 8
    enc, dec = EncoderLayer(d_model, 2, 16).eval(), DecoderLayer(d_model, 2, 16).eval()
    src_mask = padding_mask([5, 3], S)  # (B, 1, 1, S)
    with record_attention(enc), record_attention(dec):
        memory = enc(torch.randn(B, S, d_model), src_mask)
        dec(torch.randn(B, L, d_model), memory, causal_mask(L), src_mask)
    fig, labels = layer_masks_figure(
        enc, dec, src_mask=src_mask, self_mask=causal_mask(L), cross_mask=src_mask
    )
    assert labels == {
        "encoder self-attention": (
            "padding mask\nmask (2, 1, 1, 5)\nweights (2, 2, 5, 5)"
        ),
        "decoder self-attention": "causal mask\nmask (4, 4)\nweights (2, 2, 4, 4)",
        "cross-attention": "padding mask\nmask (2, 1, 1, 5)\nweights (2, 2, 4, 5)",
    }
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert all(label in texts for label in labels.values())
    assert "memory (2, 5, d_model): keys and values" in texts
    # no mask grids: the masks themselves are drawn in the masking chapter
    assert fig.axes[0].child_axes == []
    # one residual skip per Add & Norm: two in the encoder, three in the decoder
    skips = [p for p in fig.axes[0].patches if p.get_gid() == "residual"]
    assert len(skips) == 5
    # the outputs named as in the chapter's equations
    assert {"$z$", "$u$", "$v$"} <= set(texts)
    # the memory enters the cross-attention from the right, so no skip (all on
    # the left of their column) crosses it
    (memory,) = [p for p in fig.axes[0].patches if p.get_gid() == "memory"]
    xs = memory.get_path().vertices[:-1, 0]  # its last segment; the last vertex
    assert xs[0] - xs.min() > 1  # closes the head, which points left


def test_mask_name_tells_causal_from_padding():
    assert _mask_name(None) == "no mask"
    assert _mask_name(causal_mask(3)) == "causal mask"
    assert _mask_name(padding_mask([2, 3], 3)) == "padding mask"
    assert _mask_name(torch.ones(3, 3, dtype=torch.bool)) == "mask"


def test_layer_masks_figure_needs_recorded_weights():
    enc, dec = EncoderLayer(8, 2, 16), DecoderLayer(8, 2, 16)
    with pytest.raises(ValueError, match="record_attention"):
        layer_masks_figure(enc, dec, src_mask=None, self_mask=None, cross_mask=None)
