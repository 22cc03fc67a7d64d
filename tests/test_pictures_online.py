"""The picture of one online-softmax update (transformer.plot.pictures_online):
its bars and printed numbers are the ones the scores give."""

import math

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest
import torch

from transformer.plot import online_softmax_figure

# Tile 2 holds the largest score, so the maximum rises and the factor is below 1.
SCORES = torch.tensor([0.5, -1.0, 1.25, 0.0, 2.5, -0.5, 1.0, 0.25])


def _texts(ax):
    return [t.get_text() for t in ax.texts if t.get_text()]


def test_two_panels_with_one_bar_per_key_and_five_for_the_sums():
    fig = online_softmax_figure(SCORES, block=4)
    left, right = fig.axes
    assert len(left.patches) == 8
    assert [p.get_height() for p in left.patches] == pytest.approx(SCORES.tolist())
    assert len(right.patches) == 5
    plt.close(fig)


def test_the_printed_maxima_and_factor_are_those_of_the_scores():
    fig = online_softmax_figure(SCORES, block=4)
    left, right = fig.axes
    m_old, m_new = SCORES[:4].max().item(), SCORES.max().item()
    assert (m_old, m_new) == (1.25, 2.5)
    assert f"m_old = {m_old:.3f}" in _texts(left)
    assert f"m_new = {m_new:.3f}" in _texts(left)
    assert right.get_title() == f"exp(m_old − m_new) = {math.exp(m_old - m_new):.3f}"
    plt.close(fig)


def test_the_final_running_sum_is_the_softmax_denominator():
    fig = online_softmax_figure(SCORES, block=4)
    _, right = fig.axes
    m_old, m_new = SCORES[:4].max(), SCORES.max()
    sum_old = torch.exp(SCORES[:4] - m_old).sum().item()
    rescaled = sum_old * math.exp(m_old - m_new)
    share = torch.exp(SCORES[4:] - m_new).sum().item()
    denominator = torch.exp(SCORES - m_new).sum().item()
    expected = [sum_old, rescaled, share, denominator]
    assert _texts(right) == [f"{x:.3f}" for x in expected]
    # the last bar stacks the rescaled old sum and the new tile's share
    stacked = right.patches[3].get_height() + right.patches[4].get_height()
    assert stacked == pytest.approx(denominator)
    assert right.patches[4].get_y() == pytest.approx(rescaled)
    plt.close(fig)


def test_when_the_maximum_stays_the_factor_is_one():
    scores = torch.tensor([3.0, 1.0, 0.5, 2.0])  # tile 1 holds the maximum
    fig = online_softmax_figure(scores, block=2)
    assert fig.axes[1].get_title() == "exp(m_old − m_new) = 1.000"
    plt.close(fig)


def test_wrong_shapes_and_blocks_are_refused():
    with pytest.raises(ValueError, match="2 \\* block"):
        online_softmax_figure(SCORES, block=3)
    with pytest.raises(ValueError, match="at least 1"):
        online_softmax_figure(SCORES, block=0)
    with pytest.raises(ValueError, match="finite"):
        online_softmax_figure(torch.tensor([0.0, float("-inf")]), block=1)
