"""The flow figures measure real tensors: the residual stream and the memory."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from transformer import (  # noqa: E402
    DecoderOnlyConfig,
    DecoderOnlyTransformer,
    PositionwiseFeedForward,
    Transformer,
    TransformerConfig,
    padding_mask,
    record_attention,
)
from transformer.plot.flow import (  # noqa: E402
    cross_attention_flow,
    memory_flow_plot,
    residual_stream_norms,
    residual_stream_plot,
)


def tiny(norm_first=False):
    torch.manual_seed(0)
    config = TransformerConfig(
        11, 11, d_model=16, h=2, N=2, d_ff=32, max_len=16, norm_first=norm_first
    )
    return Transformer(config).eval()


def ids(B, n):
    return torch.randint(4, 11, (B, n), generator=torch.Generator().manual_seed(n))


def test_residual_stream_norms_visits_every_block_in_call_order():
    records = residual_stream_norms(tiny(), ids(2, 5), ids(2, 4))
    assert [(r.stack, r.layer, r.sublayer) for r in records] == [
        ("encoder", 0, "self-attention"),
        ("encoder", 0, "feed-forward"),
        ("encoder", 1, "self-attention"),
        ("encoder", 1, "feed-forward"),
        ("decoder", 0, "self-attention"),
        ("decoder", 0, "cross-attention"),
        ("decoder", 0, "feed-forward"),
        ("decoder", 1, "self-attention"),
        ("decoder", 1, "cross-attention"),
        ("decoder", 1, "feed-forward"),
    ]


def test_residual_stream_norms_match_a_hand_computation():
    model = tiny()
    src, tgt = ids(2, 5), ids(2, 4)
    first = residual_stream_norms(model, src, tgt)[0]
    with torch.no_grad():
        x = model.positional(model.src_embed(src))
        update = model.encoder.layers[0].self_attn(x, x, x)
        out = model.encoder.layers[0].add_norm1.norm(x + update)
    assert first.stream == pytest.approx(x.norm(dim=-1).mean().item(), rel=1e-5)
    assert first.update == pytest.approx(update.norm(dim=-1).mean().item(), rel=1e-5)
    assert first.output == pytest.approx(out.norm(dim=-1).mean().item(), rel=1e-5)
    # Post-norm with unit gain: every block's output has norm sqrt(d_model).
    assert all(
        r.output == pytest.approx(4.0, rel=1e-3)
        for r in residual_stream_norms(model, src, tgt)
    )


def test_residual_stream_norms_chain_and_leave_no_hooks():
    model = DecoderOnlyTransformer(
        DecoderOnlyConfig(
            11, d_model=16, h=2, N=3, d_ff=32, max_len=16, norm_first=True
        )
    ).eval()
    records = residual_stream_norms(model, ids(1, 6))
    assert [r.stack for r in records] == ["stack"] * 6
    for before, after in zip(records, records[1:]):
        assert after.stream == pytest.approx(before.output)
    assert not any(m._forward_hooks for m in model.modules())


def test_residual_stream_norms_rejects_what_it_cannot_measure():
    with pytest.raises(TypeError, match="model must be an nn.Module"):
        residual_stream_norms("model", ids(1, 3))
    with pytest.raises(ValueError, match="EncoderLayer or DecoderLayer"):
        residual_stream_norms(PositionwiseFeedForward(4, 8), torch.zeros(1, 2, 4))


def test_cross_attention_flow_returns_the_weights_the_model_used():
    model = tiny()
    src, tgt = ids(3, 5), ids(3, 4)
    mask = padding_mask([5, 3, 4])
    memory, weights = cross_attention_flow(model, src, tgt, mask)
    assert memory.shape == (3, 5, 16) and len(weights) == 2
    with torch.no_grad():
        with record_attention(model):
            model(src, tgt, mask)
        assert torch.equal(memory, model.encode(src, mask))
    for layer, w in zip(model.decoder.layers, weights):
        assert w.shape == (3, 2, 4, 5)
        torch.testing.assert_close(w, layer.cross_attn.attn_weights)
    assert (weights[0][1, :, :, 3:] == 0).all()  # padded source keys get no weight
    assert not any(m._forward_hooks for m in model.modules())


def test_cross_attention_flow_needs_an_encoder_decoder_model():
    lm = DecoderOnlyTransformer(
        DecoderOnlyConfig(11, d_model=16, h=2, N=1, d_ff=32, max_len=16)
    )
    with pytest.raises(TypeError, match="model must be a Transformer"):
        cross_attention_flow(lm, ids(1, 3), ids(1, 3))


def test_flow_figures_draw_one_panel_per_block_or_layer():
    model = tiny(norm_first=True)
    src, tgt = ids(1, 5), ids(1, 4)
    fig = residual_stream_plot(residual_stream_norms(model, src, tgt))
    assert len(fig.axes[0].patches) == 3 * 10  # three bars per block
    plt.close(fig)
    memory, weights = cross_attention_flow(model, src, tgt)
    fig = memory_flow_plot(
        memory[0],
        [w[0] for w in weights],
        src_labels=list("abcde"),
        tgt_labels=list("wxyz"),
    )
    assert len(fig.axes) == 1 + 2  # the memory and one panel per decoder layer
    assert len(fig.artists) == 2  # one arrow into each cross-attention
    plt.close(fig)


def test_flow_figures_reject_inputs_that_do_not_fit():
    with pytest.raises(ValueError, match="at least one"):
        residual_stream_plot([])
    memory, weights = torch.zeros(5, 16), [torch.zeros(2, 4, 5)]
    with pytest.raises(
        ValueError, match=r"weights\[0\] must have shape \(h, L=3, S=5\)"
    ):
        memory_flow_plot(
            memory, weights, src_labels=list("abcde"), tgt_labels=list("xyz")
        )
    with pytest.raises(ValueError, match="src_labels must have S=5"):
        memory_flow_plot(
            memory, weights, src_labels=list("ab"), tgt_labels=list("wxyz")
        )
    with pytest.raises(ValueError, match=r"memory must have shape \(S, d_model\)"):
        memory_flow_plot(
            memory[None], weights, src_labels=list("abcde"), tgt_labels=list("wxyz")
        )
