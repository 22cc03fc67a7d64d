import pytest
import torch
import torch.nn as nn
from hypothesis import given, settings
from hypothesis import strategies as st

from _support import assert_close, assert_gradients_reach_every_parameter
from transformer import RMSNorm


@settings(max_examples=25, deadline=None)
@given(
    shape=st.lists(st.integers(1, 5), min_size=0, max_size=3),
    d_model=st.integers(1, 9),
    eps=st.sampled_from([1e-6, 1e-5, 0.1]),
    dtype=st.sampled_from([torch.float32, torch.float64]),
)
def test_rms_norm_equals_torch_rms_norm(shape, d_model, eps, dtype):
    ours, theirs = (
        RMSNorm(d_model, eps).to(dtype),
        nn.RMSNorm(d_model, eps, dtype=dtype),
    )
    with torch.no_grad():
        theirs.weight.normal_()
        ours.weight.copy_(theirs.weight)
    x = torch.randn(*shape, d_model, dtype=dtype) * 3 + 1
    assert_close(ours(x), theirs(x))


def test_rms_norm_gives_unit_root_mean_square_and_keeps_the_mean():
    x = torch.tensor([[1.0, 2.0, 3.0, 6.0]])
    out = RMSNorm(4, eps=1e-12)(x)
    assert torch.allclose(out.pow(2).mean(-1), torch.ones(1))
    assert out.mean() > 0  # no mean is subtracted


def test_rms_norm_gain_gets_gradients_and_there_is_no_bias():
    norm = RMSNorm(6)
    assert [name for name, _ in norm.named_parameters()] == ["weight"]
    assert_gradients_reach_every_parameter(norm, norm(torch.randn(2, 3, 6)))


def test_rms_norm_rejects_bad_input():
    with pytest.raises(ValueError, match=r"d_model.*\(2, 3, 5\)"):
        RMSNorm(4)(torch.randn(2, 3, 5))
    with pytest.raises(TypeError, match="x"):
        RMSNorm(4)([1.0, 2.0])
    with pytest.raises(ValueError, match="eps"):
        RMSNorm(4, eps=0.0)
