"""Figures for the book: one consistent, readable style for every chapter.

Plotting lives here and never in the model modules. Every helper takes an
optional ``ax`` so figures can be combined, and returns the ``Axes`` it drew
on. Figures have an opaque white background so they stay readable in the
site's dark mode. The heatmaps are in ``transformer.plot.heatmaps``, the
curves in ``transformer.plot.curves``; the architecture diagram has its
own module, :mod:`transformer.plot.diagram`.
"""

from .curves import compare_curves, line_plot, position_accuracy_plot, training_curves
from .heatmaps import attention_grid, attention_heatmap, mask_heatmap, matrix_heatmap
from .part_two import ablation_figure, cache_fill_plot, kv_groups_figure
from .style import BOOK_STYLE, MASK_COLORS, use_book_style

__all__ = [
    "BOOK_STYLE",
    "MASK_COLORS",
    "ablation_figure",
    "attention_grid",
    "attention_heatmap",
    "cache_fill_plot",
    "compare_curves",
    "kv_groups_figure",
    "line_plot",
    "mask_heatmap",
    "matrix_heatmap",
    "position_accuracy_plot",
    "training_curves",
    "use_book_style",
]
