import pytest
import torch

from _support import (
    assert_dropout_only_in_training,
    assert_gradients_reach_every_parameter,
)
from transformer import (
    DecoderOnlyConfig,
    DecoderOnlyTransformer,
    TransformerConfig,
    causal_mask,
)

V = 10


def model(**kwargs):
    torch.manual_seed(0)
    sizes = {
        "d_model": 16,
        "h": 4,
        "N": 2,
        "d_ff": 32,
        "max_len": 8,
        "dropout": 0.0,
        **kwargs,
    }
    return DecoderOnlyTransformer(DecoderOnlyConfig(vocab_size=V, **sizes)).eval()


X = torch.randint(0, V, (3, 6), generator=torch.Generator().manual_seed(1))


def with_changed_tail(x, start):
    changed = x.clone()
    changed[:, start:] = (x[:, start:] + 1) % V
    return changed


def test_decoder_only_transformer_returns_logits_over_the_vocabulary():
    assert model()(X).shape == (3, 6, V)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_only_transformer_is_causal_by_default(norm_first):
    net = model(norm_first=norm_first)
    torch.testing.assert_close(net(X)[:, :4], net(with_changed_tail(X, 4))[:, :4])
    torch.testing.assert_close(net(X), net(X, causal_mask(6)))


def test_decoder_only_transformer_explicit_mask_replaces_the_causal_mask():
    net = model()
    prefix = (
        3  # a prefix-LM mask: the first 3 tokens see each other, the rest are causal
    )
    mask = causal_mask(6)
    mask[:prefix, :prefix] = True
    out, changed = net(X, mask), net(with_changed_tail(X, 2), mask)
    assert not torch.allclose(out[:, :2], changed[:, :2])
    torch.testing.assert_close(
        net(X, mask)[:, :2], net(with_changed_tail(X, 3), mask)[:, :2]
    )


def test_decoder_only_transformer_share_embeddings_ties_the_output_projection():
    net = model(share_embeddings=True)
    assert net.out_proj.weight is net.embed.weight


@pytest.mark.parametrize("share_embeddings", [False, True])
def test_decoder_only_transformer_gradients_reach_every_parameter(share_embeddings):
    net = model(share_embeddings=share_embeddings, positional="learned", max_len=6)
    assert_gradients_reach_every_parameter(net, net(X))


def test_decoder_only_transformer_dropout_acts_only_in_training():
    net = model(dropout=0.3)
    assert_dropout_only_in_training(net, lambda: net(X))


def test_decoder_only_transformer_rejects_what_is_not_its_config():
    with pytest.raises(
        TypeError, match="config must be a DecoderOnlyConfig, got TransformerConfig"
    ):
        DecoderOnlyTransformer(TransformerConfig(3, 3))


@pytest.mark.parametrize(
    ("args", "error", "match"),
    [
        (
            (X + V,),
            ValueError,
            r"x must hold token ids in \[0, V\) = \[0, 10\), got 1\d",
        ),
        ((X.double(),), TypeError, r"x must hold integer token ids"),
        (
            (torch.zeros(2, 9, dtype=torch.long),),
            ValueError,
            r"x must have shape \(B, L\) with L <= max_len = 8, got shape \(2, 9\)",
        ),
        ((X[:, :0],), ValueError, r"x must not be empty"),
        (
            (X, causal_mask(5)),
            ValueError,
            r"mask must broadcast to \(B, h, L, L\) = \(3, 4, 6, 6\), got shape "
            r"\(5, 5\)",
        ),
        ((X, causal_mask(6).float()), TypeError, r"mask must be a boolean tensor"),
    ],
)
def test_decoder_only_transformer_rejects_bad_inputs(args, error, match):
    with pytest.raises(error, match=match):
        model()(*args)
