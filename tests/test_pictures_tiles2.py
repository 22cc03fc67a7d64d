"""The picture of one step of tiled attention (transformer.plot.pictures_tiles2):
each box sits where the step's blocks are, with the step's shapes."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import pytest

from transformer.plot.pictures_tiles2 import tile_step


def _boxes(ax):
    found = {}
    for patch in ax.patches:
        if not patch.get_label().startswith("_"):
            found.setdefault(patch.get_label(), []).append(patch)
    return found


def test_the_step_marks_done_tiles_the_score_tile_and_tiles_to_come():
    ax = tile_step(256, 320, 64, query_block=2, key_block=1, d_k=32, d_v=16)
    boxes = _boxes(ax)
    assert len(boxes["done"]) == 1 and len(boxes["to come"]) == 3
    (tile,) = boxes["score tile"]
    assert (tile.get_x(), tile.get_y(), tile.get_width(), tile.get_height()) == (
        64,
        128,
        64,
        64,
    )
    (query,) = boxes["Q block"]
    assert (query.get_y(), query.get_width(), query.get_height()) == (128, 32, 64)
    (value,) = boxes["V block"]
    assert (value.get_x(), value.get_width(), value.get_height()) == (64, 64, 16)
    (acc,) = boxes["acc"]
    assert (acc.get_y(), acc.get_width(), acc.get_height()) == (128, 16, 64)
    texts = [t.get_text() for t in ax.texts]
    assert "scores\n64 × 64" in texts and "acc\n64 × 16" in texts
    plt.close(ax.figure)


def test_a_ragged_last_block_is_drawn_with_its_own_height():
    # L = 100 in blocks of 32: the last query block holds 4 rows.
    ax = tile_step(100, 100, 32, query_block=3, key_block=0, d_k=8)
    boxes = _boxes(ax)
    (tile,) = boxes["score tile"]
    assert (tile.get_height(), tile.get_width()) == (4, 32)
    assert "done" not in boxes and len(boxes["to come"]) == 3
    assert boxes["m"][0].get_height() == 4
    plt.close(ax.figure)


def test_blocks_out_of_the_grid_are_refused():
    with pytest.raises(ValueError, match="grid"):
        tile_step(64, 64, 32, query_block=2, key_block=0, d_k=8)
    with pytest.raises(ValueError, match="positive"):
        tile_step(64, 64, 0, query_block=0, key_block=0, d_k=8)
