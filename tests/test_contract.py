"""The input checks: at most three lines in a core routine, run once per call path,
and switchable off."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

import transformer
import transformer.checks.layers
import transformer.checks.models
import transformer.checks.multihead
from transformer import (
    AddNorm,
    MultiHeadAttention,
    Transformer,
    TransformerConfig,
    causal_mask,
    no_checks,
    padding_mask,
    set_checks,
)

PACKAGE = Path(transformer.__file__).resolve().parent

CORE_ROUTINES = [
    ("parts/attention", "scaled_dot_product_attention"),
    ("parts/tiled_attention", "tiled_attention"),
    ("parts/flash_attention", "flash_attention"),
    ("parts/masks", "causal_mask"),
    ("parts/masks", "padding_mask"),
    ("parts/masks", "prefix_lm_mask"),
    ("parts/multihead", "MultiHeadAttention.__init__"),
    ("parts/multihead", "MultiHeadAttention.forward"),
    ("parts/gqa", "GroupedQueryAttention.__init__"),
    ("parts/feedforward", "PositionwiseFeedForward.__init__"),
    ("parts/feedforward", "PositionwiseFeedForward.forward"),
    ("parts/swiglu", "SwiGLU.__init__"),
    ("parts/swiglu", "SwiGLU.forward"),
    ("parts/norm", "LayerNorm.__init__"),
    ("parts/norm", "LayerNorm.forward"),
    ("parts/norm", "AddNorm.__init__"),
    ("parts/norm", "AddNorm.forward"),
    ("parts/rmsnorm", "RMSNorm.__init__"),
    ("parts/rmsnorm", "RMSNorm.forward"),
    ("parts/positional", "SinusoidalPositionalEncoding.__init__"),
    ("parts/positional", "SinusoidalPositionalEncoding.forward"),
    ("parts/positional", "LearnedPositionalEmbedding.__init__"),
    ("parts/positional", "LearnedPositionalEmbedding.forward"),
    ("parts/positional", "_add_positions"),
    ("parts/rotary", "RotaryEmbedding.__init__"),
    ("parts/rotary", "RotaryEmbedding.forward"),
    ("parts/rotary", "EmbeddingDropout.__init__"),
    ("parts/rotary", "EmbeddingDropout.forward"),
    ("parts/embedding", "TokenEmbedding.__init__"),
    ("parts/embedding", "TokenEmbedding.forward"),
    ("models/layers", "EncoderLayer.__init__"),
    ("models/layers", "EncoderLayer.forward"),
    ("models/layers", "DecoderLayer.__init__"),
    ("models/layers", "DecoderLayer.forward"),
    ("models/stacks", "Encoder.__init__"),
    ("models/stacks", "Encoder.forward"),
    ("models/stacks", "Decoder.__init__"),
    ("models/stacks", "Decoder.forward"),
    ("models/encoder_decoder", "Transformer.__init__"),
    ("models/encoder_decoder", "Transformer.forward"),
    ("models/encoder_decoder", "Transformer.encode"),
    ("models/encoder_decoder", "Transformer.decode"),
    ("models/decoder_only", "DecoderOnlyTransformer.__init__"),
    ("models/decoder_only", "DecoderOnlyTransformer.forward"),
]


def find_function(module: str, qualname: str) -> ast.FunctionDef:
    tree = ast.parse((PACKAGE / f"{module}.py").read_text())
    node: ast.AST = tree
    for part in qualname.split("."):
        node = next(
            n
            for n in node.body
            if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == part
        )
    return node


def is_check_call(stmt: ast.stmt) -> bool:
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    func = stmt.value.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
    return name.startswith(("check_", "_check"))


def validation_lines(function: ast.FunctionDef) -> int:
    """Lines of the body that validate: check calls, raises, ``if ...: raise``."""

    def count(statements: list[ast.stmt]) -> int:
        total = 0
        for stmt in statements:
            raises = isinstance(stmt, ast.Raise) or (
                isinstance(stmt, ast.If)
                and any(isinstance(s, ast.Raise) for s in ast.walk(stmt))
            )
            if is_check_call(stmt) or raises:
                total += stmt.end_lineno - stmt.lineno + 1
            else:
                for field in ("body", "orelse", "finalbody", "handlers"):
                    total += count(getattr(stmt, field, []))
        return total

    return count(function.body)


@pytest.mark.parametrize(("module", "qualname"), CORE_ROUTINES)
def test_a_core_routine_spends_at_most_three_lines_on_validation(module, qualname):
    assert validation_lines(find_function(module, qualname)) <= 3


def test_the_line_counter_counts_an_inline_check():
    source = (
        "def f(x):\n"
        "    check_tensor('x', x)\n"
        "    if x.dim() != 3:\n"
        "        raise ValueError('x')\n"
        "    return x\n"
    )
    assert validation_lines(ast.parse(source).body[0]) == 3


@pytest.mark.parametrize(
    ("module", "qualname"), [r for r in CORE_ROUTINES if r[1] != "_add_positions"]
)
def test_a_public_entry_starts_with_its_one_check(module, qualname):
    body = find_function(module, qualname).body
    if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]  # the docstring
    assert is_check_call(body[0])
    assert sum(is_check_call(s) for s in body) == 1


CONFIG = TransformerConfig(
    src_vocab_size=11, tgt_vocab_size=13, d_model=16, h=4, d_ff=32, N=2, max_len=12
)


def test_a_model_forward_checks_each_mask_once_and_reads_the_ids_once(monkeypatch):
    transformer.setup(quiet=True)
    model = Transformer(CONFIG).eval()
    src, tgt = torch.randint(0, 11, (2, 7)), torch.randint(0, 13, (2, 5))
    calls: list[str] = []
    ranges: list[int] = []
    for module in (
        transformer.checks.models,
        transformer.checks.layers,
        transformer.checks.masks,  # check_attention_mask calls its check_mask
    ):
        original = module.check_mask
        monkeypatch.setattr(
            module,
            "check_mask",
            lambda name, *a, _f=original, **k: calls.append(name) or _f(name, *a, **k),
        )
    original_range = transformer.checks.models.check_id_range
    monkeypatch.setattr(
        transformer.checks.models,
        "check_id_range",
        lambda *items: ranges.append(len(items)) or original_range(*items),
    )
    model(src, tgt, padding_mask([7, 4]), causal_mask(5) & padding_mask([5, 3]))
    # The source mask serves two attentions, (B, h, S, S) and (B, h, L, S).
    assert sorted(calls) == ["src_mask", "src_mask", "tgt_mask"]
    assert ranges == [2]  # src and tgt, in one read
    calls.clear()
    model(src, tgt, padding_mask([7, 4]), causal_mask(5) & padding_mask([5, 3]))
    assert len(calls) == 3  # the next call checks again


def test_a_failed_check_leaves_the_next_call_checked():
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(2, 3, 8)
    with pytest.raises(ValueError, match="mask must broadcast"):
        mha(x, x, x, torch.ones(4, 4, dtype=torch.bool))
    with pytest.raises(ValueError, match="query must have shape"):
        mha(torch.randn(2, 3, 5), x, x)


def test_a_sublayer_given_to_add_norm_is_still_checked():
    add_norm, mha = AddNorm(8), MultiHeadAttention(8, 2)
    x, bad = torch.randn(2, 3, 8), torch.ones(4, 4, dtype=torch.bool)
    with pytest.raises(ValueError, match=r"mask must broadcast to \(B, h, L, S\)"):
        add_norm(x, lambda y: mha(y, y, y, bad))


def test_checks_can_be_turned_off_and_on_again():
    mha = MultiHeadAttention(8, 2)
    x = torch.randn(2, 3, 8)
    wrong_dtype_mask = torch.ones(3, 3, dtype=torch.long)
    with pytest.raises(TypeError, match="mask must be a boolean tensor"):
        mha(x, x, x, wrong_dtype_mask)
    with no_checks():
        # Unchecked, the long mask reaches PyTorch, which rejects `~` on
        # nothing, or masks wrongly: either way not our message.
        try:
            mha(x, x, x, wrong_dtype_mask)
        except (RuntimeError, TypeError) as error:
            assert "must be a boolean tensor" not in str(error)
    with pytest.raises(TypeError, match="mask must be a boolean tensor"):
        mha(x, x, x, wrong_dtype_mask)
    assert set_checks(False) is True
    try:
        assert set_checks(True) is False
    finally:
        set_checks(True)


def test_set_checks_wants_a_bool():
    with pytest.raises(TypeError, match="enabled must be a bool, got int"):
        set_checks(0)


def test_trace_checks_records_each_entry_and_what_its_check_did():
    from transformer.checks.contract import contract, entry, trace_checks

    @contract
    def check_positive(x):
        if x <= 0:
            raise ValueError("x must be positive")

    @entry
    def halve(x):
        check_positive(x)
        return x / 2

    @entry
    def halve_twice(x):  # no check of its own
        return halve(halve(x))

    with trace_checks() as trace:
        assert halve_twice(8) == 2
        halve(4)
    prefix = "test_trace_checks_records_each_entry_and_what_its_check_did.<locals>."
    names = [line.replace(prefix, "") for line in trace]
    assert names == [
        "halve_twice",
        "  halve",
        "    check_positive runs",
        "  halve",
        "    check_positive skipped",
        "halve",
        "  check_positive runs",
    ]
    with trace_checks() as trace, no_checks():
        halve(4)
    assert [line.replace(prefix, "") for line in trace] == [
        "halve",
        "  check_positive skipped",
    ]
    halve(4)  # outside the block nothing is recorded
    assert len(trace) == 2


def test_trace_checks_of_a_model_runs_only_the_outermost_check():
    from transformer.checks.contract import trace_checks

    torch.manual_seed(0)
    config = TransformerConfig(12, 12, d_model=8, h=2, N=2, d_ff=16, max_len=16)
    model = Transformer(config).eval()
    src = torch.randint(4, 12, (2, 5))
    with trace_checks() as trace:
        model.encode(src)
    assert trace[0] == "Transformer.encode"
    assert trace[1] == "  check_encode_inputs runs"
    ran = [line for line in trace if line.endswith(" runs")]
    assert ran == [trace[1]]
    assert sum(line.strip() == "EncoderLayer.forward" for line in trace) == 2
