"""The pictures of the ideas (transformer.plot.ideas): each returns a figure with
the panels and shapes it promises, computed from the tensors it is given."""

import math

import matplotlib
import pytest

matplotlib.use("Agg")

import torch
from matplotlib.figure import Figure

from transformer import MultiHeadAttention
from transformer.plot.ideas import (
    head_split_figure,
    qkv_one_token_figure,
    split_heads_trace,
)


def test_qkv_one_token_figure_draws_vector_projections_scores_weights_output():
    tokens = ["the", "cat", "sat", "down"]
    x = torch.randn(4, 6)
    w_q, w_k, w_v = (torch.randn(6, 3) for _ in range(3))
    fig = qkv_one_token_figure(x, w_q, w_k, w_v, position=1, tokens=tokens)
    assert isinstance(fig, Figure)
    titles = [ax.get_title() for ax in fig.axes]
    assert len(titles) == 7
    for i, expected in enumerate(
        ["x_1", "= x_1 W_Q0", "= x_j W_K0", "= x_j W_V0", "scores", "softmax"]
    ):
        assert expected in titles[i], (i, titles[i])
    assert "Σ_j a_j v_j" in titles[6]
    weights = [bar.get_width() for bar in fig.axes[5].patches]
    assert len(weights) == 4 and math.isclose(sum(weights), 1.0, rel_tol=1e-5)
    q, k = x[1] @ w_q, x @ w_k
    scores = [bar.get_width() for bar in fig.axes[4].patches]
    assert torch.allclose(
        torch.tensor(scores, dtype=x.dtype), k @ q / math.sqrt(3), atol=1e-5
    )
    assert [t.get_text() for t in fig.axes[4].get_yticklabels()][1] == "k_1 'cat'"
    # the keys and the values panels hold every token's key and value,
    # one column per token, in token order
    for ax, w, letter in [(fig.axes[2], w_k, "k"), (fig.axes[3], w_v, "v")]:
        drawn = torch.tensor(ax.images[0].get_array().data)
        torch.testing.assert_close(drawn, (x @ w).T, check_dtype=False)
        labels = [t.get_text() for t in ax.get_xticklabels()]
        assert labels == [f"{letter}_{j}" for j in range(4)], labels


def test_split_heads_trace_ends_in_the_output_of_multihead_attention():
    mha = MultiHeadAttention(12, 3, bias=False).eval()
    x = torch.randn(2, 5, 12)
    ws = [m.weight.T for m in (mha.w_q, mha.w_k, mha.w_v, mha.w_o)]
    stages = split_heads_trace(x, *ws, h=3)
    assert stages["q"].shape == (2, 3, 5, 4)
    assert stages["weights"].shape == (2, 3, 5, 5)
    assert stages["concat"].shape == (2, 5, 12)
    torch.testing.assert_close(stages["output"], mha(x, x, x))


def test_head_split_figure_writes_every_shape_on_the_figure():
    x = torch.randn(2, 5, 12)
    ws = [torch.randn(12, 12) for _ in range(4)]
    fig = head_split_figure(split_heads_trace(x, *ws, h=3))
    assert isinstance(fig, Figure)
    assert len(fig.axes) == 3 + 3 * 3
    text = " ".join(ax.get_title() for ax in fig.axes)
    # each panel is titled with the shape of what it draws: sequence 0 only
    for shape in [
        "sequence 0\n(L, d_model) = (5, 12)",
        "queries of each head\n(L, d_k) = (5, 4)",
        "weights of each head\n(L, S) = (5, 5)",
        "output of each head\n(L, d_k) = (5, 4)",
        "(L, h·d_k) = (5, 12)",
        "Concat · $W^O$\n(L, d_model) = (5, 12)",
    ]:
        assert shape in text, shape
    assert "batch of 2" in fig.get_suptitle()
    for ax in fig.axes:
        drawn = ax.images[0].get_array().shape
        assert f"= {drawn}".replace(",)", ")") in ax.get_title() or not ax.get_title()
    assert [ax.get_ylabel() for ax in fig.axes if ax.get_ylabel()] == [
        "head 0",
        "head 1",
        "head 2",
    ]


def test_head_split_figure_writes_every_attention_weight():
    x = torch.randn(2, 5, 12)
    ws = [torch.randn(12, 12) for _ in range(4)]
    stages = split_heads_trace(x, *ws, h=3)
    fig = head_split_figure(stages)
    weight_axes = [ax for ax in fig.axes if len(ax.texts) == 25]
    assert len(weight_axes) == 3
    for head, ax in enumerate(weight_axes):
        written = [float(t.get_text()) for t in ax.texts]
        expected = stages["weights"][0, head].flatten().tolist()
        assert written == pytest.approx(expected, abs=0.006)
        assert all(t.get_fontsize() >= 8 for t in ax.texts)  # large enough to read
