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


def _history():
    from transformer.training.train import History

    return History(
        step=[1, 2, 3, 4],
        lr=[1e-3] * 4,
        train_loss=[2.0, 1.0, 0.5, 0.25],
        train_acc=[0.1, 0.4, 0.7, 0.9],
        eval_step=[2, 4],
        eval_loss=[1.2, 0.3],
        eval_acc=[0.5, 0.95],
    )


def test_training_curves_draws_training_and_held_out_lines():
    from transformer.plot import training_curves

    ax_loss, ax_acc = training_curves(_history(), title="copy", smooth=2)
    assert ax_loss.get_yscale() == "log" and ax_loss.get_title().startswith("copy: ")
    smoothed, held_out = ax_loss.get_lines()
    assert smoothed.get_xdata().tolist() == [1.0, 1.5, 2.5, 3.5]  # centred running mean
    assert smoothed.get_ydata().tolist() == [2.0, 1.5, 0.75, 0.375]
    assert held_out.get_ydata().tolist() == [1.2, 0.3]
    assert len(ax_acc.get_lines()) == 2
    plt.close("all")


def test_compare_curves_draws_one_line_per_run_and_rejects_unknown_curves():
    from transformer.plot import compare_curves

    ax = compare_curves({"a": _history(), "b": _history()}, key="eval_acc", log=False)
    assert [line.get_label() for line in ax.get_lines()] == ["a", "b"]
    with pytest.raises(ValueError, match="key must be"):
        compare_curves({"a": _history()}, key="lr")
    plt.close("all")


def test_attention_grid_draws_one_panel_per_matrix():
    from transformer.plot import attention_grid

    fig = attention_grid(
        torch.softmax(torch.randn(3, 4, 5), dim=-1), ncols=2, suptitle="heads"
    )
    panels = [ax for ax in fig.axes if ax.images]
    assert [ax.get_title() for ax in panels] == ["head 0", "head 1", "head 2"]
    assert len(fig.axes) == 4  # one empty panel, switched off
    with pytest.raises(ValueError, match="titles must have one entry per matrix"):
        attention_grid(torch.rand(2, 3, 3), titles=["only one"])
    plt.close("all")


def test_attention_grid_draws_one_shared_colour_bar_when_asked():
    from transformer.plot import attention_grid

    weights = torch.softmax(torch.randn(3, 4, 5), dim=-1)
    assert len(attention_grid(weights, ncols=3).axes) == 3
    fig = attention_grid(weights, ncols=3, colorbar_label="weight")
    assert len(fig.axes) == 4  # three panels and one bar
    assert fig.axes[-1].get_ylabel() == "weight"
    plt.close("all")


def test_position_accuracy_plot_draws_each_run_and_chance():
    from transformer.plot import position_accuracy_plot

    ax = position_accuracy_plot({"causal": torch.tensor([0.1, 1.0])}, chance=0.1)
    assert ax.get_lines()[0].get_ydata().tolist() == pytest.approx([0.1, 1.0])
    assert len(ax.get_lines()) == 2
    plt.close("all")


def test_matrix_heatmap_centres_the_colour_scale_on_zero():
    from transformer.plot import matrix_heatmap

    ax = matrix_heatmap(
        torch.tensor([[[-1.0, 2.0], [0.5, 0.0]]]), title="signs", annotate=True
    )
    assert ax.images[0].get_clim() == (-2.0, 2.0)
    assert ax.get_title() == "signs" and ax.get_xlabel() and ax.get_ylabel()
    assert len(ax.texts) == 4
    ax = matrix_heatmap(torch.tensor([[1.0, 3.0]]), centered=False, aspect="auto")
    assert ax.images[0].get_clim() == (1.0, 3.0)
    assert ax.get_aspect() == "auto"
    with pytest.raises(ValueError, match=r"matrix must be a matrix"):
        matrix_heatmap(torch.rand(2, 3, 4))
    plt.close("all")


def test_line_plot_draws_one_labelled_line_per_curve():
    from transformer.plot import line_plot

    x = torch.linspace(-1, 1, 5)
    ax = line_plot(
        x, {"relu": x.relu(), "identity": x}, xlabel="x", ylabel="f(x)", logy=False
    )
    assert [line.get_label() for line in ax.get_lines()] == ["relu", "identity"]
    assert ax.get_lines()[0].get_ydata().tolist() == [0.0, 0.0, 0.0, 0.5, 1.0]
    assert ax.get_legend() is not None
    with pytest.raises(ValueError, match="curve 'short' must have one value per x"):
        line_plot(x, {"short": [1.0, 2.0]})
    with pytest.raises(ValueError, match="curves must hold at least one curve"):
        line_plot(x, {})
    plt.close("all")


def test_architecture_diagram_names_every_block_and_shape():
    from transformer.plot.diagram import architecture_diagram

    ax = architecture_diagram(title="where the data goes")
    texts = [t.get_text() for t in ax.texts]
    assert ax.get_title() == "where the data goes" and not ax.axison
    assert (
        texts.count("Add & Norm") == 5
    )  # two in the encoder layer, three in the decoder layer
    for name in (
        "MultiHeadAttention (causal)",
        "PositionwiseFeedForward",
        "TokenEmbedding",
        "out_proj",
        "memory (B, S, d_model)",
        "(B, L, V) logits",
        "(B, S)",
        "(B, L)",
    ):
        assert name in texts, name
    plt.close("all")


def test_matrix_heatmap_writes_light_numbers_on_dark_cells():
    from transformer.plot import matrix_heatmap

    # cividis, centred on 0: -2 is the darkest colour, +2 the lightest
    ax = matrix_heatmap(torch.tensor([[-2.0, 2.0]]), annotate=10)
    colours = {t.get_text(): t.get_color() for t in ax.texts}
    assert colours == {"-2.00": "white", "2.00": "black"}
    assert {t.get_fontsize() for t in ax.texts} == {10}
    ax = matrix_heatmap(torch.tensor([[-2.0, 2.0]]), annotate=True)
    assert {t.get_fontsize() for t in ax.texts} == {7}
    plt.close("all")


def test_line_plot_shades_a_band_in_its_curves_colour():
    from matplotlib.colors import to_rgba

    from transformer.plot import line_plot

    x = torch.arange(4.0)
    ax = line_plot(
        x,
        {"mean": x, "plain": -x},
        colors={"mean": "#123456"},
        bands={"mean": (x - 1, x + 1)},
    )
    mean, plain = ax.get_lines()
    assert mean.get_color() == "#123456" and plain.get_color() != "#123456"
    (band,) = ax.collections  # one band, for "mean" only
    assert tuple(band.get_facecolor()[0][:3]) == to_rgba("#123456")[:3]
    ys = band.get_paths()[0].vertices[:, 1]  # the band's outline
    assert (ys.min(), ys.max()) == (-1.0, 4.0)
    with pytest.raises(ValueError, match="band 'mean' must have one"):
        line_plot(x, {"mean": x}, bands={"mean": ([0.0], [1.0])})
    plt.close("all")
