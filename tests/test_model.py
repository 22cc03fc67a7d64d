import pytest
import torch

from _support import (
    assert_dropout_only_in_training,
    assert_gradients_reach_every_parameter,
)
from transformer import Transformer, TransformerConfig, causal_mask, padding_mask

V_SRC, V_TGT = 11, 13


def model(**kwargs):
    torch.manual_seed(0)
    sizes = {
        "d_model": 16,
        "h": 4,
        "N": 2,
        "d_ff": 32,
        "max_len": 12,
        "dropout": 0.0,
        **kwargs,
    }
    return Transformer(TransformerConfig(V_SRC, V_TGT, **sizes)).eval()


def ids(V, B, L, seed=1):
    return torch.randint(0, V, (B, L), generator=torch.Generator().manual_seed(seed))


def test_transformer_returns_logits_over_the_target_vocabulary():
    logits = model()(ids(V_SRC, 3, 7), ids(V_TGT, 3, 5))
    assert logits.shape == (3, 5, V_TGT)


def test_transformer_forward_equals_encode_then_decode():
    net = model(norm_first=True, positional="learned")
    src, tgt, src_mask = ids(V_SRC, 2, 7), ids(V_TGT, 2, 5), padding_mask([7, 4])
    memory = net.encode(src, src_mask)
    assert memory.shape == (2, 7, 16)
    torch.testing.assert_close(
        net(src, tgt, src_mask), net.decode(tgt, memory, src_mask)
    )


def test_transformer_applies_a_causal_mask_when_tgt_mask_is_none():
    net = model()
    src, tgt = ids(V_SRC, 2, 7), ids(V_TGT, 2, 6)
    changed = tgt.clone()
    changed[:, 4:] = (tgt[:, 4:] + 1) % V_TGT
    torch.testing.assert_close(net(src, tgt)[:, :4], net(src, changed)[:, :4])
    torch.testing.assert_close(net(src, tgt), net(src, tgt, tgt_mask=causal_mask(6)))


def test_transformer_explicit_tgt_mask_replaces_the_causal_mask():
    net = model()
    src, tgt = ids(V_SRC, 2, 7), ids(V_TGT, 2, 6)
    changed = tgt.clone()
    changed[:, 5] = (tgt[:, 5] + 1) % V_TGT
    see_all = torch.ones(6, 6, dtype=torch.bool)
    assert not torch.allclose(
        net(src, tgt, tgt_mask=see_all)[:, 0], net(src, changed, tgt_mask=see_all)[:, 0]
    )


def test_transformer_padded_source_tokens_do_not_change_logits():
    net = model()
    src, tgt, src_mask = ids(V_SRC, 2, 7), ids(V_TGT, 2, 5), padding_mask([7, 3])
    changed = src.clone()
    changed[1, 3:] = 0
    torch.testing.assert_close(net(src, tgt, src_mask), net(changed, tgt, src_mask))


def test_transformer_share_embeddings_ties_three_matrices():
    net = Transformer(
        TransformerConfig(9, 9, d_model=8, h=2, N=1, d_ff=8, share_embeddings=True)
    )
    assert net.src_embed.weight is net.tgt_embed.weight is net.out_proj.weight


@pytest.mark.parametrize("share_embeddings", [False, True])
def test_transformer_gradients_reach_every_parameter(share_embeddings):
    net = Transformer(
        TransformerConfig(
            9,
            9,
            d_model=8,
            h=2,
            N=2,
            d_ff=8,
            positional="learned",
            share_embeddings=share_embeddings,
        )
    )
    assert_gradients_reach_every_parameter(net, net(ids(9, 2, 5), ids(9, 2, 4)))


def test_transformer_dropout_acts_only_in_training():
    net = model(dropout=0.3)
    src, tgt = ids(V_SRC, 2, 7), ids(V_TGT, 2, 5)
    assert_dropout_only_in_training(net, lambda: net(src, tgt))


def test_transformer_rejects_what_is_not_its_config():
    with pytest.raises(TypeError, match="config must be a TransformerConfig, got dict"):
        Transformer({"src_vocab_size": 3})


SRC, TGT = ids(V_SRC, 2, 7), ids(V_TGT, 2, 5)


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (
            (SRC.float(), TGT),
            TypeError,
            r"src must hold integer token ids \(torch.long\), got dtype torch.float32",
        ),
        (
            (SRC, TGT + V_TGT),
            ValueError,
            r"tgt must hold token ids in \[0, V\) = \[0, 13\)",
        ),
        (
            (SRC - 20, TGT),
            ValueError,
            r"src must hold token ids in \[0, V\) = \[0, 11\), got -",
        ),
        (
            (SRC[0], TGT),
            ValueError,
            r"src must have 2 dimensions \(B, L\), got shape \(7,\)",
        ),
        (
            (SRC[:, :0], TGT),
            ValueError,
            r"src must not be empty \(B, L\), got shape \(2, 0\)",
        ),
        (
            (ids(V_SRC, 2, 13), TGT),
            ValueError,
            r"src must have shape \(B, L\) with L <= max_len = 12, got shape \(2, 13\)",
        ),
        (
            (SRC, ids(V_TGT, 2, 13)),
            ValueError,
            r"tgt must have shape \(B, L\) with L <= max_len = 12, got shape \(2, 13\)",
        ),
        (
            (SRC, TGT[:1]),
            ValueError,
            r"tgt must have shape \(B, L\) with B=2 as in src, got shape \(1, 5\)",
        ),
        (
            (SRC, TGT, causal_mask(7)),
            ValueError,
            r"src_mask must be 4-D and broadcast to \(B, h, S, S\) = \(2, 4, 7, 7\), "
            r"got shape \(7, 7\)",
        ),
        (
            (SRC, TGT, torch.ones(2, 1, 7, 7, dtype=torch.bool)),
            ValueError,
            r"src_mask must broadcast to \(B, h, L, S\) = \(2, 4, 5, 7\), got shape "
            r"\(2, 1, 7, 7\)",
        ),
        (
            (SRC, TGT, padding_mask([5, 3])),
            ValueError,
            r"src_mask must broadcast to \(B, h, S, S\) = \(2, 4, 7, 7\), got shape "
            r"\(2, 1, 1, 5\)",
        ),
        (
            (SRC, TGT, padding_mask([7, 3]).long()),
            TypeError,
            "src_mask must be a boolean tensor",
        ),
        (
            (SRC, TGT, None, causal_mask(7)),
            ValueError,
            r"tgt_mask must broadcast to \(B, h, L, L\) = \(2, 4, 5, 5\), got shape "
            r"\(7, 7\)",
        ),
    ],
)
def test_transformer_rejects_bad_inputs(args, error, match):
    with pytest.raises(error, match=match):
        model()(*args)


def test_transformer_decode_rejects_bad_memory():
    net = model()
    with pytest.raises(
        ValueError,
        match=r"memory must have shape \(B, S, d_model\) with last dimension 16",
    ):
        net.decode(TGT, torch.randn(2, 7, 8))
