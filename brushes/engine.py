"""A stroke in progress: events in, dabs applied, one region-changed event per input event.

``StrokeSession(document, "blur", settings)`` begins a stroke (and opens its history step);
:meth:`StrokeSession.add_events` applies the dabs of one or more input events and returns the
boxes they changed (the caller tells its listeners: ``spectropaint.app.session.Session``);
:meth:`StrokeSession.end` commits the step. Like libmypaint's surface, the stroke needs nothing of
the document but ``read``, ``write``, its blocks' geometry, ``on_cpu_after_oom`` and ``notices``: an
event whose dabs run the device out of memory moves the document to the CPU (with a notice), and
its groups not yet written are applied there. The stroke's bounds (:mod:`.stroke`: positions clipped to the document, dabs per event
and per stroke) are told once each as notices, and a stroke whose dabs' regions would not fit in
memory is refused before it begins.

A stroke lives in a plane (:mod:`.plane`): frames and bins, or seconds and semitones (or Hz), as its
settings' radii say; events in seconds and Hz are converted to it as they arrive. Its dabs edit every
block they reach (the NSGT's blocks each hold a band range at its own time rate).
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import torch

from spectropaint.brushes.coverage_plane import CoveragePlane
from spectropaint.brushes.dab import (
    BlockStroke,
    CellRadii,
    StrokeState,
    apply_dabs,
    region_refusal,
)
from spectropaint.brushes.history import History, OpenStep, Step
from spectropaint.brushes.kernels import compiled_math
from spectropaint.brushes.plane import StrokePlane
from spectropaint.brushes.registry import BrushKind, brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.settle import SettlePlan, plan_settle, settle_now
from spectropaint.brushes.stroke import (
    MAX_DABS_PER_EVENT,
    MAX_DABS_PER_STROKE,
    DabSpacer,
    InputEvent,
)
from spectropaint.brushes.tiles import LARGEST_TILE, TileMap, tile_for
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.geometry import even_step
from spectropaint.transforms.regions import EMPTY, Region, Regions


class StrokeSession:
    """One stroke of one brush on a document.

    Parameters
    ----------
    document : Document
        What the stroke edits (its first coefficient block).
    brush : str or BrushKind
        A name from :data:`~spectropaint.brushes.registry.BRUSHES`, or the entry itself.
    settings : BrushSettings, optional
        Radius, hardness, strength, spacing, pressure mapping, channel; defaults if omitted.
    params : mapping or the brush's parameter dataclass, optional
        The kernel's parameters; the brush's defaults for any not given.
    history : History, optional
        Where the stroke's undo step goes; without one the stroke cannot be undone.
    fuse : bool
        Apply the dabs of an input event together (the default); False applies them one by one
        (the reference the fused path is tested and measured against).
    pair : bool
        Paint the NSGT's parity pairs together (the default); False paints each block alone (the
        reference the paired path is tested and measured against).
    """

    def __init__(
        self,
        document,
        brush: str | BrushKind,
        settings: BrushSettings | None = None,
        *,
        params: Mapping[str, Any] | Any | None = None,
        history: History | None = None,
        fuse: bool = True,
        pair: bool = True,
    ):
        kind = brush if isinstance(brush, BrushKind) else brush_kind(brush)
        settings = settings or BrushSettings()
        if params is None or isinstance(params, Mapping):
            params = kind.params(params)
        elif not isinstance(params, kind.params_type):
            raise SettingsError(
                f"the {kind.name} brush takes {kind.params_type.__name__}, not {type(params).__name__}"
            )
        channels = settings.channels(document.n_channels)
        plane = StrokePlane.of(settings, document)
        if kind.reads_source and plane.physical and params.offset_seconds is None:
            raise SettingsError(
                "a stroke in seconds gives the clone offset as offset_seconds and offset_pitch"
            )
        blocks = [
            _block_stroke(document, plane.axes(document, index), index, settings, params)
            for index in range(len(document.blocks))
        ]
        refusal = region_refusal(kind, blocks, document, len(channels))
        if refusal is not None:
            raise SettingsError(refusal)
        self.document = document
        self.history = history
        tiles = {block.index: _undo_tile(block.radii) for block in blocks}
        step = (
            history.begin(channels, label=kind.name, tile=tiles)
            if history is not None
            else OpenStep(document, channels, label=kind.name, tile=tiles)
        )
        self.operation = f"painting with {kind.name}"
        self.state = StrokeState(
            document=document,
            kind=kind,
            params=params,
            settings=settings,
            step=step,
            plane=plane,
            blocks=blocks,
            full_scale=document.on_cpu_after_oom(self.operation, lambda: document.full_scale),
        )
        self.spacer = DabSpacer(
            radius_frames=plane.radius[0],
            radius_bins=plane.radius[1],
            spacing=settings.spacing,
            bounds=_plane_bounds(document, blocks),
        )
        self._told: set[str] = set()
        self._switches = compiled_math.SwitchesHeld({})
        self.fuse = fuse
        self.pair = pair
        self.events: list[InputEvent] = []
        """Every input event of the stroke (the pen's settle follows them)."""
        self._committed: weakref.ref[Step] | None = None
        self.open = True

    @property
    def region(self) -> Region | Regions:
        """The boxes the stroke has changed so far (one per block)."""
        return self.state.step.region

    def add_events(self, events: Iterable[InputEvent]) -> Region | Regions:
        """Apply the dabs of ``events``; the boxes they changed (``EMPTY`` if none).

        Events are in the stroke's plane; a plane in seconds takes them in seconds and Hz.
        """
        if not self.open:
            raise RuntimeError("this stroke has ended")
        plane = self.state.plane
        if plane.physical and plane.pitch != "hz":
            events = [
                dataclasses.replace(event, y=float(plane.y_of_hz(event.y))) for event in events
            ]
        events = tuple(events)
        self.events.extend(self._in_cells(events))
        dabs = self.spacer.feed(events)
        self._tell_limits()
        if not dabs:
            return EMPTY
        return self.document.on_cpu_after_oom(self.operation, self._apply(dabs))

    def _in_cells(self, events: tuple[InputEvent, ...]) -> list[InputEvent]:
        """``events`` at the first block's frames and bins (the pen's settle follows those)."""
        if not self.state.plane.physical:
            return list(events)
        axes = self.state.blocks[0].axes
        with np.errstate(over="ignore"):  # a point out past any grid: made finite just below
            xs, ys = axes.cell_of([event.x for event in events], [event.y for event in events])
        return [
            dataclasses.replace(event, x=_finite(float(x)), y=_finite(float(y)))
            for event, x, y in zip(events, xs, ys, strict=True)
        ]

    def _tell_limits(self) -> None:
        """Say once per stroke (a document notice) that it met a bound of :mod:`.stroke`."""
        if self.spacer.thinned and "thinned" not in self._told:
            self._told.add("thinned")
            self.document.notices.emit(
                f"{self.operation}: a pointer move would have needed more than "
                f"{MAX_DABS_PER_EVENT} dabs; they were spaced wider"
            )
        if self.spacer.limited and "limited" not in self._told:
            self._told.add("limited")
            self.document.notices.emit(
                f"{self.operation}: the stroke reached {MAX_DABS_PER_STROKE} dabs, the most a "
                "stroke may have; the rest of it was not painted"
            )

    def _apply(self, dabs) -> Callable[[], Region | Regions]:
        """The dabs applied on the document's current device. Repeatable: groups of dabs a failed
        attempt wrote are not applied again (a warp group writes only at its end)."""
        done: set = set()

        def work() -> Region | Regions:
            self.state.follow(self.document.device)
            # an event is dozens of small torch calls: each dispatches faster without autograd's
            # bookkeeping (what they make is read, or written only under this mode, later)
            with torch.inference_mode(), self._switches:
                return apply_dabs(self.state, dabs, fuse=self.fuse, pair=self.pair, done=done)

        return work

    def end(self, *, to_host: bool = True) -> bool:
        """Finish the stroke; True when its undo step was kept in the history.

        The stroke's coefficients are still as painted: :meth:`settle_plan` and
        :func:`~spectropaint.brushes.settle.apply_settle` make them what is heard.
        ``to_host=False``: the step's tiles stay on a GPU until the caller moves them
        (``committed.values_to_host(lock)``, see :meth:`.history.History.commit`).
        """
        self._close()
        if self.history is None or not self.history.commit(to_host=to_host):
            return False
        self._committed = weakref.ref(self.history.undo_steps[-1])
        return True

    @property
    def committed(self) -> Step | None:
        """The stroke's undo step once :meth:`end` has kept it in the history, while it is there
        (held weakly: a finished stroke keeps nothing the history has dropped)."""
        return None if self._committed is None else self._committed()

    def settle_plan(self) -> SettlePlan | None:
        """The stroke-end step's plan (call after :meth:`end`, under the document's lock; cheap).

        None when the stroke changed nothing. See :mod:`spectropaint.brushes.settle`.
        """
        if self.open:
            raise RuntimeError("end the stroke before planning its settle")
        try:
            return plan_settle(self)
        finally:
            self.state.step.release()  # a stroke without history kept its originals for this

    def abort(self) -> Region:
        """Undo everything the stroke wrote and finish it; the box restored."""
        self._close()
        if self.history is not None:
            return self.history.abort()
        return self.state.step.abort()

    def _close(self) -> None:
        if not self.open:
            raise RuntimeError("this stroke has already ended")
        self.open = False
        for block in self.state.blocks:  # nothing outside the history outlives the stroke
            block.release_coverage()


def paint(
    document,
    brush: str | BrushKind,
    events: Iterable[InputEvent],
    settings: BrushSettings | None = None,
    *,
    params: Mapping[str, Any] | Any | None = None,
    history: History | None = None,
    settle: bool = True,
) -> Region:
    """Apply a whole stroke, one input event at a time as a live pointer would, then settle it
    (as the window does when a stroke ends, but at once); the box it changed.

    ``settle=False`` leaves the coefficients as painted (to study a brush's painting alone).
    """
    session = StrokeSession(document, brush, settings, params=params, history=history)
    for event in events:
        session.add_events((event,))
    session.end()
    if not settle:
        return session.region
    return session.region.union(settle_now(document, history, session.settle_plan))


COVERAGE_TILE = LARGEST_TILE
"""The side of a stroke's coverage tiles on a device, whatever its radius: one float a cell, kept
only while the stroke is painted, so large tiles cost little memory, and a move across a long file
seen whole (a box of hundreds of frames) meets a few of them instead of dozens (each met tile is a
read and a write per group of dabs)."""


def _undo_tile(radii: CellRadii) -> int:
    """The side of the tiles of a stroke's undo data in a block of these radii: about one dab
    across (:func:`~spectropaint.brushes.tiles.tile_for`), so small strokes keep little."""
    return tile_for(max(radii.radius_frames, radii.radius_bins))


def _block_stroke(document, axes, index: int, settings: BrushSettings, params) -> BlockStroke:
    """A stroke's state for one block: radii in its cells (where they are largest), margin,
    coverage in tiles of :data:`COVERAGE_TILE` on the device, or in one plane on the host."""
    block = document.blocks[index]
    plane_x, plane_y = StrokePlane.of(settings, document).radius
    if axes.identity:
        radii = CellRadii(settings.radius_frames, settings.radius_bins, settings.spacing)
    else:
        steps = np.diff(axes.y)
        steps = steps[np.isfinite(steps) & (steps > 0)]
        densest = 1.0 / steps.min() if len(steps) else 1.0
        radii = CellRadii(plane_x / axes.x_scale, plane_y * densest, settings.spacing)
    return BlockStroke(
        index=index,
        axes=axes,
        coverage=TileMap(block.n_bins, block.n_frames, tile=COVERAGE_TILE, block=index),
        plane=CoveragePlane(block.n_bins, block.n_frames),
        band_hz=torch.as_tensor(block.band_hz, dtype=torch.float64),  # moved by the 1st dab
        radii=radii,
        margin=params.margin(radii),
        band_step_hz=even_step(block.band_hz),
    )


def _plane_bounds(document, blocks: list[BlockStroke]) -> tuple[float, float, float, float]:
    """``(x0, x1, y0, y1)``: the centres of every block's first and last frames and bands in the
    stroke's plane; a dab beyond them by more than its radius touches nothing."""
    xs, ys = [], []
    for block in blocks:
        axes, n_frames = block.axes, document.blocks[block.index].n_frames
        xs += [axes.x_offset, axes.x_offset + axes.x_scale * max(n_frames - 1, 0)]
        ys += [float(axes.y[0]), float(axes.y[-1])]
    return min(xs), max(xs), min(ys), max(ys)


def _finite(value: float) -> float:
    """``value`` within +-1e12 (an event far outside the document stays far outside, finitely)."""
    return float(min(1e12, max(-1e12, value)))
