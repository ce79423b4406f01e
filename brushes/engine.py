"""A stroke in progress: events in, dabs applied, one region-changed event per input event.

``StrokeSession(document, "blur", settings)`` begins a stroke (and opens its history step);
:meth:`StrokeSession.add_events` applies the dabs of one or more input events and emits the
document's ``region_changed`` once with the box they changed; :meth:`StrokeSession.end` commits the
step. Like libmypaint's surface, the session needs nothing of the document but ``read``, ``write``,
``blocks[0]`` geometry, ``region_changed`` and ``on_cpu_after_oom``: a dab that runs the device out
of memory moves the document to the CPU (with a notice) and is applied again there.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import torch

from spectropaint.brushes.dab import StrokeState, apply_dab
from spectropaint.brushes.history import History, OpenStep, Step
from spectropaint.brushes.registry import BrushKind, brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.settle import SettlePlan, SettleResult, apply_settle, plan_settle
from spectropaint.brushes.stroke import Dab, DabSpacer, InputEvent
from spectropaint.brushes.tiles import TileMap, tile_for
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.regions import EMPTY, Region

_full_scale_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def full_scale_magnitude(document) -> float:
    """Magnitude of the peak bin of a full-scale sinusoid at a bin's centre, in this document's transform.

    Measured once per document by analysing a test tone, so it holds for any window and scaling.
    """
    if document not in _full_scale_cache:
        block = document.blocks[0]
        transform = document.transform
        bin_index = max(1, block.n_bins // 4)
        n = 4 * transform.min_samples()
        times = np.arange(n) / document.sample_rate
        tone = np.cos(2 * np.pi * block.band_hz[bin_index] * times)[None, :]
        samples = torch.from_numpy(tone).to(document.device)
        middle = (n // 2) // block.hop
        coefficients = transform.analyse_frames(samples, 0, middle, middle + 1)
        _full_scale_cache[document] = float(coefficients.abs().max())
    return _full_scale_cache[document]


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
            full_scale=document.on_cpu_after_oom(
                self.operation, lambda: full_scale_magnitude(document)
            ),
            margin=params.margin(settings),
        )
        self.spacer = DabSpacer(
            radius_frames=settings.radius_frames,
            radius_bins=settings.radius_bins,
            spacing=settings.spacing,
        )
        self.events: list[InputEvent] = []
        """Every input event of the stroke (the pen's settle follows them)."""
        self._committed: weakref.ref[Step] | None = None
        self.open = True

    @property
    def region(self) -> Region:
        """The box the stroke has changed so far."""
        return self.state.step.region

    def add_events(self, events: Iterable[InputEvent]) -> Region:
        """Apply the dabs of ``events``; emit ``region_changed`` once if anything changed.

        Returns the box changed by these events (``EMPTY`` if none).
        """
        if not self.open:
            raise RuntimeError("this stroke has ended")
        events = tuple(events)
        self.events.extend(events)
        dirty = EMPTY
        for dab in self.spacer.feed(events):
            dirty = dirty.union(self.document.on_cpu_after_oom(self.operation, self._dab(dab)))
        if not dirty.empty:
            self.document.region_changed.emit(dirty)
        return dirty

    def _dab(self, dab: Dab) -> Callable[[], Region]:
        """Apply ``dab`` on the document's current device (repeatable: a dab that failed part way
        has written nothing, and its coverage is a maximum, which repeating leaves alone)."""

        def work() -> Region:
            self.state.follow(self.document.device)
            return apply_dab(self.state, dab)

        return work

    def end(self) -> bool:
        """Finish the stroke; True when its undo step was kept in the history.

        The stroke's coefficients are still as painted: :meth:`settle_plan` and
        :func:`~spectropaint.brushes.settle.apply_settle` make them what is heard.
        """
        self._close()
        if self.history is None or not self.history.commit():
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

    def abort(self) -> None:
        """Undo everything the stroke wrote and finish it (emits once if it wrote anything)."""
        self._close()
        if self.history is not None:
            self.history.abort()
        else:
            self.state.step.abort()

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
    settled = document.on_cpu_after_oom(
        f"settling the {session.state.kind.name} stroke",
        lambda: _settled(session),
    )
    return session.region.union(apply_settle(document, history, settled))


def _settled(session: StrokeSession) -> SettleResult | None:
    plan = session.settle_plan()
    return None if plan is None else plan.compute()
