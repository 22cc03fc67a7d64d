"""Figures for the book: one consistent, readable style for every chapter.

Plotting lives here and never in the model modules. A basic helper that
draws one panel (a heatmap, a curve) takes an optional ``ax`` so figures can
be combined, and returns the ``Axes`` it drew on; a helper that draws a
whole figure for one page, or several panels, makes its own figure and
returns that ``Figure`` (:func:`training_curves` returns its ``Axes``,
:func:`layer_masks_figure` the ``Figure`` with a label per mask). Each
reference entry says what it returns. Figures have an opaque white background
so they stay readable in the site's dark mode. The heatmaps are in
``transformer.plot.heatmaps``, the curves in ``transformer.plot.curves``; the
architecture diagram has its own module, :mod:`transformer.plot.diagram`. Each
``pictures_*`` module draws the new pictures of a group of chapters:
``pictures_attention`` (one soft lookup, a mask in four conventions),
``pictures_early`` (a padded batch, the shift right, an embedding lookup,
attention's shapes),
``pictures_heads`` (heads as blocks of columns, positions on a circle),
``pictures_mixing`` (W^O adding up the heads), ``pictures_blocks`` (norm
placement, a layer's masks), ``pictures_layers`` (the two stacks unrolled,
weight tying, dropout's places), ``pictures_training`` (decoding modes,
language-model layouts),
``pictures_tiles`` (tiles of a causal mask, a kernel's launch grid),
``pictures_tiles2`` (one step of tiled attention),
``pictures_flash`` (bytes that three ways of attending move, what one
program of a kernel reads and writes), ``pictures_online`` (one update of
the online softmax) and
``pictures_sampling`` (top-k and top-p cuts); ``part_two`` draws the modern
decoder's (kv-head groups, the cache filling, the experiment) and
``pictures_gated`` SwiGLU's data flow.
"""

from .curves import compare_curves, line_plot, position_accuracy_plot, training_curves
from .heatmaps import attention_grid, attention_heatmap, mask_heatmap, matrix_heatmap
from .part_two import (
    ablation_figure,
    cache_fill_plot,
    kv_groups_figure,
    modern_layer_figure,
)
from .pictures_attention import mask_conventions_figure, soft_lookup_figure
from .pictures_blocks import layer_masks_figure, norm_placement_figure
from .pictures_early import (
    attention_shapes_figure,
    embedding_lookup_figure,
    padded_batch_figure,
    shift_right_figure,
)
from .pictures_flash import (
    backward_program_figure,
    forward_program_figure,
    traffic_figure,
)
from .pictures_gated import swiglu_flow_figure
from .pictures_heads import head_columns_figure, sinusoid_circle_figure
from .pictures_layers import dropout_sites_figure, stacks_figure
from .pictures_mixing import head_mixing_figure
from .pictures_online import online_softmax_figure
from .pictures_sampling import sampling_cut_plot, sampling_cuts, token_label
from .pictures_tiles import causal_tiles, launch_grid_figure, tile_grid
from .pictures_tiles2 import tile_step
from .pictures_training import decoding_modes_figure, lm_layouts_figure
from .style import BOOK_STYLE, MASK_COLORS, use_book_style

__all__ = [
    "BOOK_STYLE",
    "MASK_COLORS",
    "ablation_figure",
    "attention_grid",
    "attention_heatmap",
    "attention_shapes_figure",
    "backward_program_figure",
    "cache_fill_plot",
    "causal_tiles",
    "compare_curves",
    "decoding_modes_figure",
    "dropout_sites_figure",
    "embedding_lookup_figure",
    "forward_program_figure",
    "head_columns_figure",
    "head_mixing_figure",
    "kv_groups_figure",
    "launch_grid_figure",
    "layer_masks_figure",
    "line_plot",
    "lm_layouts_figure",
    "mask_conventions_figure",
    "mask_heatmap",
    "matrix_heatmap",
    "modern_layer_figure",
    "norm_placement_figure",
    "online_softmax_figure",
    "padded_batch_figure",
    "position_accuracy_plot",
    "sampling_cut_plot",
    "sampling_cuts",
    "shift_right_figure",
    "sinusoid_circle_figure",
    "soft_lookup_figure",
    "stacks_figure",
    "swiglu_flow_figure",
    "tile_grid",
    "tile_step",
    "token_label",
    "traffic_figure",
    "training_curves",
    "use_book_style",
]
