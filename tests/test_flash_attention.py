"""flash_attention's Triton kernels against PyTorch's attention, under the interpreter.

Triton decides when it is first imported whether its kernels run natively or
under its interpreter, so this file switches the interpreter on for the whole
test process when it is collected, before any test imports triton (the flop
counter of test_cost does). The GPU test runs in a fresh process without it.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

os.environ["TRITON_INTERPRET"] = "1"

import pytest  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from conftest import ROOT  # noqa: E402
from transformer import flash_attention  # noqa: E402

# (L, S, d, h, h_kv, is_causal, block_size): together they cover every d, both
# masks, L < S and L > S, lengths that are not a multiple of the block, one
# block and several, and h_kv < h.
CASES = [
    (7, 7, 16, 2, 2, False, 16),
    (50, 50, 16, 4, 2, True, 16),
    (37, 70, 32, 4, 2, True, 16),
    (70, 37, 64, 4, 1, True, 32),
    (33, 45, 128, 2, 2, False, 32),
    (45, 33, 32, 3, 1, False, 16),
]


def inputs(L, S, d, h, h_kv, dtype=torch.float32, device="cpu"):
    g = torch.Generator().manual_seed(L * 1000 + S * 10 + d)
    shapes = [(2, h, L, d), (2, h_kv, S, d), (2, h_kv, S, d)]
    return [
        torch.randn(s, generator=g).to(device, dtype).requires_grad_() for s in shapes
    ]


@pytest.mark.parametrize("L, S, d, h, h_kv, is_causal, block_size", CASES)
def test_flash_attention_equals_torch_sdpa_with_gradients(
    L, S, d, h, h_kv, is_causal, block_size
):
    q, k, v = inputs(L, S, d, h, h_kv)
    ours = flash_attention(q, k, v, is_causal=is_causal, block_size=block_size)
    theirs = F.scaled_dot_product_attention(
        q, k, v, is_causal=is_causal, enable_gqa=h_kv < h
    )
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=0)
    grad = torch.randn_like(ours)
    ours_grads = torch.autograd.grad(ours, (q, k, v), grad)
    theirs_grads = torch.autograd.grad(theirs, (q, k, v), grad)
    for name, a, b in zip("qkv", ours_grads, theirs_grads):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=0, msg=f"d{name}")


def test_flash_attention_skips_the_key_blocks_in_every_query_s_future():
    # A NaN value that the kernel reads reaches the output even where it is
    # masked (0 · NaN = NaN), so a finite row proves its block never read it.
    q, k, v = (t.detach() for t in inputs(64, 64, 16, 1, 1))
    v[:, :, 48:] = float("nan")
    out = flash_attention(q, k, v, is_causal=True, block_size=16)
    assert out[:, :, :48].isfinite().all()
    assert out[:, :, 48:].isnan().all()
    # Without the causal mask every block reads every key.
    assert flash_attention(q, k, v, block_size=16).isnan().all()


def test_flash_attention_gives_a_query_head_the_keys_of_its_group():
    q, k, v = (t.detach() for t in inputs(20, 24, 32, 4, 2))
    out = flash_attention(q, k, v)
    # Heads 0 and 1 share key/value head 0; heads 2 and 3 share head 1.
    repeated = flash_attention(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1))
    torch.testing.assert_close(out, repeated, atol=1e-6, rtol=0)


def test_flash_attention_rejects_bad_input():
    q = torch.randn(1, 4, 8, 16)
    k = torch.randn(1, 2, 8, 16)
    with pytest.raises(ValueError, match=r"query.*4 dimensions.*\(4, 8, 16\)"):
        flash_attention(q[0], k, k)
    with pytest.raises(ValueError, match=r"one of \(16, 32, 64, 128\).*\(1, 4, 8, 8\)"):
        flash_attention(q[..., :8], k[..., :8], k[..., :8])
    with pytest.raises(ValueError, match=r"h_kv dividing h = 4.*\(1, 3, 8, 16\)"):
        flash_attention(q, torch.randn(1, 3, 8, 16), torch.randn(1, 3, 8, 16))
    with pytest.raises(ValueError, match=r"key.*B = 1.*\(2, 2, 8, 16\)"):
        flash_attention(q, torch.randn(2, 2, 8, 16), torch.randn(2, 2, 8, 16))
    with pytest.raises(ValueError, match=r"value.*\(1, 2, 8, 16\).*\(1, 2, 9, 16\)"):
        flash_attention(q, k, torch.randn(1, 2, 9, 16))
    with pytest.raises(TypeError, match="dtype of query"):
        flash_attention(q, k.double(), k)
    with pytest.raises(TypeError, match="float32, float16 or bfloat16"):
        flash_attention(q.double(), k.double(), k.double())
    with pytest.raises(TypeError, match="bfloat16"):
        flash_attention(*(t.bfloat16() for t in (q, k, k)))
    with pytest.raises(TypeError, match="is_causal"):
        flash_attention(q, k, k, is_causal=1)
    with pytest.raises(ValueError, match="block_size.*power of two.*24"):
        flash_attention(q, k, k, block_size=24)
    with pytest.raises(TypeError, match="key.*Tensor"):
        flash_attention(q, None, k)


def run_fresh(code: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )


def test_importing_the_package_leaves_triton_unimported():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT / "code")
    code = "import sys, transformer; print('triton' in sys.modules)"
    result = run_fresh(code, env)
    assert result.stdout.strip() == "False", result.stderr


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_flash_attention_runs_natively_on_a_gpu_in_bfloat16():
    # A fresh process, so that triton is imported without the interpreter.
    code = """
        import torch, torch.nn.functional as F
        from transformer import flash_attention
        g = torch.Generator().manual_seed(0)
        cases = [(1000, 1000, 8, 2, True), (300, 517, 4, 4, False)]
        for L, S, h, h_kv, causal in cases:
            shapes = [(2, h, L, 64), (2, h_kv, S, 64), (2, h_kv, S, 64)]
            q, k, v = (torch.randn(s, generator=g).cuda().bfloat16().requires_grad_()
                       for s in shapes)
            ours = flash_attention(q, k, v, is_causal=causal)
            theirs = F.scaled_dot_product_attention(
                q, k, v, is_causal=causal, enable_gqa=h_kv < h)
            torch.testing.assert_close(ours, theirs, atol=2e-2, rtol=2e-2)
            grad = torch.randn_like(ours)
            for a, b in zip(torch.autograd.grad(ours, (q, k, v), grad),
                            torch.autograd.grad(theirs, (q, k, v), grad)):
                torch.testing.assert_close(a, b, atol=5e-2, rtol=5e-2)
        print("ok")
    """
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["PYTHONPATH"] = str(ROOT / "code")
    result = run_fresh(code, env)
    assert result.stdout.strip() == "ok", result.stderr


def test_write_program_ids_writes_each_block_once_and_nothing_past_L():
    from transformer.parts import flash_kernels

    # Room for 48 rows per head, but L = 40: rows 40-47 must stay untouched.
    out = torch.full((3, 48, 16), -1, dtype=torch.int32)
    grid = (3, 3)
    flash_kernels.write_program_ids[grid](
        out, 40, out.stride(0), out.stride(1), D=16, BLOCK=16
    )
    rows = torch.arange(40)
    expected = torch.arange(3)[:, None] * 3 + rows[None, :] // 16
    assert torch.equal(out[:, :40], expected[:, :, None].expand(3, 40, 16).int())
    assert (out[:, 40:] == -1).all()


def test_write_program_ids_follows_the_strides_of_a_transposed_view():
    from transformer.parts import flash_kernels

    contiguous = torch.full((2, 32, 16), -1, dtype=torch.int32)
    # (2, 32, 16) viewed on memory laid out as (32, 2, 16): strides (16, 32, 1)
    view = torch.full((32, 2, 16), -1, dtype=torch.int32).transpose(0, 1)
    for out in (contiguous, view):
        flash_kernels.write_program_ids[(2, 2)](
            out, 32, out.stride(0), out.stride(1), D=16, BLOCK=16
        )
    assert torch.equal(view, contiguous)


def test_softmax_scores_equals_the_softmax_of_the_scaled_scores():
    from transformer.parts import flash_kernels

    g = torch.Generator().manual_seed(3)
    L, S, d = 37, 21, 16
    q, k = torch.randn(L, d, generator=g), torch.randn(S, d, generator=g)
    p = torch.full((L, S), float("nan"))
    flash_kernels.softmax_scores[(3,)](
        q, k, p, L, S, d**-0.5, D=d, BLOCK=16, S_BLOCK=32
    )
    torch.testing.assert_close(p, torch.softmax(q @ k.T * d**-0.5, dim=-1))
