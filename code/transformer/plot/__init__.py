"""Figures for the book: one consistent, readable style for every chapter.

Plotting lives here and never in the model modules. Every helper takes an
optional ``ax`` so figures can be combined, and returns the ``Axes`` it drew
on. Figures have an opaque white background so they stay readable in the
site's dark mode. The heatmaps are in ``transformer.plot.heatmaps``, the
curves in ``transformer.plot.curves``; the architecture diagram has its
own module, :mod:`transformer.plot.diagram`; the pictures of heads as
blocks of columns and of positions on a circle are in
``transformer.plot.pictures_heads``.
curves in ``transformer.plot.curves``, the tiles of tiled attention and a
kernel's launch grid in ``transformer.plot.pictures_tiles``; the
architecture diagram has its own module, :mod:`transformer.plot.diagram`.
"""

from .curves import compare_curves, line_plot, position_accuracy_plot, training_curves
from .heatmaps import attention_grid, attention_heatmap, mask_heatmap, matrix_heatmap
from .pictures_blocks import layer_masks_figure, norm_placement_figure
from .pictures_early import attention_shapes_figure, embedding_lookup_figure
from .pictures_heads import head_columns_figure, sinusoid_circle_figure
from .pictures_sampling import sampling_cut_plot, sampling_cuts
from .pictures_tiles import causal_tiles, launch_grid_figure, tile_grid
from .style import BOOK_STYLE, MASK_COLORS, use_book_style

__all__ = [
    "BOOK_STYLE",
    "MASK_COLORS",
    "attention_grid",
    "attention_heatmap",
    "attention_shapes_figure",
    "compare_curves",
    "embedding_lookup_figure",
    "head_columns_figure",
    "layer_masks_figure",
    "causal_tiles",
    "compare_curves",
    "launch_grid_figure",
    "line_plot",
    "mask_heatmap",
    "matrix_heatmap",
    "norm_placement_figure",
    "position_accuracy_plot",
    "sampling_cut_plot",
    "sampling_cuts",
    "sinusoid_circle_figure",
    "tile_grid",
    "training_curves",
    "use_book_style",
]
