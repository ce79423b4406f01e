"""Undo and redo per stroke, exact to the bit, storing only the tiles a stroke touched.

An open step (:class:`OpenStep`) records the original magnitude and phase of every tile just before a
stroke first writes into it; brushes that compute from the stroke's starting state read them back
from it too. Committing turns those tiles into :class:`Atom` objects. Undo and redo swap each atom's
stored values with the document's current ones, so a step holds one copy of its tiles, not two, and
restoring is a plain copy: bit-identical both ways.

The history is bounded by a byte budget: when the undo and redo steps together exceed it, the oldest
steps are dropped. A step larger than the whole budget is not kept, and neither is any older step:
undoing those past a change that cannot be undone would give a state that never existed.

Accounting: :attr:`History.bytes_used` is the bytes of the tile tensors the kept steps hold, which is
all the memory they keep alive but their Python objects (an :class:`Atom`, its :class:`Region` and
its tensor's header: 1 to 2 kB per tile, against 64 KiB for a 64 x 64 stereo tile). The open step's
own copies are released when it is committed or aborted, so a caller that keeps its stroke session
(or the step) alive afterwards holds nothing the budget does not count.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
import torch

from spectropaint.brushes.kernels import originals_fused, triton_math
from spectropaint.brushes.kernels.tile_table import TileTable
from spectropaint.brushes.tiles import TILE, TileMap
from spectropaint.transforms.regions import EMPTY, Region, Regions
from spectropaint.transforms.torch_device import to_device

T = TypeVar("T")

DEFAULT_BYTE_BUDGET = 512 * 2**20
HOST_COPY_TILES = 512
"""Tiles a stroke's end copies from a GPU to the host at once (32 MiB of 64 x 64 stereo tiles):
few copies, and a bounded second copy on the device while it is made."""
STORAGE_DEVICE = torch.device("cpu")
"""Committed steps live in host memory, so undo never competes with the document for GPU memory
(from a GPU, copied when the stroke ends: see :meth:`Step.values_to_host`), but for the newest
stroke's (:data:`DEVICE_STEP_BYTES`)."""
DEVICE_STEP_BYTES = 128 * 2**20
"""The newest stroke's step stays on a GPU when it holds at most this many bytes
(:meth:`History.steps_to_host`): its undo and redo are then copies within the device, a gather
and a scatter per part of :data:`HOST_COPY_TILES` tiles. Through the host, the undo of a stroke
across a ten-minute file seen whole (871 tiles, 56 MB) took 87 to 199 ms on the H200, on the
device 6 to 11 ms (``bench_whole_view.py``)."""


def read_stacked(document, region: Region) -> torch.Tensor:
    """Magnitude and phase of ``region`` stacked: ``[2, channels, bins, frames]`` (a copy).

    The same values as ``document.read(region)``, read from the block's tensors by slicing (a
    stroke's channels are all of them or one, a contiguous run), which copies once instead of three
    times: on a 513 x 513 stereo region that is a quarter of the time.
    """
    return torch.stack(_magnitude_and_phase(document, region))


