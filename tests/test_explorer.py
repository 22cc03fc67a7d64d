"""The attention explorer's data: every stage, rounded, equal to the model's numbers."""

import json
import math

import pytest
import torch

from transformer import (
    DecoderOnlyConfig,
    DecoderOnlyTransformer,
    MultiHeadAttention,
    causal_mask,
    padding_mask,
)
from transformer.tools.explorer import (
    STAGES,
    AttentionExplorer,
    attention_stages,
    capture_attention,
)


def tiny_decoder_only():
    config = DecoderOnlyConfig(
        vocab_size=12, d_model=16, h=4, N=2, d_ff=32, dropout=0.0, max_len=16
    )
    return DecoderOnlyTransformer(config)


def test_capture_attention_records_every_layer_in_call_order():
    model = tiny_decoder_only()
    x = torch.randint(0, 12, (2, 6))
    calls = capture_attention(model, lambda: model(x))
    assert [c.name for c in calls] == [
        "stack.layers.0.self_attn",
        "stack.layers.1.self_attn",
    ]
    for call in calls:
        assert call.weights.shape == (2, 4, 6, 6)
        assert call.mask.shape == (2, 4, 6, 6)


def test_explorer_softmax_stage_equals_the_models_attn_weights():
    model = tiny_decoder_only()
    x = torch.randint(0, 12, (3, 7))
    explorer = AttentionExplorer("tiny", digits=3)
    explorer.add(
        "second sequence", model, lambda: model(x), queries=list("abcdefg"), index=1
    )
    data = json.loads(explorer.to_json())
    layers = data["examples"][0]["layers"]
    assert len(layers) == 2
    for layer, block in zip(layers, model.stack.layers):
        exported = torch.tensor(layer["stages"]["softmax"])  # (h, L, S)
        assert exported.shape == (4, 7, 7)
        # attn_weights of the last forward, which the explorer ran
        assert torch.allclose(
            exported, block.self_attn.attn_weights[1], atol=5e-4, rtol=0
        )


def test_explorer_stages_follow_each_other():
    torch.manual_seed(1)
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(1, 5, 8)
    explorer = AttentionExplorer("one module", digits=4)
    explorer.add(
        "causal", mha, lambda: mha(x, x, x, causal_mask(5)), queries=list("vwxyz")
    )
    stages = explorer.examples[0]["layers"][0]["stages"]
    assert list(stages) == list(STAGES)
    raw, scaled = torch.tensor(stages["raw"]), torch.tensor(stages["scaled"])
    q = mha.w_q(x).view(1, 5, 2, 4).transpose(1, 2)  # (B, h, L, d_k)
    k = mha.w_k(x).view(1, 5, 2, 4).transpose(1, 2)  # (B, h, S, d_k)
    assert torch.allclose(raw, (q @ k.transpose(-2, -1))[0].detach(), atol=1e-4)
    assert torch.allclose(scaled, raw / math.sqrt(4), atol=2e-4)
    for masked_head, scaled_head in zip(stages["masked"], stages["scaled"]):
        for i, (row, scaled_row) in enumerate(zip(masked_head, scaled_head)):
            # blocked keys (after the query) are -inf, exported as null
            assert row[i + 1 :] == [None] * (4 - i)
            assert row[: i + 1] == scaled_row[: i + 1]
    softmax = torch.tensor(stages["softmax"])
    assert torch.allclose(softmax.sum(-1), torch.ones(2, 5), atol=1e-3)
    assert torch.allclose(softmax, torch.softmax(torch.tensor(
        [[[v if v is not None else -math.inf for v in row] for row in head]
         for head in stages["masked"]]), dim=-1), atol=2e-3)  # fmt: skip


def test_attention_stages_mask_padding_keys_of_cross_attention():
    mha = MultiHeadAttention(8, 2).eval()
    query, memory = torch.randn(2, 3, 8), torch.randn(2, 5, 8)
    calls = capture_attention(
        mha, lambda: mha(query, memory, memory, padding_mask([5, 2]))
    )
    stages = attention_stages(calls[0])
    assert stages["masked"].shape == (2, 2, 3, 5)
    assert torch.isinf(stages["masked"][1, :, :, 2:]).all()
    assert torch.isfinite(stages["masked"][0]).all()
    assert torch.equal(stages["softmax"], calls[0].weights)


def test_explorer_html_holds_the_data_as_json_a_script_cannot_end_early():
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(1, 3, 8)
    explorer = AttentionExplorer("a </script> title")
    explorer.add(
        "tokens", mha, lambda: mha(x, x, x), queries=["<bos>", "</script>", "&"]
    )
    page = explorer._repr_html_()
    assert page.startswith('<div class="attention-explorer">')
    assert page.count("</script>") == 1  # only the tag's own end
    body = page.split('<script type="application/json">')[1].split("</script>")[0]
    data = json.loads(body)
    assert data["examples"][0]["queries"] == ["<bos>", "</script>", "&"]
    assert "AttentionExplorer('a </script> title': 1 examples: tokens)" == repr(
        explorer
    )


def test_explorer_restores_training_mode_and_leaves_no_hooks():
    mha = MultiHeadAttention(8, 2, dropout=0.5).train()
    x = torch.randn(1, 3, 8)
    calls = capture_attention(mha, lambda: mha(x, x, x))
    # evaluation mode while recording: no dropout in the weights
    assert torch.allclose(calls[0].weights.sum(-1), torch.ones(1, 2, 3))
    assert mha.training
    assert not mha._forward_hooks


def test_explorer_rejects_names_that_do_not_fit_the_positions():
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(1, 3, 8)
    with pytest.raises(ValueError, match=r"\(L, S\) = \(3, 3\).*got \(2, 3\)"):
        AttentionExplorer("t").add("e", mha, lambda: mha(x, x, x), queries=["a", "b"],
                                   keys=["a", "b", "c"])  # fmt: skip
    with pytest.raises(ValueError, match=r"index must be in \[0, 1\)"):
        AttentionExplorer("t").add(
            "e", mha, lambda: mha(x, x, x), queries="abc", index=1
        )


def test_explorer_rejects_bad_arguments():
    with pytest.raises(TypeError, match="model must be an nn.Module"):
        capture_attention("model", lambda: None)
    with pytest.raises(ValueError, match="must contain a MultiHeadAttention"):
        capture_attention(torch.nn.Linear(2, 2), lambda: None)
    with pytest.raises(TypeError, match="forward must be callable"):
        capture_attention(MultiHeadAttention(4, 2), None)
    with pytest.raises(ValueError, match="digits must be at least 0, got -1"):
        AttentionExplorer("t", digits=-1)
