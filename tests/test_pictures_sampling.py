"""The top-k / top-p picture (transformer.plot.pictures_sampling): its cuts are
the ones next_token makes, and its bars show them."""

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

from transformer import next_token
from transformer.plot.pictures_sampling import (
    CUT_COLORS,
    sampling_cut_plot,
    sampling_cuts,
    token_label,
)

PROBS = torch.tensor([0.05, 0.40, 0.02, 0.25, 0.15, 0.08, 0.05])


def test_sampling_cuts_keep_the_k_largest_and_the_nucleus():
    kept_k, kept_p = sampling_cuts(PROBS, top_k=2, top_p=0.75)
    assert kept_k.tolist() == [False, True, False, True, False, False, False]
    # 0.40 + 0.25 = 0.65 < 0.75, so the third most likely (0.15) is kept too
    assert kept_p.tolist() == [False, True, False, True, True, False, False]


@pytest.mark.parametrize(("top_k", "top_p"), [(3, 0.5), (1, 0.9), (5, 0.3)])
def test_sampling_cuts_agree_with_next_token(top_k, top_p):
    logits = torch.randn(1, 12, generator=torch.Generator().manual_seed(1)) * 2
    kept_k, kept_p = sampling_cuts(logits[0].softmax(-1), top_k=top_k, top_p=top_p)
    g = torch.Generator().manual_seed(0)
    for setting, kept in [({"top_k": top_k}, kept_k), ({"top_p": top_p}, kept_p)]:
        drawn = {
            next_token(logits, temperature=1.0, generator=g, **setting).item()
            for _ in range(400)
        }
        # never a token the picture shows as cut, and (seeded) every kept one
        assert drawn == set(kept.nonzero().flatten().tolist())


def test_sampling_cuts_reject_bad_settings():
    with pytest.raises(ValueError, match="top_k"):
        sampling_cuts(PROBS, top_k=0, top_p=0.5)
    with pytest.raises(ValueError, match="top_p"):
        sampling_cuts(PROBS, top_k=2, top_p=1.5)
    with pytest.raises(ValueError, match="probs"):
        sampling_cuts(PROBS[None], top_k=2, top_p=0.5)


def test_sampling_cut_plot_draws_sorted_bars_coloured_by_cut():
    labels = ["a", " ", "c", "\n", "e", "f", "g"]
    ax = sampling_cut_plot(PROBS, labels, top_k=2, top_p=0.75, n_shown=5)
    heights = [bar.get_height() for bar in ax.patches]
    assert heights == pytest.approx([0.40, 0.25, 0.15, 0.08, 0.05])
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks[:3] == ["␣", "↵", "e"]
    assert ax.get_xlabel() == "the 5 most likely next tokens"
    colours = [matplotlib.colors.to_hex(bar.get_facecolor()) for bar in ax.patches]
    expected = ["kept by both"] * 2 + ["kept by top-p only"] + ["cut by both"] * 2
    assert colours == [CUT_COLORS[name] for name in expected]
    # a line after the second bar (top-k) and after the third (top-p)
    lines = sorted(line.get_xdata()[0] for line in ax.get_lines())
    assert lines == pytest.approx([1.5, 2.5])
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [
        "kept by both",
        "kept by top-p only",
        "cut by both",
        "top-k = 2 cuts here",
        "top-p = 0.75 cuts here",
    ]


def test_sampling_cut_plot_needs_a_label_per_token():
    with pytest.raises(ValueError, match="labels"):
        sampling_cut_plot(PROBS, ["a", "b"], top_k=2, top_p=0.5)


def test_token_label_shows_invisible_characters():
    assert token_label("a b\n") == "a␣b↵"


def test_sampling_cut_plot_names_its_unit():
    ax = sampling_cut_plot(
        PROBS, list("abcdefg"), top_k=2, top_p=0.5, unit="characters"
    )
    assert ax.get_xlabel() == "the 7 most likely next characters"