def read_tiles(document, region: Region, count: int) -> torch.Tensor:
    """The values of ``region``, ``count`` tiles of one row side by side, tile by tile: ``[count,
    2, channels, bins, frames / count]`` (each tile contiguous), copied once: a row of new tiles
    a stroke keeps (:meth:`OpenStep.record`)."""
    if count == 1:
        return read_stacked(document, region)[None]
    parts = _magnitude_and_phase(document, region)
    bins, frames = region.shape
    out = torch.empty((count, 2, len(region.channels), bins, frames // count),
                      dtype=parts[0].dtype, device=parts[0].device)  # fmt: skip
    for plane, values in enumerate(parts):
        out[:, plane].copy_(values.unflatten(-1, (count, frames // count)).movedim(-2, 0))
    return out


def _magnitude_and_phase(document, region: Region) -> tuple[torch.Tensor, torch.Tensor]:
    """``region``'s magnitude and phase: views of the block's tensors where its channels are a
    run, else ``document.read``'s copies."""
    channels = region.channels
    if channels != tuple(range(channels[0], channels[-1] + 1)):
        return document.read(region)
    block = document.blocks[region.block]
    index = (
        slice(channels[0], channels[-1] + 1),
        slice(region.bin0, region.bin1),
        slice(region.frame0, region.frame1),
    )
    return block.magnitude[index], block.phase[index]


class OpenStep:
    """The stroke in progress: original values of every tile it has written to, kept on the device.

    Parameters
    ----------
    document : Document
        The document the stroke edits.
    channels : tuple of int
        The channels the stroke edits.
    label : str
        A name for the step (the brush's), shown in an Undo menu.
    tile : int or dict
        Tile side in cells (see :func:`~spectropaint.brushes.tiles.tile_for`), or per block.
    """

    def __init__(
        self,
        document,
        channels: tuple[int, ...],
        *,
        label: str = "",
        tile: int | dict[int, int] = TILE,
    ):
        self.document = document
        self.channels = channels
        self.label = label
        self.region: Region | Regions = EMPTY
        """The union of every box recorded (about to be written), in every block."""
        self._tile = tile
        self.originals: dict[int, TileMap] = {}
        """Per block, the original values of the tiles the stroke has written to."""
        self._tables: dict[int, TileTable] = {}
        """Per block, where those tiles lie for the device's kernels (made as :meth:`kept` is
        first asked, then kept up to date by :meth:`record`)."""

    def _tiles(self, block: int) -> TileMap:
        if block not in self.originals:
            grid = self.document.blocks[block]
            tile = self._tile if isinstance(self._tile, int) else self._tile.get(block, TILE)
            self.originals[block] = TileMap(grid.n_bins, grid.n_frames, tile=tile, block=block)
        return self.originals[block]

    def record(self, box: Region) -> frozenset[tuple[int, int]]:
        """Keep the original values of ``box``'s tiles (first touch only); call before writing it.
        The keys of the tiles kept now: until ``box`` is written, the document holds their
        original values (:meth:`original` need not paste them).

        On a GPU the tiles stay on the device until the stroke ends
        (:meth:`Step.values_to_host`). Copying each to pinned host memory as it was kept made the
        stroke allocate pinned memory, which
        held the interpreter or the driver for up to 190 ms at a time on an H200 during a stroke
        across a ten-minute file seen whole, and froze the window as long.
        """
        tiles = self._tiles(box.block)
        new = tiles.ensure_read(box, lambda run, count: read_tiles(self.document, run, count))
        self.region = self.region.union(box)
        table = self._tables.get(box.block)
        if table is not None and new:
            try:
                table.enter({key: tiles.tiles[key] for key in new})
            except triton_math.Unavailable:  # (the kernels are off: no table is read)
                del self._tables[box.block]
        return frozenset(new)

    def original(
        self, box: Region, fresh: frozenset[tuple[int, int]] = frozenset()
    ) -> torch.Tensor:
        """Values of ``box`` as they were when the stroke began: ``[2, channels, bins, frames]``.

        ``fresh``: keys of tiles whose original values the document still holds (what
        :meth:`record` just gave, before the box is written), read from the document.
        """
        tiles = self._tiles(box.block)
        gathered = self._gathered(box)
        if gathered is not None:
            return gathered
        if box.empty or any(key in fresh or key not in tiles.tiles for key in tiles.keys(box)):
            values = read_stacked(self.document, box)
        else:  # kept tiles cover the box: the paste writes every cell
            like = self.document.blocks[box.block].magnitude
            shape = (2, len(box.channels), *box.shape)
            values = torch.empty(shape, dtype=like.dtype, device=like.device)
        return tiles.paste_into(values, box, skip=fresh)

    def scale_into(self, box: Region, factor: float, weight: torch.Tensor) -> bool:
        """Write ``box``'s original magnitudes times ``factor``, blended towards by ``weight``
        ``[B, T]``, into the document in one launch (:func:`.kernels.originals_fused.scale_into`),
        then mark it written; whether it was (not where the kernel does not run here: the caller
        reads :meth:`original` and blends)."""
        found = self.kept(box)
        if found is None:
            return False
        try:
            originals_fused.scale_into(found, factor, weight)
        except triton_math.Unavailable:
            return False
        self.document.mark_written(box)
        return True

    def _gathered(self, box: Region) -> torch.Tensor | None:
        """:meth:`original`'s values in one launch (:mod:`.kernels.originals_fused`), or None
        where :meth:`kept` finds none or the kernel cannot run."""
        found = self.kept(box)
        if found is None:
            return None
        like = found.document[0]
        out = torch.empty((2, *found.shape), dtype=like.dtype, device=like.device)
        try:
            return originals_fused.gather(out, found)
        except triton_math.Unavailable:  # (Triton cannot compile here: the paste)
            return None

    def kept(self, box: Region) -> originals_fused.Kept | None:
        """Where ``box``'s original values lie, for a kernel of the device's to read them there
        (:class:`.kernels.originals_fused.Kept`: the block's kept tiles, through its
        :class:`~.kernels.tile_table.TileTable`, and the document's cells); None where the
        kernels do not run on the document's device, the box is empty or its channels are not a
        run. A tile kept by the last :meth:`record` is read from its copy, like any other."""
        device = self.document.device
        if box.empty or not originals_fused.available(device):
            return None
        cells = self.document.cells(box)
        if cells is None:
            return None
        table = self._table(box.block, device)
        if table is None:
            return None
        return originals_fused.Kept(table.places(box.bin0, box.frame0), cells,
                                    (len(box.channels), *box.shape))  # fmt: skip

    def _table(self, block: int, device: torch.device) -> TileTable | None:
        """The block's table of kept tiles on ``device``: made (and every tile kept so far
        entered) where there is none there yet; None where Triton cannot compile."""
        table = self._tables.get(block)
        if table is None or table.device != device:
            tiles = self._tiles(block)
            table = TileTable(tiles.n_bins, tiles.n_frames, tiles.tile, device)
            try:
                table.enter(tiles.tiles)
            except triton_math.Unavailable:
                return None
            self._tables[block] = table
        return table

    def follow(self, device: torch.device) -> None:
        """Move the recorded tiles to ``device`` (the document's, which moved); the tables of
        where they lay are made again as :meth:`kept` asks."""
        for tiles in self.originals.values():
            for key, tensor in tiles.tiles.items():
                tiles.tiles[key] = tensor.to(device)
        self._tables.clear()

    def abort(self) -> Region | Regions:
        """Write every recorded tile back; the boxes that were restored."""
        for tiles in self.originals.values():
            for key, values in tiles.tiles.items():
                self.document.write(tiles.tile_box(key, self.channels), values[0], values[1])
        self.release()
        return self.region

    def release(self) -> None:
        """Drop the recorded tiles (the stroke is over); ``region`` stays."""
        for tiles in self.originals.values():
            tiles.tiles.clear()
        self._tables.clear()


@dataclass(eq=False)
class Atom:
    """One tile of one step: its box and the values it does not currently hold, ``[2, C, b, f]``."""

    region: Region
    values: torch.Tensor

    def swap(self, document) -> None:
        """Put the stored values into the document and keep the ones they replace (in host
        memory unless the stored ones were on the document's device)."""
        current = read_stacked(document, self.region)
        if self.values.device == STORAGE_DEVICE:
            current = current.to(STORAGE_DEVICE)
        document.write(self.region, self.values[0], self.values[1])
        self.values = current


@dataclass(eq=False)
class Step:
    """A committed stroke: its tiles, the box it changed, and its size in bytes.

    Undo and redo swap each atom's values for ones of the same box, shape and type, so ``nbytes``
    never changes (only :meth:`History.amend_top` adds atoms). The atoms never overlap.
    """

    label: str
    atoms: list[Atom]
    region: Region | Regions
    tiles: dict[int, int] = field(default_factory=dict)
    """The tile side of the stroke's tiles in each block (:data:`TILE` for any other)."""
    nbytes: int = field(init=False)
    painted: Region | Regions = field(init=False)
    """The boxes the stroke (or operation) wrote itself: ``region`` as committed, before its
    settle covered more (which reaches 0 Hz on the STFT, all of a slice on the NSGT): where a
    person made the step."""

    def __post_init__(self) -> None:
        self.nbytes = sum(atom.values.nbytes for atom in self.atoms)
        self.painted = self.region

    def cover(self, document, region: Region) -> None:
        """Add atoms holding the current values of the cells of ``region`` no atom holds yet.

        The step's own atoms are whole tiles of its tile grid (per block); each tile of ``region``
        that none of them is gets one atom for its part of ``region``, merged with the parts
        earlier calls added to that tile (one box holding both; the cells between hold their
        current values, which nothing has changed since the step began). ``region``'s channels
        must be the step's.
        """
        t = self.tiles.get(region.block, TILE)
        grid = TileMap(
            document.blocks[region.block].n_bins,
            document.blocks[region.block].n_frames,
            tile=t,
            block=region.block,
        )
        by_key: dict[tuple[int, int], list[Atom]] = {}
        for atom in self.atoms:
            if atom.region.block == region.block:
                key = (atom.region.bin0 // t, atom.region.frame0 // t)
                by_key.setdefault(key, []).append(atom)
        for key in grid.keys(region):
            whole = grid.tile_box(key, region.channels)
            held = by_key.get(key, [])
            if any(atom.region == whole for atom in held):
                continue
            part = whole.intersection(region)
            for atom in held:
                part = part.union(atom.region)
            values = read_stacked(document, part).to(STORAGE_DEVICE)
            for atom in held:  # what the earlier parts hold (the document holds the settled)
                inside = (
                    slice(atom.region.bin0 - part.bin0, atom.region.bin1 - part.bin0),
                    slice(atom.region.frame0 - part.frame0, atom.region.frame1 - part.frame0),
                )
                values[(..., *inside)] = atom.values
                self.atoms.remove(atom)
                self.nbytes -= atom.values.nbytes
            self.atoms.append(Atom(part, values))
            self.nbytes += values.nbytes
        self.region = self.region.union(region)

    def swap(self, document) -> Region | Regions:
        """Undo or redo: every atom's values into the document, the document's into the atoms.
        Atoms on the document's GPU (the newest stroke's) go a part of one block, run of
        channels and shape at a time (:func:`_swap_together`); the others one by one."""
        groups: dict[tuple, list[Atom]] = {}
        for atom in reversed(self.atoms):
            channels = atom.region.channels
            if (
                atom.values.device == STORAGE_DEVICE
                or document.device.type == "cpu"
                or (channels != tuple(range(channels[0], channels[-1] + 1)))
            ):
                atom.swap(document)
                continue
            key = (atom.region.block, channels, tuple(atom.values.shape))
            groups.setdefault(key, []).append(atom)
        for part in _parts(groups):
            _swap_together(document, part)
        return self.region

    def values_to_host(self, lock: AbstractContextManager | None = None) -> None:
        """Bring the atoms' values that are on a GPU (a stroke's tiles, as it kept them) to host
        memory: the atoms of one shape stacked, :data:`HOST_COPY_TILES` per copy. Copied one by
        one, the thousands of tiles of a stroke across a ten-minute file seen whole took over
        100 ms on an H200; stacked, 40 to 66 ms for 871 tiles (``bench_whole_view.py``'s end).

        The copies run outside ``lock`` (the session's: the window waits on it) and each part's
        values are swapped in under it, unless an undo or redo swapped an atom meanwhile (its
        values are then host memory already)."""
        hold = lock if lock is not None else contextlib.nullcontext()
        with hold:
            device = [(atom, atom.values) for atom in self.atoms]
        shapes: dict[tuple[int, ...], list[tuple[Atom, torch.Tensor]]] = {}
        for atom, values in device:
            if values.device != STORAGE_DEVICE:
                shapes.setdefault(tuple(values.shape), []).append((atom, values))
        for part in _parts(shapes):
            copied = torch.stack([values for _, values in part]).to(STORAGE_DEVICE)
            with hold:
                for (atom, values), host in zip(part, copied.unbind(), strict=True):
                    if atom.values is values:
                        atom.values = host


def _parts(groups: dict[tuple, list[T]]) -> Iterator[list[T]]:
    """Each group's items, :data:`HOST_COPY_TILES` at a time: what one stacked copy or one
    gather moves."""
    for group in groups.values():
        for start in range(0, len(group), HOST_COPY_TILES):
            yield group[start : start + HOST_COPY_TILES]


def _swap_together(document, atoms: list[Atom]) -> None:
    """:meth:`Atom.swap` of atoms of one block, run of channels and shape (which do not
    overlap), on the device that holds their values: one gather of the values they replace,
    one scatter of theirs."""
    region = atoms[0].region
    block = document.blocks[region.block]
    device = atoms[0].values.device
    bins = np.stack([np.arange(atom.region.bin0, atom.region.bin1) for atom in atoms])
    frames = np.stack([np.arange(atom.region.frame0, atom.region.frame1) for atom in atoms])
    index = (
        slice(region.channels[0], region.channels[-1] + 1),
        to_device(bins[:, :, None], device),
        to_device(frames[:, None, :], device),
    )  # [C, K, b, f]
    current = torch.stack((block.magnitude[index], block.phase[index])).movedim(2, 0)
    stored = torch.stack([atom.values for atom in atoms]).movedim(0, 2)
    block.magnitude[index] = stored[0]
    block.phase[index] = stored[1]
    for atom, values in zip(atoms, current.unbind(), strict=True):
        block.edited_frames[atom.region.frame0 : atom.region.frame1] = True
        atom.values = values
    document.revision += 1


class History:
    """The undo and redo stacks of one document.

    Parameters
    ----------
    document : Document
        The document whose strokes are recorded; undo and redo write into it and return the box
        they changed.
    byte_budget : int
        Most bytes the stored steps may hold together.
    """

    def __init__(self, document, *, byte_budget: int = DEFAULT_BYTE_BUDGET):
        self.document = document
        self.byte_budget = byte_budget
        self._undo: list[Step] = []
        self._redo: list[Step] = []
        self._open: OpenStep | None = None
        self._on_device: list[Step] = []
        """Steps committed with their tiles left on a GPU (:meth:`steps_to_host`)."""
        self._bytes = 0
        """The sum of ``nbytes`` over both stacks, kept up to date as steps come and go."""

    # ------------------------------------------------------------------------------- recording
    def begin(
        self, channels: tuple[int, ...], *, label: str = "", tile: int | dict[int, int] = TILE
    ) -> OpenStep:
        """Open a step for a new stroke (one at a time)."""
        if self._open is not None:
            raise RuntimeError("a stroke is already open in this history; commit or abort it first")
        self._open = OpenStep(self.document, channels, label=label, tile=tile)
        return self._open

    def commit(self, *, to_host: bool = True) -> bool:
        """Close the open step and push it; True when it was kept.

        Pushing drops every redo step, then the oldest undo steps the budget has no room for. False
        when the step was empty (nothing changes) or larger than the whole budget (then no step is
        kept: see the module's docstring). ``to_host=False`` leaves a GPU stroke's tiles on the
        device: the caller then calls the step's :meth:`Step.values_to_host` (outside its lock).
        """
        step, self._open = self._open, None
        if step is None:
            raise RuntimeError("no stroke is open in this history")
        if step.region.empty:
            return False
        atoms = [
            Atom(tiles.tile_box(key, step.channels), values)
            for tiles in step.originals.values()
            for key, values in tiles.tiles.items()
        ]
        sides = {block: tiles.tile for block, tiles in step.originals.items()}
        step.release()
        committed = Step(step.label, atoms, step.region, tiles=sides)
        kept = self.push(committed)
        if kept and to_host:
            committed.values_to_host()
        elif kept:
            self._on_device.append(committed)
        return kept

    def steps_to_host(self, lock: AbstractContextManager | None = None) -> None:
        """Bring the values of the steps committed with ``to_host=False`` to host memory
        (:meth:`Step.values_to_host`, copying outside ``lock``), but for the newest undo step's
        when it holds at most :data:`DEVICE_STEP_BYTES`: undoing it is then quick."""
        hold = lock if lock is not None else contextlib.nullcontext()
        with hold:
            kept = {id(step) for step in (*self._undo, *self._redo)}
            newest = self._undo[-1] if self._undo else None
            stay = newest if newest is not None and newest.nbytes <= DEVICE_STEP_BYTES else None
            moving = [step for step in self._on_device if step is not stay and id(step) in kept]
            self._on_device = [stay] if stay is not None and stay in self._on_device else []
        for step in moving:
            step.values_to_host(lock)

    def push(self, step) -> bool:
        """Push a committed step (a :class:`Step`, or any object with ``label``, ``region``,
        ``nbytes`` and ``swap(document) -> region``); True when it was kept, as :meth:`commit`."""
        if self._open is not None:
            raise RuntimeError("a stroke is open in this history; commit or abort it first")
        self._bytes -= sum(dropped.nbytes for dropped in self._redo)
        self._redo.clear()
        if step.nbytes > self.byte_budget:
            self._undo.clear()
            self._bytes = 0
            return False
        self._undo.append(step)
        self._bytes += step.nbytes
        while self._bytes > self.byte_budget:
            self._bytes -= self._undo.pop(0).nbytes
        return True

    def amend_top(self, step: Step, region: Region) -> bool:
        """Record ``region``'s current values into ``step``, the latest undo step, before the caller
        overwrites them (a stroke's settle, see :mod:`spectropaint.brushes.settle`).

        Undoing ``step`` then restores the state before its stroke everywhere, and redoing it
        restores what the caller wrote. False (nothing recorded) when ``step`` is no longer the
        latest undo step or a stroke is open. The budget applies as in :meth:`commit`: when the
        grown step alone exceeds it, no step is kept (True is still returned: the caller may write).
        """
        if self._open is not None or not self._undo or self._undo[-1] is not step:
            return False
        before = step.nbytes
        step.cover(self.document, region)
        self._bytes += step.nbytes - before
        if step.nbytes > self.byte_budget:
            self._undo.clear()
            self._bytes = 0
        while self._bytes > self.byte_budget:
            self._bytes -= self._undo.pop(0).nbytes
        return True

    def abort(self) -> Region | Regions:
        """Undo the open step's writes and forget it; the box restored (``EMPTY`` if none)."""
        step, self._open = self._open, None
        if step is None:
            raise RuntimeError("no stroke is open in this history")
        return step.abort()

    # ---------------------------------------------------------------------------- undo and redo
    @property
    def can_undo(self) -> bool:
        return bool(self._undo)

    @property
    def can_redo(self) -> bool:
        return bool(self._redo)

    def undo(self) -> Region | Regions | None:
        """Restore the state before the latest step; the box it changed, or None if none is left."""
        return self._move(self._undo, self._redo)

    def redo(self) -> Region | Regions | None:
        """Re-apply the latest undone step; the box it changed, or None if none is left."""
        return self._move(self._redo, self._undo)

    def _move(self, source: list[Step], target: list[Step]) -> Region | Regions | None:
        if self._open is not None:
            raise RuntimeError("cannot undo or redo while a stroke is open")
        if not source:
            return None
        step = source[-1]
        before = step.nbytes  # a step that swaps whole documents changes size
        region = step.swap(self.document)
        source.pop()
        target.append(step)
        self._bytes += step.nbytes - before
        return region

    # ----------------------------------------------------------------------------------- budget
    @property
    def bytes_used(self) -> int:
        """Bytes held by the undo and redo steps together."""
        return self._bytes

    @property
    def undo_steps(self) -> tuple[Step, ...]:
        """The steps undo reverts, oldest first (the next one to undo last)."""
        return tuple(self._undo)

    @property
    def redo_steps(self) -> tuple[Step, ...]:
        """The steps redo re-applies, the next one to redo last."""
        return tuple(self._redo)

    def usage(self) -> str:
        """A one-line report of the budget's use, e.g. ``'3.1 MiB of 512.0 MiB in 4 undo, 1 redo steps'``."""
        return (
            f"{self.bytes_used / 2**20:.1f} MiB of {self.byte_budget / 2**20:.1f} MiB in "
            f"{len(self._undo)} undo, {len(self._redo)} redo steps"
        )
