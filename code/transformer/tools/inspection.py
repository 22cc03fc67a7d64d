"""Look inside a model while it runs: the shapes that enter and leave every module.

:func:`shape_trace` runs a model once with forward hooks on every submodule
and records, in the order the modules are *called*, what each one received
and what it returned. :func:`format_shape_trace` writes the records as a
table, indented by call depth, so that the table reads like the data's path
through the model. The chapter "The Transformer at a glance" shows the table
of a tiny Transformer.

The records come back as a :class:`ShapeTrace`, a list that prints as that
table and shows as an HTML table in a notebook.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn as nn

from ..checks.inspection import check_trace_options

Shape = tuple[int, ...]


@dataclass(frozen=True)
class ShapeRecord:
    """One call of one module: where it sits, what went in and what came out.

    Attributes:
        name: The module's qualified name in the model, e.g.
            ``"encoder.layers.0.self_attn"``; ``""`` for the model itself.
        kind: The module's class name, e.g. ``"MultiHeadAttention"``.
        depth: How many recorded calls enclose this one: 0 for the model, 1
            for a module the model's ``forward`` calls, and so on. A module
            called through another one's ``forward`` (a sublayer passed to an
            ``AddNorm``) is one deeper than its caller even when the two are
            siblings in the model. Calls left out with ``exclude`` do not count.
        inputs: One entry per tensor argument, positional then keyword, in
            order: ``(argument, shape, dtype)``, the argument being its
            position (``"0"``, ``"1"``, ...) or keyword name.
        outputs: The ``(shape, dtype)`` of each tensor returned (a tuple or list
            of tensors gives several).
    """

    name: str
    kind: str
    depth: int
    inputs: tuple[tuple[str, Shape, torch.dtype], ...]
    outputs: tuple[tuple[Shape, torch.dtype], ...]


class ShapeTrace(list[ShapeRecord]):
    """The records of :func:`shape_trace`: a list that shows itself as a table.

    ``print(trace)`` gives the text table of :func:`format_shape_trace`; in a
    notebook, a trace at the end of a cell is shown as an HTML table, whose
    cells wrap on a narrow page.
    """

    def __str__(self) -> str:
        """Return the text table of :func:`format_shape_trace`."""
        return format_shape_trace(self)

    def _repr_html_(self) -> str:
        """Return the trace as an HTML table, indented by depth (for notebooks)."""

        def cell(texts: list[str]) -> str:
            return ", ".join(
                f'<code style="white-space: nowrap">{t}</code>' for t in texts
            )

        nowrap = "white-space: nowrap; padding: 0.1em 0.6em 0.1em"
        rows = []
        for r, (label, kind, inputs, outputs) in zip(self, _rows(self, dtypes=True)):
            rows.append(
                f'<tr><td style="{nowrap} {0.4 + 1.2 * r.depth:.1f}em">'
                f"<code>{html.escape(label)}"
                f'</code></td><td style="{nowrap}">{kind}</td><td>{cell(inputs)}</td>'
                f'<td style="{nowrap}">{cell(outputs)}</td></tr>'
            )
        head = "".join(
            f'<th style="{nowrap}">{h}</th>'
            for h in ("module", "class", "input shapes", "output shape")
        )
        return (
            '<table class="shape-trace" style="text-align: left; font-size: 0.85em">'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )


def shape_trace(
    model: nn.Module,
    *inputs: object,
    max_depth: int | None = None,
    exclude: Sequence[type[nn.Module]] = (),
    **kwargs: object,
) -> ShapeTrace:
    """Run ``model(*inputs, **kwargs)``; record every module's input and output shapes.

    Hooks are put on every submodule for the one call and removed afterwards,
    even if the call fails. The model runs without gradients and in whatever
    mode it is in; call ``model.eval()`` first to switch dropout off.

    Args:
        model: The model to run.
        *inputs: Its positional arguments.
        max_depth: Leave out calls nested deeper than this (0 keeps only the
            model itself); ``None`` keeps every call.
        exclude: Module classes to leave out, e.g. ``(nn.Dropout,)``. The
            modules they call are still recorded, one level shallower.
        **kwargs: Its keyword arguments.

    Returns:
        One :class:`ShapeRecord` per module call, in call order: a module
        comes before the modules its ``forward`` calls. The list is a
        :class:`ShapeTrace`, which prints as a table.

    Raises:
        TypeError: If ``model`` is not an ``nn.Module`` or ``exclude`` does not
            hold module classes.
        ValueError: If ``max_depth`` is negative.
    """
    exclude = check_trace_options(model, max_depth, tuple(exclude))

    names = {module: name for name, module in model.named_modules()}
    records: list[dict] = []
    open_calls: list[dict | None] = []  # the calls still running; None if left out

    def before(module: nn.Module, args: tuple, kw: dict) -> None:
        depth = sum(call is not None for call in open_calls)
        record = None
        if (max_depth is None or depth <= max_depth) and not isinstance(
            module, exclude
        ):
            tensors = [(str(i), a) for i, a in enumerate(args)] + list(kw.items())
            record = {
                "name": names[module],
                "kind": type(module).__name__,
                "depth": depth,
                "inputs": tuple(
                    _describe(k, t) for k, t in tensors if isinstance(t, torch.Tensor)
                ),
                "outputs": (),
            }
            records.append(record)
        open_calls.append(record)

    def after(module: nn.Module, args: tuple, kw: dict, output: object) -> None:
        record = open_calls.pop()
        if record is not None:
            record["outputs"] = tuple(
                (shape, dtype) for _, shape, dtype in _tensors(output)
            )

    handles = []
    try:
        for module in names:
            handles.append(module.register_forward_pre_hook(before, with_kwargs=True))
            handles.append(module.register_forward_hook(after, with_kwargs=True))
        with torch.no_grad():
            model(*inputs, **kwargs)
    finally:
        for handle in handles:
            handle.remove()
    return ShapeTrace(ShapeRecord(**r) for r in records)


def format_shape_trace(records: Sequence[ShapeRecord], *, dtypes: bool = True) -> str:
    """Lay out shape records as a text table, one row per call, indented by depth.

    Each row shows the module (the last part of its name, ``layers.0`` for
    an item of a list, or the class name for the model itself), its class,
    the shapes of its tensor inputs and the shape of its output. Equal shapes
    in a row are written once with a count: the query, key and value of
    self-attention are ``(B, L, d_model) ×3``.

    Args:
        records: The records, as :func:`shape_trace` returns them.
        dtypes: Append the dtype to shapes of tensors that are not floating
            point (token ids, boolean masks), so that they stand out.

    Returns:
        The table, lines separated by ``"\\n"``.
    """
    rows = [("module", "class", "input shapes", "output shape")]
    for r, (label, kind, inputs, outputs) in zip(records, _rows(records, dtypes)):
        rows.append(
            ("  " * r.depth + label, kind, ", ".join(inputs), ", ".join(outputs))
        )
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths)) + "  " + row[3]
        for row in rows
    ]
    lines.insert(1, "-" * max(len(line) for line in lines))
    return "\n".join(line.rstrip() for line in lines)


def _rows(
    records: Sequence[ShapeRecord], dtypes: bool
) -> list[tuple[str, str, list[str], list[str]]]:
    """Return each record's label, class, input shapes and output shapes as text."""
    return [
        (
            _short_name(r.name) if r.name else r.kind,
            r.kind,
            _shape_texts([(shape, dtype) for _, shape, dtype in r.inputs], dtypes),
            _shape_texts(r.outputs, dtypes),
        )
        for r in records
    ]


