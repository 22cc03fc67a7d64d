import pytest
import torch
import torch.nn.functional as F

from _support import assert_close, assert_gradients_reach_every_parameter
from transformer import PositionwiseFeedForward, SwiGLU, count_parameters


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("bias", [False, True])
def test_swiglu_computes_w_down_of_silu_gate_times_up(dtype, bias):
    ffn = SwiGLU(8, 12, bias=bias).to(dtype)
    x = torch.randn(2, 5, 8, dtype=dtype)
    expected = ffn.w_down(F.silu(ffn.w_gate(x)) * ffn.w_up(x))
    assert_close(ffn(x), expected)
    by_hand = (
        F.silu(x @ ffn.w_gate.weight.T) * (x @ ffn.w_up.weight.T)
    ) @ ffn.w_down.weight.T
    if not bias:
        assert_close(ffn(x), by_hand)


def test_swiglu_shapes_and_no_bias_by_default():
    ffn = SwiGLU(8, 12)
    assert ffn.w_gate.weight.shape == (12, 8) and ffn.w_up.weight.shape == (12, 8)
    assert ffn.w_down.weight.shape == (8, 12)
    assert all(m.bias is None for m in (ffn.w_gate, ffn.w_up, ffn.w_down))
    assert_gradients_reach_every_parameter(ffn, ffn(torch.randn(2, 3, 8)))


def test_swiglu_with_two_thirds_of_d_ff_has_the_parameters_of_a_relu_network():
    d_model, d_ff = 48, 192
    relu = PositionwiseFeedForward(d_model, d_ff)
    swiglu = SwiGLU(d_model, 2 * d_ff // 3)
    relu_weights = sum(p.numel() for n, p in relu.named_parameters() if "weight" in n)
    assert count_parameters(swiglu) == relu_weights == 2 * d_model * d_ff


def test_swiglu_takes_bias_and_dropout_by_keyword_only():
    with pytest.raises(TypeError, match="positional argument"):
        SwiGLU(8, 12, True)
    assert SwiGLU(8, 12, dropout=0.25).dropout.p == 0.25


def test_swiglu_rejects_an_input_of_another_dtype_than_its_weights():
    with pytest.raises(TypeError, match=r"x must have the dtype of .*float32"):
        SwiGLU(4, 8)(torch.randn(2, 3, 4, dtype=torch.float64))


def test_swiglu_rejects_bad_input():
    with pytest.raises(ValueError, match=r"\(B, L, d_model\).*\(2, 3, 5\)"):
        SwiGLU(4, 8)(torch.randn(2, 3, 5))
    with pytest.raises(ValueError, match="d_ff"):
        SwiGLU(4, 0)
    with pytest.raises(ValueError, match="dropout must be in"):
        SwiGLU(4, 8, dropout=1.0)
