"""One frame's texture writes, taken off the device in one transfer.

Every rectangle a frame uploads (a dirty box at each level it reaches, the columns a view needs,
a streamed span) is added to an :class:`UploadBatch` as a torch tensor on the document's device.
:meth:`UploadBatch.write` then writes each tile piece with ``queue.write_texture`` (through
:func:`~.texture_writes.write_texture`) straight from host memory, addressed by an offset and a row
pitch, so that nothing is copied on the host:

- on CUDA, every rectangle is gathered by one ``torch.cat`` into a persistent staging buffer on the
  device (those with as many rows side by side: a box at each level it reaches is one block of
  rows), and goes to the host in one copy into a persistent pinned buffer and one synchronisation
  (instead of one per rectangle and level);
- on the CPU, the piece is read from the tensor's own storage (a row of the level it belongs to is
  the row pitch): no copy at all, where a contiguous copy of a 256 x 256 box cost more than the
  texture write (``tests/benchmarks/bench_render.py``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import torch
import wgpu

from spectropaint.gpu.texture_writes import write_texture
from spectropaint.gpu.tiles import Rect, TileGrid

STAGING_LIMIT = 64 * 2**20
"""Most bytes a staging buffer holds; a larger batch goes through pageable memory. The pinned one
is made this size at a renderer's first CUDA upload: grown as batches grew, it was pinned again
in the middle of strokes, and pinning memory holds the window's thread (up to 190 ms was seen on
an H200 when the undo history pinned its tiles). Torch keeps freed pinned blocks, so the next
renderer's buffer is the same memory."""


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
    keep: bool


class HostCells(NamedTuple):
    """A rectangle's cells in host memory, ready to be written: ``buffer`` (1-D float32) holds cell
    ``(row, column)`` of ``rect`` at element ``start + row * pitch + column``."""

    texture: wgpu.GPUTexture
    grid: TileGrid
    level: int
    rect: Rect
    layer0: int
    buffer: np.ndarray
    start: int
    pitch: int

    def write(self, queue: wgpu.GPUQueue, stats: UploadStats) -> None:
        """One ``write_texture`` per tile the rectangle reaches, addressed in :attr:`buffer`."""
        for piece in self.grid.pieces(0, self.level, self.rect):
            row, col = piece.source
            width, height, _ = piece.size
            x, y, layer = piece.origin
            write_texture(
                queue, self.texture, (x, y, self.layer0 + layer), self.buffer,
                4 * (self.start + row * self.pitch + col), 4 * self.pitch, height, piece.size,
            )  # fmt: skip
            stats.count(4 * width * height)


