"""The picture of transformer.plot.pictures_mixing draws the data it promises:
the glued heads, W^O cut into one block of rows per head, and the output as
the sum of one part per head."""

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import torch  # noqa: E402

from test_pictures_heads import _drawn  # noqa: E402
from transformer.plot import head_mixing_figure  # noqa: E402


def test_head_mixing_figure_draws_concat_w_o_output_and_one_part_per_head():
    torch.manual_seed(0)
    concat, w_o = torch.randn(5, 12), torch.randn(12, 12)
    fig = head_mixing_figure(concat, w_o, h=3)
    ax_c, ax_w, ax_o, *parts = fig.axes
    assert len(parts) == 3
    np.testing.assert_allclose(_drawn(ax_c), concat.numpy(), rtol=1e-6)
    np.testing.assert_allclose(_drawn(ax_w), w_o.numpy(), rtol=1e-6)
    output = _drawn(ax_o)
    np.testing.assert_allclose(output, (concat @ w_o).numpy(), rtol=1e-5, atol=1e-5)
    # W^O's image i covers rows 4i to 4i + 3 only: the rows that read head i
    for i, image in enumerate(ax_w.images):
        covered = ~np.ma.getmaskarray(image.get_array()).all(axis=1)
        assert covered.nonzero()[0].tolist() == list(range(4 * i, 4 * i + 4))
    # head i's part uses its own columns of concat and rows of W^O, and the
    # three parts add up to the output
    drawn_parts = [_drawn(ax) for ax in parts]
    np.testing.assert_allclose(
        drawn_parts[1], (concat[:, 4:8] @ w_o[4:8]).numpy(), rtol=1e-5, atol=1e-5
    )
    np.testing.assert_allclose(sum(drawn_parts), output, rtol=1e-5, atol=1e-5)
    assert "head 2" in parts[2].get_title()
    assert [t.get_text() for t in ax_w.get_yticklabels()] == [
        "head 0",
        "head 1",
        "head 2",
    ]
