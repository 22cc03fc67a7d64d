"""The tile pictures (transformer.plot.pictures_tiles): the tile states follow
the causal mask, and each figure draws the data it is given."""

import matplotlib

matplotlib.use("Agg")

import pytest
import torch

from transformer import count_flops, tiled_attention
from transformer.plot.pictures_tiles import (
    COMPUTED,
    PARTLY_MASKED,
    SKIPPED,
    causal_tiles,
    launch_grid_figure,
    tile_grid,
)


def test_causal_tiles_of_a_square_mask_are_full_below_partial_on_skipped_above():
    states = causal_tiles(64, 64, 16)
    n = 4
    expected = torch.full((n, n), SKIPPED)
    expected[torch.ones(n, n, dtype=torch.bool).tril(-1)] = COMPUTED
    expected[range(n), range(n)] = PARTLY_MASKED
    assert torch.equal(states, expected)


def test_causal_tiles_with_ragged_blocks_and_more_keys_than_queries():
    # Queries 0-9, keys 0-29, blocks of 8: the last query block holds rows 8-9.
    states = causal_tiles(10, 30, 8)
    assert states.shape == (2, 4)
    assert states[0].tolist() == [PARTLY_MASKED, SKIPPED, SKIPPED, SKIPPED]
    assert states[1].tolist() == [COMPUTED, PARTLY_MASKED, SKIPPED, SKIPPED]
    with pytest.raises(ValueError, match="positive"):
        causal_tiles(0, 4, 2)


def test_causal_tiles_computed_are_the_tiles_that_tiled_attention_computes():
    L, block = 128, 16
    q = torch.empty(1, 1, L, 8, device="meta")
    per_tile = count_flops(tiled_attention, q[..., :block, :], q[..., :block, :],
                           q[..., :block, :], block_size=block)  # fmt: skip
    causal = count_flops(tiled_attention, q, q, q, is_causal=True, block_size=block)
    computed = int((causal_tiles(L, L, block) != SKIPPED).sum())
    assert causal == computed * per_tile


def test_tile_grid_colours_every_tile_and_counts_each_state_in_the_legend():
    ax = tile_grid(causal_tiles(96, 96, 32), block_size=32)
    image = ax.get_images()[0].get_array()
    assert image.shape == (3, 3)
    assert ax.get_title() == "A causal mask in tiles: 6 of 9 computed"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert labels[:3] == [
        "computed in full: 3",
        "computed, partly masked: 3",
        "skipped: 3",
    ]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["0", "32", "64"]


def test_launch_grid_figure_labels_each_program_with_the_rows_it_wrote():
    L, block = 20, 8
    ids = torch.tensor([[0] * 8 + [1] * 8 + [2] * 4, [3] * 8 + [4] * 8 + [5] * 4])
    fig = launch_grid_figure(ids, block_size=block)
    left, right = fig.axes
    assert left.get_title() == "The launch grid: 2 × 3 programs"
    assert right.get_title() == "The rows each program wrote"
    assert right.get_ylabel() == "row written (L = 20)"
    texts = {t.get_text() for t in right.texts}
    assert "(0, 2): rows 16-19" in texts
    assert "(1, 0): rows 0-7" in texts
    assert "rows 20-23: masked, not written" in texts
    # Rows 20-23 do not exist: white (NaN) in the picture.
    shown = right.get_images()[0].get_array()
    assert shown.shape == (24, 2)
    assert shown.mask[L:].all() or bool(torch.isnan(torch.tensor(shown.data[L:])).all())


def test_launch_grid_figure_shows_a_row_no_program_wrote_as_empty():
    ids = torch.tensor([[0] * 8 + [-1] * 8])
    fig = launch_grid_figure(ids, block_size=8)
    texts = {t.get_text() for t in fig.axes[1].texts}
    assert "(0, 0): rows 0-7" in texts
    assert not any(t.startswith("(0, 1)") for t in texts)
