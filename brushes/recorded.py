"""Recorded strokes: a JSON file of brush, settings and input events, loaded, saved and replayed.

The format is documented in the README (Recorded strokes). Replaying feeds the events one at a time, as a
live pointer would, so a recorded file gives the same edits as the stroke it records, on every run.

Version 2 lets a stroke be physical: radii ``radius_seconds`` with ``radius_semitones`` (or
``radius_hz``) and events ``[t, seconds, hz, pressure]``, so it replays on any transform; a stroke
without them is in frames and bins as in version 1, whose files still load. :func:`physical_stroke`
converts the one to the other with a document's STFT geometry.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from spectropaint.brushes.engine import paint
from spectropaint.brushes.plane import StrokePlane
from spectropaint.brushes.registry import brush_kind
from spectropaint.brushes.settings import BrushSettings, to_mapping
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.errors import SettingsError, SpectroPaintError
from spectropaint.transforms.files.project_manifest import MAX_STROKES_BYTES
from spectropaint.transforms.files.safe_read import InputRefused, parse_json, read_small_file

FORMAT = "spectropaint-strokes"
VERSION = 2
READABLE_VERSIONS = (1, 2)
PHYSICAL_KEYS = ("radius_seconds", "radius_semitones", "radius_hz")
MAX_STROKES = 10_000
"""The most strokes one file may hold."""
MAX_EVENTS_PER_STROKE = 100_000
"""The most input events one stroke may hold (half an hour of a 60 Hz pointer)."""
MAX_EVENTS = 1_000_000
"""The most input events one file may hold, all strokes together."""


class PackedEvents(Sequence[InputEvent]):
    """Input events kept as float64 rows ``[t, x, y, pressure]``: 32 bytes an event instead of about
    200 as objects, which matters to a window that records every stroke of a long session. Reading
    gives :class:`InputEvent` objects with the exact values stored."""

    __slots__ = ("array",)

    def __init__(self, events: Iterable[InputEvent]):
        if isinstance(events, PackedEvents):
            self.array: np.ndarray = events.array
            return
        rows = [(e.t, e.x, e.y, e.pressure) for e in events]
        self.array = np.array(rows, dtype=np.float64).reshape(len(rows), 4)
        self.array.flags.writeable = False

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return tuple(self)[index]
        return InputEvent(*self.array[index].tolist())

    def __iter__(self) -> Iterator[InputEvent]:
        for row in self.array.tolist():
            yield InputEvent(*row)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedEvents):
            return np.array_equal(self.array, other.array)
        if isinstance(other, Sequence):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"PackedEvents({len(self)} events)"


@dataclass(frozen=True)
class RecordedStroke:
    """One stroke: the brush's name, its settings and parameters, and the input events.

    ``events`` may be given as any iterable of :class:`InputEvent`; it is kept as
    :class:`PackedEvents`. ``origin`` names where the stroke came from (``'file.json', stroke 2``)
    for error messages.
    """

    brush: str
    settings: BrushSettings
    params: Any
    events: Sequence[InputEvent]
    origin: str = "a recorded stroke"

    def __post_init__(self) -> None:
        object.__setattr__(self, "events", PackedEvents(self.events))

    def to_dict(self) -> dict[str, Any]:
        return {
            "brush": self.brush,
            "settings": self.settings.to_dict(),
            "params": to_mapping(self.params),
            "events": self.events.array.tolist(),
        }


def _event(values: Any) -> InputEvent:
    if not isinstance(values, list) or len(values) not in (3, 4):
        raise SettingsError(
            "an event must be [t, x, y] or [t, x, y, pressure] (x, y: frame and bin, or seconds "
            f"and Hz), not {values!r}"
        )
    return InputEvent(*values)


def stroke_from_dict(values: Any, *, origin: str, version: int = VERSION) -> RecordedStroke:
    """A :class:`RecordedStroke` from its JSON object; :class:`SettingsError` prefixed by ``origin``."""
    try:
        if not isinstance(values, Mapping):
            raise SettingsError(f"a stroke must be an object, not {values!r}")
        unknown = sorted(set(values) - {"brush", "settings", "params", "events"})
        if unknown:
            raise SettingsError(f"unknown stroke key {', '.join(map(repr, unknown))}")
        if "brush" not in values or "events" not in values:
            raise SettingsError("a stroke needs 'brush' and 'events'")
        kind = brush_kind(values["brush"])
        given = values.get("settings", {})
        if version == 1 and isinstance(given, Mapping) and set(given) & set(PHYSICAL_KEYS):
            raise SettingsError("radii in seconds, semitones or Hz need strokes format version 2")
        settings = BrushSettings.from_dict(given)
        params = kind.params(values.get("params", {}))
        events = values["events"]
        if not isinstance(events, list) or not events:
            raise SettingsError("'events' must be a non-empty list of [t, frame, bin, pressure]")
        if len(events) > MAX_EVENTS_PER_STROKE:
            raise SettingsError(
                f"{len(events)} events, more than the {MAX_EVENTS_PER_STROKE} a stroke may hold"
            )
        return RecordedStroke(kind.name, settings, params, tuple(map(_event, events)), origin)
    except SettingsError as exc:
        raise SettingsError(f"{origin}: {exc}") from None


def load_strokes(path: str | os.PathLike) -> list[RecordedStroke]:
    """Read a strokes file; :class:`SpectroPaintError` (or its :class:`SettingsError`) naming the file.

    Only a regular file of at most ``MAX_STROKES_BYTES`` is read, its JSON within the limits of
    :func:`~spectropaint.transforms.files.safe_read.parse_json`, holding at most
    :data:`MAX_STROKES` strokes and :data:`MAX_EVENTS` events.
    """
    name = os.fspath(path)
    try:
        text = read_small_file(name, limit=MAX_STROKES_BYTES)
    except InputRefused as exc:
        raise SpectroPaintError(f"cannot open strokes file '{name}': {exc}") from None
    try:
        data = parse_json(text)
    except InputRefused as exc:
        raise SettingsError(f"cannot read strokes file '{name}': {exc}") from None
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        raise SettingsError(f'\'{name}\': not a strokes file (it needs "format": "{FORMAT}")')
    version = data.get("version")
    if version not in READABLE_VERSIONS:
        raise SettingsError(f"'{name}': strokes format version {version!r} is not 1 or 2")
    strokes = data.get("strokes")
    if not isinstance(strokes, list):
        raise SettingsError(f"'{name}': \"strokes\" must be a list")
    if len(strokes) > MAX_STROKES:
        raise SettingsError(
            f"'{name}': {len(strokes)} strokes, more than the {MAX_STROKES} allowed"
        )
    events = sum(
        len(stroke["events"])
        for stroke in strokes
        if isinstance(stroke, Mapping) and isinstance(stroke.get("events"), list)
    )
    if events > MAX_EVENTS:
        raise SettingsError(f"'{name}': {events} events, more than the {MAX_EVENTS} allowed")
    return [
        stroke_from_dict(values, origin=f"'{name}', stroke {index + 1}", version=version)
        for index, values in enumerate(strokes)
    ]


def save_strokes(path: str | os.PathLike, strokes: Iterable[RecordedStroke]) -> None:
    """Write strokes in the format :func:`load_strokes` reads, one event per line."""
    blocks = []
    for stroke in strokes:
        values = stroke.to_dict()
        events = ",\n".join(f"        {json.dumps(event)}" for event in values.pop("events"))
        fields = [f'      "{key}": {json.dumps(value)}' for key, value in values.items()]
        blocks.append(
            "    {\n" + ",\n".join(fields) + f',\n      "events": [\n{events}\n      ]\n    }}'
        )
    text = (
        f'{{\n  "format": "{FORMAT}",\n  "version": {VERSION},\n  "strokes": [\n'
        + ",\n".join(blocks)
        + "\n  ]\n}\n"
    )
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def physical_stroke(stroke: RecordedStroke, document) -> RecordedStroke:
    """``stroke`` in seconds and Hz (radii in seconds and Hz; clone offset too), converted with the
    frames and bins it was drawn in: the document's STFT, or the default one (hop 512, ``n_fft``
    2048) for a document of another transform. A physical stroke is returned as it is."""
    if stroke.settings.radius_seconds is not None:
        return stroke
    plane = StrokePlane.of(stroke.settings, document)
    seconds, hz = plane.frame_seconds, plane.bin_hz
    settings = dataclasses.replace(
        stroke.settings,
        radius_seconds=stroke.settings.radius_frames * seconds,
        radius_hz=stroke.settings.radius_bins * hz,
    )
    params = stroke.params
    if brush_kind(stroke.brush).reads_source:
        params = dataclasses.replace(
            params,
            offset_seconds=params.offset_frames * seconds,
            offset_pitch=params.offset_bins * hz,
        )
    events = [
        InputEvent(e.t, plane.first_seconds + e.x * seconds, e.y * hz, e.pressure)
        for e in stroke.events
    ]
    return RecordedStroke(stroke.brush, settings, params, events, stroke.origin)


def apply_strokes(document, strokes: Iterable[RecordedStroke], *, history=None) -> None:
    """Replay ``strokes`` on ``document`` in order, one event at a time.

    Raises :class:`SettingsError` naming the stroke's origin when it does not fit the document (a
    channel it does not have).
    """
    for stroke in strokes:
        try:
            paint(
                document,
                stroke.brush,
                stroke.events,
                stroke.settings,
                params=stroke.params,
                history=history,
            )
        except SettingsError as exc:
            raise SettingsError(f"{stroke.origin}: {exc}") from None
