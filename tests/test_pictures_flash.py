"""The FlashAttention chapter's picture (transformer.plot.pictures_flash): the bars
are the data, one group per length, on a logarithmic scale."""

import matplotlib

matplotlib.use("Agg")

import pytest

from transformer.plot import traffic_figure


def test_traffic_figure_draws_one_bar_per_method_and_length():
    mib = {"naive": [4.0, 16.0], "fused": [1.0, 3.0]}
    fig = traffic_figure([512, 1024], mib)
    ax = fig.axes[0]
    heights = [[bar.get_height() for bar in c] for c in ax.containers]
    assert heights == [[4.0, 16.0], [1.0, 3.0]]
    assert ax.get_yscale() == "log"
    assert [t.get_text() for t in ax.get_xticklabels()] == ["L = 512", "L = 1024"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["naive", "fused"]
    labels = [t.get_text() for t in ax.texts]
    assert labels == ["4.00", "16.00", "1.00", "3.00"]


def test_traffic_figure_puts_the_groups_side_by_side():
    fig = traffic_figure([1, 2], {"a": [1.0, 1.0], "b": [2.0, 2.0]})
    a, b = fig.axes[0].containers
    assert a[0].get_x() < b[0].get_x() < a[1].get_x()


def test_traffic_figure_rejects_a_missing_value_and_a_zero():
    with pytest.raises(ValueError, match="one value per length"):
        traffic_figure([1, 2], {"a": [1.0]})
    with pytest.raises(ValueError, match="positive"):
        traffic_figure([1], {"a": [0.0]})