def _grown(buffer: torch.Tensor | None, n: int, **where) -> torch.Tensor:
    """``buffer`` when it holds ``n`` float32, else a new one (at least twice as large, at most
    :data:`STAGING_LIMIT` bytes) made with ``torch.empty(..., **where)``."""
    if buffer is not None and buffer.numel() >= n:
        return buffer
    size = max(n, 2 * (0 if buffer is None else buffer.numel()))
    return torch.empty(min(size, STAGING_LIMIT // 4), dtype=torch.float32, **where)


class HostStaging:
    """Persistent staging buffers reused by every CUDA upload of a renderer (grown when too small):
    one on the device, where a batch's rectangles are gathered, and a pinned one on the host."""

    def __init__(self) -> None:
        self._device: torch.Tensor | None = None
        self._host: torch.Tensor | None = None

    def gather(
        self, cells: list[torch.Tensor], keep: list[bool]
    ) -> list[tuple[np.ndarray, int, int]]:
        """``cells`` (each ``[rows, columns]``, on one device: CUDA, where the rest of the renderer
        uses it) on the host after one copy and one synchronisation: ``(1-D float32 array, first
        element, row pitch)`` for each; those with ``keep`` in an array of their own (the staging
        buffer is overwritten by the next transfer).

        Rectangles with as many rows are laid side by side, row by row, by one ``torch.cat``
        (a box at every level it reaches shares its rows): one kernel for all of them, and each
        rectangle's row pitch is their total width. The kept ones come first in their block, so
        that one strided copy takes them all out of it.
        """
        widths = [c.shape[1] for c in cells]
        groups: dict[int, list[int]] = {}  # rows: the kept rectangles first, then the others
        for first in (True, False):
            for index, c in enumerate(cells):
                if keep[index] == first:
                    groups.setdefault(c.shape[0], []).append(index)
        total = sum(rows * sum(widths[i] for i in members) for rows, members in groups.items())
        device = cells[0].device
        small = 4 * total <= STAGING_LIMIT
        if small:
            self._device = _grown(self._device, total, device=device)
            gathered = self._device
        else:
            gathered = torch.empty(total, dtype=torch.float32, device=device)
        blocks = []  # (first element, rows, width, members) of each block of rows
        offset = 0
        for rows, members in groups.items():
            width = sum(widths[i] for i in members)
            block = gathered[offset : offset + rows * width].view(rows, width)
            torch.cat([_float32(cells[i]) for i in members], dim=1, out=block)
            blocks.append((offset, rows, width, members))
            offset += rows * width
        if small and device.type == "cuda":
            if self._host is None:  # whole at once, never grown (see STAGING_LIMIT)
                self._host = torch.empty(STAGING_LIMIT // 4, dtype=torch.float32, pin_memory=True)
            host = self._host[:total]
            host.copy_(gathered[:total], non_blocking=True)
            torch.cuda.current_stream(device).synchronize()
            array = host.numpy()
        else:
            array = gathered[:total].cpu().numpy()
        where: list[tuple[np.ndarray, int, int]] = [(array, 0, 0)] * len(cells)
        for offset, rows, width, members in blocks:
            column, kept = 0, array
            kept_width = sum(widths[i] for i in members if keep[i])
            if kept_width:  # the kept columns of every row, copied out at once
                kept = _rows(array, offset, rows, kept_width, width).copy().reshape(-1)
            for i in members:
                where[i] = (
                    (kept, column, kept_width) if keep[i] else (array, offset + column, width)
                )
                column += widths[i]
        return where


def _float32(cells: torch.Tensor) -> torch.Tensor:
    return cells if cells.dtype == torch.float32 else cells.to(torch.float32)


def _rows(buffer: np.ndarray, start: int, rows: int, columns: int, pitch: int) -> np.ndarray:
    """The ``[rows, columns]`` view of float32 ``buffer`` whose cell ``(row, column)`` is element
    ``start + row * pitch + column`` (no copy)."""
    return np.ndarray(
        (rows, columns), np.float32, buffer=buffer, offset=4 * start, strides=(4 * pitch, 4)
    )


class UploadBatch:
    """Rectangles of cells to write into tile textures, written together by :meth:`write`."""

    def __init__(self) -> None:
        self._items: list[_Item] = []
        self._ready: list[HostCells] = []

    def __bool__(self) -> bool:
        return bool(self._items or self._ready)

    def add(
        self,
        texture: wgpu.GPUTexture,
        grid: TileGrid,
        level: int,
        rect: Rect,
        cells: torch.Tensor,
        *,
        layer0: int = 0,
        keep: bool = False,
    ) -> None:
        """Write ``cells`` ``[rect rows, rect columns]`` at ``rect`` of ``level`` of ``grid``'s tiles
        (whose first layer in ``texture`` is ``layer0``); with ``keep``, only bring them to the host
        with the others: :meth:`write` returns them, to be written later."""
        cells = cells.detach() if cells.requires_grad else cells
        self._items.append(_Item(texture, grid, level, rect, cells, layer0, keep))

    def add_host(self, cells: HostCells) -> None:
        """Write cells already in host memory (kept by an earlier batch)."""
        self._ready.append(cells)

    def write(
        self, queue: wgpu.GPUQueue, stats: UploadStats, staging: HostStaging
    ) -> list[HostCells]:
        """Write the cells already on the host, copy every rectangle to the host (one transfer
        from a GPU), write its pieces; the kept rectangles, in arrays of their own."""
        for ready in self._ready:
            ready.write(queue, stats)
        self._ready.clear()
        if not self._items:
            return []
        kept = []
        for item, (buffer, start, pitch) in zip(self._items, self._host(staging), strict=True):
            cells = HostCells(
                item.texture, item.grid, item.level, item.rect, item.layer0, buffer, start, pitch
            )
            if item.keep:
                kept.append(cells)
            else:
                cells.write(queue, stats)
        self._items.clear()
        return kept

    @staticmethod
    def transfers(device: torch.device) -> bool:
        """Cells on ``device`` reach the host by one transfer of the whole batch (CUDA), not read
        where they are (in place on the CPU, one copy each from MPS)."""
        return device.type == "cuda"

    def _host(self, staging: HostStaging) -> list[tuple[np.ndarray, int, int]]:
        """Each item's cells in host memory: (1-D float32 array, first element, row pitch); the
        kept ones in arrays of their own."""
        cells = [item.cells for item in self._items]
        keep = [item.keep for item in self._items]
        if self.transfers(cells[0].device):
            return staging.gather(cells, keep)
        found = []
        for c, kept in zip(cells, keep, strict=True):
            array, start, pitch = _in_place(c)
            if kept:  # the level's own storage changes with the next edit
                array, start, pitch = (
                    _rows(array, start, *c.shape, pitch).copy().reshape(-1),
                    0,
                    c.shape[1],
                )
            found.append((array, start, pitch))
        return found


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
