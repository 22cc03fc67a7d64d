import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from transformer.plot import (  # noqa: E402
    ablation_figure,
    cache_fill_plot,
    kv_groups_figure,
)
from transformer.plot.part_two import CACHE_COLORS, PALETTE  # noqa: E402


def test_kv_groups_figure_joins_each_query_head_to_the_kv_head_it_reads():
    fig = kv_groups_figure({"grouped": torch.tensor([0, 0, 1, 1])})
    (ax,) = fig.axes
    assert ax.get_title() == "grouped"
    lines = ax.get_lines()
    assert len(lines) == 4  # one per query head
    # query head 3 (top, x=3) goes down to kv head 1, drawn at x = 2.5
    assert list(lines[3].get_xdata()) == [3, 2.5]
    assert list(lines[3].get_ydata()) == [1, 0]
    assert lines[0].get_color() == PALETTE[0] and lines[2].get_color() == PALETTE[1]
    labels = [t.get_text() for t in ax.texts]
    assert labels.count("kv0") == 1 and "kv1" in labels and "q3" in labels
    plt.close(fig)


def test_kv_groups_figure_draws_one_panel_per_attention():
    fig = kv_groups_figure({"a": torch.arange(4), "b": torch.zeros(4, dtype=int)})
    assert [ax.get_title() for ax in fig.axes] == ["a", "b"]
    plt.close(fig)
    with pytest.raises(ValueError):
        kv_groups_figure({"bad": torch.zeros(2, 2)})


def test_cache_fill_plot_shows_the_states_with_their_colours_and_labels():
    states = torch.tensor([[2, 2, 0, 0], [1, 1, 2, 0]])
    ax = cache_fill_plot(states, row_labels=["prompt", "token 1"])
    (image,) = ax.get_images()
    assert image.get_array().tolist() == states.tolist()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["prompt", "token 1"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["allocated, empty", "held from before", "written by this call"]
    assert len(CACHE_COLORS) == 3
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="0, 1 and 2"):
        cache_fill_plot(torch.tensor([[3]]))


def test_cache_fill_plot_takes_its_own_names_and_axis_labels():
    names = ("not yet", "cached", "new")
    ax = cache_fill_plot(torch.tensor([[2, 0], [1, 2]]), names=names,
                         xlabel="position", ylabel="step")  # fmt: skip
    assert [t.get_text() for t in ax.get_legend().get_texts()] == list(names)
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("position", "step")
    plt.close(ax.figure)
    with pytest.raises(ValueError, match="3 states"):
        cache_fill_plot(torch.tensor([[0]]), names=("a", "b"))


def test_ablation_figure_plots_every_seed_and_the_baseline_spread():
    bpc = {"2017": [4.0, 4.1, 4.2], "RoPE": [3.8, 3.9, 3.7]}
    fig = ablation_figure(bpc)
    (ax,) = fig.axes
    runs = [c.get_offsets()[0] for c in ax.collections]  # one marker per run
    assert [x for x, _ in runs] == pytest.approx(bpc["2017"] + bpc["RoPE"])
    # the seeds of a row sit at different heights around it, so none hides another
    heights = [y for _, y in runs[3:]]
    assert len(set(heights)) == 3 and sum(heights) / 3 == pytest.approx(1)
    # run i of every row has marker i: the same shape in both rows, three shapes
    shapes = [c.get_paths()[0].vertices.tobytes() for c in ax.collections]
    assert shapes[:3] == shapes[3:] and len(set(shapes)) == 3
    assert [t.get_text() for t in ax.get_yticklabels()] == ["2017", "RoPE"]
    # the dashed line marks the 2017 mean, the grey band its seeds' range
    assert ax.get_lines()[-1].get_xdata()[0] == pytest.approx(4.1)
    (band,) = ax.patches
    corners = band.get_path().transformed(band.get_patch_transform()).vertices
    xs = [x for x, _ in corners]
    assert (min(xs), max(xs)) == pytest.approx((4.0, 4.2))
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["range of 2017's seeds", "2017's mean"]
    plt.close(fig)
    # given the seeds, the legend names each one's marker, as the rows draw it
    fig = ablation_figure(bpc, seeds=[7, 8, 9])
    (ax,) = fig.axes
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend[-3:] == ["seed 7", "seed 8", "seed 9"]
    keys = [c.get_paths()[0].vertices.tobytes() for c in ax.collections[-3:]]
    assert keys == shapes[:3]
    plt.close(fig)
    with pytest.raises(ValueError):
        ablation_figure({"RoPE": [3.8]})


