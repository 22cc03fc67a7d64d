"""``from_torch`` and ``to_torch`` as methods of the modules that PyTorch also has.

The conversions themselves live in :mod:`transformer.interop`; this mixin
only forwards to them, so that ``MultiHeadAttention.from_torch(m)`` and
``layer.to_torch()`` read naturally on a page. The import is deferred because
:mod:`transformer.interop` imports the modules that use this mixin.
"""

from __future__ import annotations

from typing import Self

import torch.nn as nn


class TorchConvertible:
    """Mixin giving a module ``from_torch`` and ``to_torch`` (see :mod:`transformer.interop`)."""

    @classmethod
    def from_torch(cls, module: nn.Module) -> Self:
        """Build this module from its PyTorch counterpart, copying the weights.

        Args:
            module: The PyTorch module, e.g. an ``nn.MultiheadAttention`` for
                :class:`~transformer.multihead.MultiHeadAttention`.

        Returns:
            A new module of this class with the same weights, dtype, device
            and training mode.

        Raises:
            TypeError: If ``module`` is not this class's PyTorch counterpart.
            ValueError: If ``module`` uses an option this package lacks.
        """
        from .interop import from_torch

        converted = from_torch(module)
        if not isinstance(converted, cls):
            raise TypeError(
                f"module must be the PyTorch counterpart of {cls.__name__}, "
                f"got {type(module).__name__}"
            )
        return converted

    def to_torch(self) -> nn.Module:
        """Build the equivalent PyTorch module, copying the weights.

        Returns:
            The PyTorch module (batch first), with the same weights, dtype,
            device and training mode.
        """
        from .interop import to_torch

        return to_torch(self)