def _shape_texts(items: Sequence[tuple[Shape, torch.dtype]], dtypes: bool) -> list[str]:
    """Write each shape as ``(3, 5, 12)``, a run of equal ones once with ``×n``."""
    texts: list[str] = []
    counts: list[int] = []
    for shape, dtype in items:
        text = "(" + ", ".join(map(str, shape)) + ")"
        if dtypes and not dtype.is_floating_point:
            text += " " + str(dtype).removeprefix("torch.")
        if texts and texts[-1] == text:
            counts[-1] += 1
        else:
            texts.append(text)
            counts.append(1)
    return [t if n == 1 else f"{t} ×{n}" for t, n in zip(texts, counts)]


def _short_name(name: str) -> str:
    """Return the last part of a qualified name, and its list's name: ``layers.0``."""
    parts = name.split(".")
    return ".".join(parts[-2:]) if parts[-1].isdigit() and len(parts) > 1 else parts[-1]


def _describe(arg: str, t: torch.Tensor) -> tuple[str, Shape, torch.dtype]:
    return arg, tuple(t.shape), t.dtype


def _tensors(output: object) -> list[tuple[str, Shape, torch.dtype]]:
    """Describe the tensors in a module's output: one tensor, or a tuple or list."""
    if isinstance(output, torch.Tensor):
        return [_describe("0", output)]
    if isinstance(output, (tuple, list)):
        return [
            _describe(str(i), t)
            for i, t in enumerate(output)
            if isinstance(t, torch.Tensor)
        ]
    return []
