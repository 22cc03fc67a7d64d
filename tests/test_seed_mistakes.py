"""Regression tests for the two seed mistakes of the mistakes page (book/mistakes.md).

A positional table must follow the module through ``.to()`` and dtype casts,
and every Add & Norm must own its ``LayerNorm``.
"""

import pytest
import torch
import torch.nn as nn

from transformer import Decoder, Encoder, LayerNorm, SinusoidalPositionalEncoding


def test_sinusoidal_table_is_a_buffer_not_a_plain_attribute():
    module = SinusoidalPositionalEncoding(8, 16)
    assert "pe" in dict(module.named_buffers())
    assert "pe" not in module.__dict__  # a plain attribute would live here


def test_sinusoidal_table_follows_dtype_casts():
    module = SinusoidalPositionalEncoding(8, 16).double()
    assert module.pe.dtype == torch.float64
    x = torch.zeros(2, 5, 8, dtype=torch.float64)
    assert module(x).dtype == torch.float64
    assert module.half().pe.dtype == torch.float16


def test_sinusoidal_table_follows_the_module_to_another_device():
    module = SinusoidalPositionalEncoding(8, 16).to("meta")
    assert module.pe.device.type == "meta"
    out = module(torch.zeros(1, 4, 8, device="meta"))
    assert out.device.type == "meta" and out.shape == (1, 4, 8)


def test_sinusoidal_table_is_recomputed_not_saved():
    module = SinusoidalPositionalEncoding(8, 16)
    assert "pe" not in module.state_dict()
    fresh = SinusoidalPositionalEncoding(8, 16)
    fresh.load_state_dict(module.state_dict())
    assert torch.equal(fresh.pe, module.pe)


def test_plain_tensor_attribute_is_left_behind_as_the_mistakes_page_shows():
    # The reproduction of the bug, so that the page's claim stays true.
    class Buggy(nn.Module):
        def __init__(self):
            super().__init__()
            self.pe = torch.zeros(16, 8)

    module = Buggy().double().to("meta")
    assert module.pe.dtype == torch.float32 and module.pe.device.type == "cpu"
    assert "pe" not in module.state_dict()


@pytest.mark.parametrize("stack, per_layer", [(Encoder, 2), (Decoder, 3)])
@pytest.mark.parametrize("norm_first", [False, True])
def test_every_sublayer_owns_its_layer_norm(stack, per_layer, norm_first):
    N, d_model = 3, 8
    model = stack(d_model, 2, 16, N, norm_first=norm_first)
    norms = [m for m in model.modules() if isinstance(m, LayerNorm)]
    final = 1 if norm_first else 0
    assert len({id(m) for m in norms}) == len(norms) == per_layer * N + final
    # Each gain is its own tensor: changing one leaves the others alone.
    with torch.no_grad():
        norms[0].weight.add_(1.0)
    assert all(torch.equal(m.weight, torch.ones(d_model)) for m in norms[1:])


def test_a_shared_norm_is_visible_in_the_parameter_count():
    N, d_model = 3, 8
    model = Encoder(d_model, 2, 16, N)
    before = sum(p.numel() for p in model.parameters())
    shared = model.layers[0].add_norm1.norm
    for layer in model.layers:
        layer.add_norm1.norm = layer.add_norm2.norm = shared
    after = sum(p.numel() for p in model.parameters())
    assert before - after == (2 * N - 1) * 2 * d_model