def test_modern_layer_figure_reads_the_modules_and_marks_what_differs():
    from transformer import DecoderOnlyConfig, DecoderOnlyTransformer
    from transformer.plot import modern_layer_figure
    from transformer.plot.part_two import CHANGED_COLOR

    sizes = dict(vocab_size=11, d_model=16, h=4, N=1, d_ff=32, max_len=8)
    paper = DecoderOnlyTransformer(DecoderOnlyConfig(**sizes))
    llama = DecoderOnlyTransformer(
        DecoderOnlyConfig(
            **sizes,
            n_kv_heads=2,
            norm_first=True,
            norm="rms",
            activation="swiglu",
            positional="rope",
            scale_embeddings=False,
            output_bias=False,
        )
    )
    fig = modern_layer_figure({"paper": paper, "llama": llama})
    (ax,) = fig.axes
    texts = [t.get_text() for t in ax.texts]
    assert "+ positions" in texts and "Self-attention + RoPE" in texts
    assert "4 q heads, 2 kv heads" in texts and texts.count("RMSNorm") == 3
    # the paper's defaults scale the embeddings and give the output a bias;
    # a model without them draws neither step
    assert texts.count("× √d_model") == 1 and texts.count("+ bias") == 1
    bare = DecoderOnlyTransformer(
        DecoderOnlyConfig(**sizes, scale_embeddings=False, output_bias=False)
    )
    bare_texts = [t.get_text() for t in modern_layer_figure({"b": bare}).axes[0].texts]
    assert "× √d_model" not in bare_texts and "+ bias" not in bare_texts
    # one bracket per column over the layer's steps, labelled with N
    assert texts.count("× N = 1") == 2
    # each bracket spans its column's layer, from its first step to its last
    # "+ residual" box (a pre-norm layer ends with one)
    brackets = [line for line in ax.get_lines() if len(line.get_ydata()) == 4]
    boxes = {t.get_text(): [] for t in ax.texts}
    for t in ax.texts:
        boxes[t.get_text()].append(t.get_position())
    for line in brackets:
        x = line.get_xdata()[0]
        column = [
            y
            for name, spots in boxes.items()
            for bx, y in spots
            if name.startswith("+ residual") and 0 < x - bx < 3
        ]
        assert max(line.get_ydata()) > max(column), (line.get_ydata(), column)
    red = [
        p
        for p in ax.patches
        if p.get_edgecolor()[:3] == matplotlib.colors.to_rgb(CHANGED_COLOR)
    ]
    # paper: the scaling by sqrt(d_model), positions, attention, 2 add & norms,
    # ffn and the output bias; llama: the 7 between the embedding and the
    # output layer, which both models share
    assert len(red) == 7 + 7
    # one residual skip per sublayer, two per column, each ending at the left
    # edge of a "+ residual" box: the branch's output is added to the stream
    skips = [p for p in ax.patches if p.get_gid() == "residual"]
    assert len(skips) == 2 + 2
    adds = {
        (round(bx, 3), round(by, 3))
        for name, spots in boxes.items()
        if name.startswith("+ residual")
        for bx, by in spots
    }
    for skip in skips:  # the last segment, its head at the box
        ends = skip.get_path().vertices[:-1]  # the last vertex closes the head
        x1, y1 = ends[:, 0].max(), ends[:, 1].mean()
        # a box's name is drawn 0.15 above its middle
        assert any(abs(x1 - (bx - 2)) + abs(y1 - (by - 0.15)) < 0.1 for bx, by in adds)
    plt.close(fig)


def test_swiglu_flow_figure_reads_each_linear_layers_shape_from_its_module():
    from transformer.parts.feedforward import PositionwiseFeedForward
    from transformer.parts.swiglu import SwiGLU
    from transformer.plot import swiglu_flow_figure

    fig = swiglu_flow_figure(PositionwiseFeedForward(8, 24), SwiGLU(8, 12))
    (ax,) = fig.axes
    texts = [t.get_text() for t in ax.texts]
    # the package names of the five matrices, in drawing order
    assert [t for t in texts if t.startswith("w_")] == [
        "w_1", "w_2", "w_gate", "w_up", "w_down",
    ]  # fmt: skip
    # each shape is the module's own: a changed width shows up in the boxes
    assert {"linear: 8 → 24", "linear: 24 → 8", "gate: 8 → 12", "up: 8 → 12"} <= set(
        texts
    )
    assert {"down: 12 → 8", "ReLU", "SiLU", "⊙", "x (d_model = 8)"} <= set(texts)
    plt.close(fig)
