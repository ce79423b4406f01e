"""A stroke in progress: events in, dabs applied, one region-changed event per input event.

``StrokeSession(document, "blur", settings)`` begins a stroke (and opens its history step);
:meth:`StrokeSession.add_events` applies the dabs of one or more input events and returns the box
they changed (the caller tells its listeners: ``spectropaint.app.session.Session``);
:meth:`StrokeSession.end` commits the step. Like libmypaint's surface, the stroke needs nothing of
the document but ``read``, ``write``, ``blocks[0]`` geometry, ``on_cpu_after_oom`` and ``notices``:
a dab that runs the device out of memory moves the document to the CPU (with a notice) and is
applied again there. The stroke's bounds (:mod:`.stroke`) are told once each as notices, and a
stroke whose dabs' regions would not fit in memory is refused before it begins.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import torch

from spectropaint.brushes.dab import StrokeState, apply_dab, region_refusal
from spectropaint.brushes.history import History, OpenStep
from spectropaint.brushes.registry import BrushKind, brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import (
    MAX_DABS_PER_EVENT,
    MAX_DABS_PER_STROKE,
    Dab,
    DabSpacer,
    InputEvent,
)
from spectropaint.brushes.tiles import TileMap, tile_for
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.regions import EMPTY, Region


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
    """

    def __init__(
        self,
        document,
        brush: str | BrushKind,
        settings: BrushSettings | None = None,
        *,
        params: Mapping[str, Any] | Any | None = None,
        history: History | None = None,
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
        block = document.blocks[0]
        refusal = region_refusal(kind, settings, params.margin(settings), block, len(channels))
        if refusal is not None:
            raise SettingsError(refusal)
        self.document = document
        self.history = history
        tile = tile_for(max(settings.radius_frames, settings.radius_bins))
        step = (
            history.begin(channels, label=kind.name, tile=tile)
            if history is not None
            else OpenStep(document, channels, label=kind.name, tile=tile)
        )
        self.operation = f"painting with {kind.name}"
        self.state = StrokeState(
            document=document,
            kind=kind,
            params=params,
            settings=settings,
            step=step,
            coverage=TileMap(block.n_bins, block.n_frames, tile=tile),
            band_hz=torch.as_tensor(block.band_hz, dtype=torch.float64),  # moved by the 1st dab
            full_scale=document.on_cpu_after_oom(self.operation, lambda: document.full_scale),
            margin=params.margin(settings),
        )
        self.spacer = DabSpacer(
            radius_frames=settings.radius_frames,
            radius_bins=settings.radius_bins,
            spacing=settings.spacing,
            extent=(block.n_frames, block.n_bins),
        )
        self._told: set[str] = set()
        self.open = True

    @property
    def region(self) -> Region:
        """The box the stroke has changed so far."""
        return self.state.step.region

    def add_events(self, events: Iterable[InputEvent]) -> Region:
        """Apply the dabs of ``events``; the box they changed (``EMPTY`` if none)."""
        if not self.open:
            raise RuntimeError("this stroke has ended")
        dirty = EMPTY
        dabs = self.spacer.feed(events)
        self._tell_limits()
        for dab in dabs:
            dirty = dirty.union(self.document.on_cpu_after_oom(self.operation, self._dab(dab)))
        return dirty

    def _tell_limits(self) -> None:
        """Say once per stroke (a document notice) that it met a bound of :mod:`.stroke`."""
        said = {
            "thinned": f"{self.operation}: a pointer move would have needed more than "
            f"{MAX_DABS_PER_EVENT} dabs; they were spaced wider",
            "limited": f"{self.operation}: the stroke reached {MAX_DABS_PER_STROKE} dabs, the most "
            "a stroke may have; the rest of it was not painted",
        }
        for name, message in said.items():
            if getattr(self.spacer, name) and name not in self._told:
                self._told.add(name)
                self.document.notices.emit(message)

    def _dab(self, dab: Dab) -> Callable[[], Region]:
        """Apply ``dab`` on the document's current device (repeatable: a dab that failed part way
        has written nothing, and its coverage is a maximum, which repeating leaves alone)."""

        def work() -> Region:
            self.state.follow(self.document.device)
            return apply_dab(self.state, dab)

        return work

    def end(self) -> bool:
        """Finish the stroke; True when its undo step was kept in the history."""
        self._close()
        return self.history.commit() if self.history is not None else False

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
        self.state.coverage.tiles.clear()  # nothing outside the history outlives the stroke


def paint(
    document,
    brush: str | BrushKind,
    events: Iterable[InputEvent],
    settings: BrushSettings | None = None,
    *,
    params: Mapping[str, Any] | Any | None = None,
    history: History | None = None,
) -> Region:
    """Apply a whole stroke, one input event at a time as a live pointer would; the box it changed."""
    session = StrokeSession(document, brush, settings, params=params, history=history)
    for event in events:
        session.add_events((event,))
    session.end()
    return session.region
