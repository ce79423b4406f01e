"""One frame's texture writes, taken off the device in one transfer.

Every rectangle a frame uploads (a dirty box at each level it reaches, the columns a view needs,
a streamed span) is added to an :class:`UploadBatch` as a torch tensor on the document's device.
:meth:`UploadBatch.write` then writes each tile piece with ``queue.write_texture`` straight from host
memory, addressed by an offset and a row pitch, so that nothing is copied on the host:

- on CUDA, every rectangle goes to the host in one copy into a persistent pinned staging buffer and
  one synchronisation (instead of one per rectangle and level);
- on the CPU, the piece is read from the tensor's own storage (a row of the level it belongs to is
  the row pitch): no copy at all, where a contiguous copy of a 256 x 256 box cost more than the
  texture write (``tests/benchmarks/bench_render.py``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
import wgpu

from spectropaint.gpu.tiles import Rect, TileGrid

STAGING_LIMIT = 64 * 2**20
"""Most bytes the pinned staging buffer grows to; a larger batch goes through pageable memory."""


class UploadStats:
    """Texture bytes and ``write_texture`` calls of the last frame, and bytes in total."""

    def __init__(self) -> None:
        self.frame_bytes = self.frame_writes = self.total_bytes = 0

    def begin_frame(self) -> None:
        self.frame_bytes = self.frame_writes = 0

    def count(self, nbytes: int) -> None:
        self.frame_bytes += nbytes
        self.total_bytes += nbytes
        self.frame_writes += 1


class _Item(NamedTuple):
    texture: wgpu.GPUTexture
    grid: TileGrid
    level: int
    rect: Rect
    cells: torch.Tensor
    layer0: int


class HostStaging:
    """A pinned host buffer reused by every CUDA upload of a renderer (grown when too small)."""

    def __init__(self) -> None:
        self._buffer: torch.Tensor | None = None

    def copy(self, flat: torch.Tensor) -> np.ndarray:
        """``flat`` (float32, one dimension, on CUDA) on the host, after one synchronisation."""
        n = flat.numel()
        if 4 * n > STAGING_LIMIT:
            return flat.cpu().numpy()
        if self._buffer is None or self._buffer.numel() < n:
            size = max(n, 2 * (0 if self._buffer is None else self._buffer.numel()))
            self._buffer = torch.empty(
                min(size, STAGING_LIMIT // 4), dtype=torch.float32, pin_memory=True
            )
        host = self._buffer[:n]
        host.copy_(flat, non_blocking=True)
        torch.cuda.current_stream(flat.device).synchronize()
        return host.numpy()


class UploadBatch:
    """Rectangles of cells to write into tile textures, written together by :meth:`write`."""

    def __init__(self) -> None:
        self._items: list[_Item] = []

    def __bool__(self) -> bool:
        return bool(self._items)

    def add(
        self,
        texture: wgpu.GPUTexture,
        grid: TileGrid,
        level: int,
        rect: Rect,
        cells: torch.Tensor,
        *,
        layer0: int = 0,
    ) -> None:
        """Write ``cells`` ``[rect rows, rect columns]`` at ``rect`` of ``level`` of ``grid``'s tiles
        (whose first layer in ``texture`` is ``layer0``)."""
        self._items.append(_Item(texture, grid, level, rect, cells.detach(), layer0))

    def write(self, queue: wgpu.GPUQueue, stats: UploadStats, staging: HostStaging) -> None:
        """Copy every rectangle to the host (one transfer from a GPU), then write its pieces."""
        if not self._items:
            return
        for item, (buffer, start, pitch) in zip(self._items, self._host(staging), strict=True):
            for piece in item.grid.pieces(0, item.level, item.rect):
                row, col = piece.source
                width, height, _ = piece.size
                x, y, layer = piece.origin
                queue.write_texture(
                    {"texture": item.texture, "origin": (x, y, item.layer0 + layer)},
                    buffer,
                    {
                        "offset": 4 * (start + row * pitch + col),
                        "bytes_per_row": 4 * pitch,
                        "rows_per_image": height,
                    },
                    piece.size,
                )
                stats.count(4 * width * height)
        self._items.clear()

    def _host(self, staging: HostStaging) -> list[tuple[np.ndarray, int, int]]:
        """Each item's cells in host memory: (1-D float32 array, first element, row pitch)."""
        cells = [item.cells for item in self._items]
        if cells[0].device.type != "cuda":
            return [_in_place(c) for c in cells]
        flat = torch.cat([c.to(torch.float32).reshape(-1) for c in cells])
        host = staging.copy(flat)
        starts = np.cumsum([0] + [c.numel() for c in cells[:-1]])
        return [(host, int(start), c.shape[1]) for start, c in zip(starts, cells, strict=True)]


def _in_place(cells: torch.Tensor) -> tuple[np.ndarray, int, int]:
    """``cells`` ``[rows, columns]`` as the span of its storage from its first to its last cell,
    with row pitch ``cells.stride(0)``: no copy when they are in host memory and their rows are runs
    of float32 (a box of a level's rows); otherwise a contiguous float32 copy in host memory (an
    MPS document's)."""
    if cells.device.type != "cpu":
        cells = cells.to("cpu")
    rows, columns = cells.shape
    runs = (cells.stride(1) == 1 or columns == 1) and (rows == 1 or cells.stride(0) >= columns)
    if cells.dtype != torch.float32 or not runs:
        cells = cells.to(torch.float32).contiguous()
    pitch = cells.stride(0) if rows > 1 else columns
    span = torch.as_strided(cells, ((rows - 1) * pitch + columns,), (1,))
    return span.numpy(), 0, pitch
