"""The pictures of transformer.plot.pictures_heads draw the data they promise:
W_Q's columns cut into heads, and the encoding's pairs on the unit circle."""

import math

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from transformer import MultiHeadAttention, SinusoidalPositionalEncoding  # noqa: E402
from transformer.plot import head_columns_figure, sinusoid_circle_figure  # noqa: E402


def _drawn(ax) -> np.ndarray:
    """The matrix drawn on ``ax``: the blocks of every image, put back together."""
    blocks = [
        np.ma.filled(image.get_array().astype(float), np.nan) for image in ax.images
    ]
    return np.nanmax(np.stack(blocks), axis=0)


def test_head_columns_figure_draws_w_q_and_each_heads_block_of_columns():
    torch.manual_seed(0)
    mha = MultiHeadAttention(12, 3).eval()
    x = torch.randn(5, 12)
    fig = head_columns_figure(mha, x)
    ax_w, ax_q, *heads = fig.axes
    assert len(heads) == 3
    w_q = mha.w_q.weight.detach().T
    np.testing.assert_allclose(_drawn(ax_w), w_q.numpy(), rtol=1e-6)
    q = mha.w_q(x).detach()
    np.testing.assert_allclose(_drawn(ax_q), q.numpy(), rtol=1e-5, atol=1e-6)
    # one image per head, each covering only that head's d_k = 4 columns
    assert len(ax_w.images) == 3
    for i, image in enumerate(ax_w.images):
        covered = ~np.ma.getmaskarray(image.get_array()).all(axis=0)
        assert covered.nonzero()[0].tolist() == list(range(4 * i, 4 * i + 4))
    assert ax_q.get_title().startswith("queries x W_Q + b,")
    for i, ax in enumerate(heads):
        block = slice(4 * i, 4 * i + 4)  # head i's columns
        expected = x @ w_q[:, block] + mha.w_q.bias.detach()[block]
        np.testing.assert_allclose(_drawn(ax), expected.numpy(), rtol=1e-5, atol=1e-6)
        assert ax.get_title().startswith(f"head {i} = columns {4 * i}-{4 * i + 3}")
    assert [t.get_text() for t in ax_w.texts] == ["head 0", "head 1", "head 2"]


def test_sinusoid_circle_figure_puts_each_position_on_the_circle_at_its_angle():
    encoding = SinusoidalPositionalEncoding(16, max_len=20)
    fig = sinusoid_circle_figure(encoding, pairs=(0, 2), n_positions=16, k=3)
    assert len(fig.axes) == 2
    for ax, pair in zip(fig.axes, (0, 2)):
        points = ax.collections[0].get_offsets()
        assert points.shape == (16, 2)
        omega = 10000 ** (-2 * pair / 16)
        angle = omega * np.arange(16)
        np.testing.assert_allclose(points[:, 0], np.sin(angle), atol=1e-6)
        np.testing.assert_allclose(points[:, 1], np.cos(angle), atol=1e-6)
        np.testing.assert_allclose(np.hypot(points[:, 0], points[:, 1]), 1, atol=1e-6)
        assert f"pair {pair}" in ax.get_title()
        assert f"{omega:.3g}" in ax.get_title()
        assert ax.get_xlabel() == f"dimension {2 * pair}: sin(ω·pos)"
        assert len(ax.patches) == 2  # one arrow per start
    assert math.isclose(fig.axes[0].get_xlim()[1], 1.35)


def test_sinusoid_circle_figure_rejects_positions_outside_the_table():
    encoding = SinusoidalPositionalEncoding(8, max_len=10)
    with pytest.raises(ValueError, match="n_positions must be at most max_len = 10"):
        sinusoid_circle_figure(encoding, n_positions=11)
    with pytest.raises(ValueError, match="start \\+ k below n_positions"):
        sinusoid_circle_figure(encoding, n_positions=10, k=3, starts=(8,))
    with pytest.raises(ValueError, match="pairs must lie in"):
        sinusoid_circle_figure(encoding, n_positions=10, pairs=(4,), starts=())
