"""Tests of transformer.tools.inspection: the shape trace of a model."""

import pytest
import torch
import torch.nn as nn

from transformer import (
    AddNorm,
    EncoderLayer,
    Transformer,
    TransformerConfig,
    padding_mask,
)
from transformer.tools.inspection import (
    ShapeRecord,
    ShapeTrace,
    format_shape_trace,
    shape_trace,
)


def _tiny_transformer():
    torch.manual_seed(0)
    config = TransformerConfig(11, 11, d_model=12, h=2, N=2, d_ff=48, max_len=16)
    src = torch.randint(4, 11, (3, 5))
    tgt = torch.randint(4, 11, (3, 4))
    return Transformer(config).eval(), src, tgt, padding_mask([5, 3, 4])


def test_shape_trace_records_every_call_in_call_order():
    model, src, tgt, src_mask = _tiny_transformer()
    records = shape_trace(model, src, tgt, src_mask)
    assert records[0] == ShapeRecord(
        name="",
        kind="Transformer",
        depth=0,
        inputs=(
            ("0", (3, 5), torch.int64),
            ("1", (3, 4), torch.int64),
            ("2", (3, 1, 1, 5), torch.bool),
        ),
        outputs=(((3, 4, 11), torch.float32),),
    )
    top = [r.name for r in records if r.depth == 1]
    assert top == [
        *("src_embed", "positional", "encoder"),
        *("tgt_embed", "positional", "decoder", "out_proj"),
    ]
    # One record per call: the positional module (and its dropout) runs twice,
    # an nn.ModuleList is never called.
    modules = list(model.modules())
    calls = len(modules) + 2 - sum(isinstance(m, nn.ModuleList) for m in modules)
    assert len(records) == calls
    w_1 = next(r for r in records if r.name == "decoder.layers.1.feed_forward.w_1")
    assert w_1.inputs[0][1] == (3, 4, 12) and w_1.outputs[0][0] == (3, 4, 48)


def test_shape_trace_nests_sublayers_under_the_module_that_calls_them():
    model, src, tgt, src_mask = _tiny_transformer()
    records = shape_trace(model, src, tgt, src_mask)
    i = next(i for i, r in enumerate(records) if r.name == "encoder.layers.0.add_norm1")
    # The attention is a sibling of add_norm1 in the model, but add_norm1 calls it.
    assert records[i + 1].name == "encoder.layers.0.self_attn"
    assert records[i + 1].depth == records[i].depth + 1
    cross = next(r for r in records if r.name == "decoder.layers.0.cross_attn")
    # query, key, value, mask
    expected = [(3, 4, 12), (3, 5, 12), (3, 5, 12), (3, 1, 1, 5)]
    assert [shape for _, shape, _ in cross.inputs] == expected


def test_shape_trace_filters_by_depth_and_class():
    model, src, tgt, src_mask = _tiny_transformer()
    top = shape_trace(model, src, tgt, src_mask, max_depth=1)
    assert {r.depth for r in top} == {0, 1} and len(top) == 8
    records = shape_trace(model, src, tgt, src_mask, exclude=(nn.Dropout, AddNorm))
    assert not any(r.kind in ("Dropout", "AddNorm") for r in records)
    layer = next(r for r in records if r.name == "encoder.layers.0")
    attn = next(r for r in records if r.name == "encoder.layers.0.self_attn")
    assert attn.depth == layer.depth + 1  # the left-out AddNorm does not count


def test_shape_trace_records_keyword_arguments_and_tuple_outputs():
    class Pair(nn.Module):
        def forward(self, x, *, scale):
            return x * scale, x.sum(dim=-1)

    records = shape_trace(Pair(), torch.ones(2, 3), scale=torch.tensor(2.0))
    assert records[0].inputs == (
        ("0", (2, 3), torch.float32),
        ("scale", (), torch.float32),
    )
    assert records[0].outputs == (((2, 3), torch.float32), ((2,), torch.float32))


def test_shape_trace_removes_its_hooks_even_when_the_model_fails():
    layer = EncoderLayer(8, 2, 16)
    with pytest.raises(ValueError, match="x must have shape"):
        shape_trace(layer, torch.randn(2, 3, 5))
    assert all(
        not m._forward_hooks and not m._forward_pre_hooks for m in layer.modules()
    )


def test_shape_trace_leaves_the_model_and_its_gradients_alone():
    layer = EncoderLayer(8, 2, 16, dropout=0.1)
    records = shape_trace(layer, torch.randn(2, 3, 8))
    assert layer.training and all(p.grad is None for p in layer.parameters())
    assert records[0].outputs == (((2, 3, 8), torch.float32),)


def test_shape_trace_rejects_bad_arguments():
    with pytest.raises(TypeError, match="model must be an nn.Module"):
        shape_trace(lambda x: x, torch.ones(1))
    with pytest.raises(ValueError, match="max_depth must be None or an int >= 0"):
        shape_trace(nn.ReLU(), torch.ones(1), max_depth=-1)
    with pytest.raises(TypeError, match="exclude must hold nn.Module classes"):
        shape_trace(nn.ReLU(), torch.ones(1), exclude=(int,))


def test_format_shape_trace_is_an_aligned_indented_table():
    model, src, tgt, src_mask = _tiny_transformer()
    table = format_shape_trace(shape_trace(model, src, tgt, src_mask, max_depth=4))
    lines = table.splitlines()
    assert lines[0].split() == ["module", "class", "input", "shapes", "output", "shape"]
    assert set(lines[1]) == {"-"}
    assert lines[2].startswith("Transformer ") and "(3, 5) int64" in lines[2]
    assert "(3, 1, 1, 5) bool" in lines[2] and lines[2].endswith("(3, 4, 11)")
    layer = next(line for line in lines if "EncoderLayer" in line)
    assert layer.startswith("    layers.0 ")
    column = lines[0].index("class")
    assert all(line[column - 2 : column] == "  " for line in lines[2:])
    assert "float32" not in table
    attention = next(line for line in lines if "MultiHeadAttention" in line)
    assert "(3, 5, 12) ×3, (3, 1, 1, 5) bool" in attention  # query, key, value, mask
    assert "int64" not in format_shape_trace(shape_trace(model, src, tgt), dtypes=False)


def test_shape_trace_prints_as_text_and_shows_as_html():
    model, src, tgt, src_mask = _tiny_transformer()
    trace = shape_trace(model, src, tgt, src_mask, max_depth=2)
    assert isinstance(trace, ShapeTrace) and isinstance(trace, list)
    assert str(trace) == format_shape_trace(trace)
    page = trace._repr_html_()
    assert page.startswith('<table class="shape-trace"') and page.endswith("</table>")
    assert page.count("<tr>") == len(trace) + 1  # a header row, then one row per call
    assert "<code>layers.0</code></td>" in page and ">EncoderLayer</td>" in page
    assert "(3, 1, 1, 5) bool" in page and "0.1em 2.8em" in page  # depth 2 is indented
