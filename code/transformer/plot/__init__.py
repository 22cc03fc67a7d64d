"""Figures for the book: one consistent, readable style for every chapter.

Plotting lives here and never in the model modules. Every helper takes an
optional ``ax`` so figures can be combined, and returns the ``Axes`` it drew
on. Figures have an opaque white background so they stay readable in the
site's dark mode. The heatmaps are in ``transformer.plot.heatmaps``, the
curves in ``transformer.plot.curves``; the architecture diagram has its
own module, :mod:`transformer.plot.diagram`, and the token grids of decoding
modes and data layouts theirs, ``transformer.plot.pictures_training``.
"""

from .curves import compare_curves, line_plot, position_accuracy_plot, training_curves
from .heatmaps import attention_grid, attention_heatmap, mask_heatmap, matrix_heatmap
from .pictures_training import decoding_modes_figure, lm_layouts_figure
from .style import BOOK_STYLE, MASK_COLORS, use_book_style

__all__ = [
    "BOOK_STYLE",
    "MASK_COLORS",
    "attention_grid",
    "attention_heatmap",
    "compare_curves",
    "decoding_modes_figure",
    "line_plot",
    "lm_layouts_figure",
    "mask_heatmap",
    "matrix_heatmap",
    "position_accuracy_plot",
    "training_curves",
    "use_book_style",
]
