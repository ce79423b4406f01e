"""Recorded strokes: a JSON file of brush, settings and input events, loaded, saved and replayed.

The format is documented in the README (Recorded strokes). Replaying feeds the events one at a time, as a
live pointer would, so a recorded file gives the same edits as the stroke it records, on every run.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from spectropaint.brushes.engine import paint
from spectropaint.brushes.registry import brush_kind
from spectropaint.brushes.settings import BrushSettings, to_mapping
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.errors import SettingsError, SpectroPaintError

FORMAT = "spectropaint-strokes"
VERSION = 1


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
            f"an event must be [t, frame, bin] or [t, frame, bin, pressure], not {values!r}"
        )
    return InputEvent(*values)


def stroke_from_dict(values: Any, *, origin: str) -> RecordedStroke:
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
        settings = BrushSettings.from_dict(values.get("settings", {}))
        params = kind.params(values.get("params", {}))
        events = values["events"]
        if not isinstance(events, list) or not events:
            raise SettingsError("'events' must be a non-empty list of [t, frame, bin, pressure]")
        return RecordedStroke(kind.name, settings, params, tuple(map(_event, events)), origin)
    except SettingsError as exc:
        raise SettingsError(f"{origin}: {exc}") from None


def read_json(path: str | os.PathLike) -> tuple[str, Any]:
    """A strokes file's name and its JSON data; :class:`SpectroPaintError` (or its
    :class:`SettingsError`) naming the file when it cannot be read."""
    name = os.fspath(path)
    try:
        with open(name, encoding="utf-8") as handle:
            return name, json.load(handle)
    except OSError as exc:
        raise SpectroPaintError(
            f"cannot open strokes file '{name}': {exc.strerror or exc}"
        ) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SettingsError(f"cannot read strokes file '{name}': not valid JSON ({exc})") from None


def load_strokes(path: str | os.PathLike) -> list[RecordedStroke]:
    """Read a strokes file; :class:`SpectroPaintError` (or its :class:`SettingsError`) naming the file."""
    name, data = read_json(path)
    if not isinstance(data, Mapping) or data.get("format") != FORMAT:
        raise SettingsError(f'\'{name}\': not a strokes file (it needs "format": "{FORMAT}")')
    if data.get("version") != VERSION:
        raise SettingsError(
            f"'{name}': strokes format version {data.get('version')!r} is not {VERSION}"
        )
    strokes = data.get("strokes")
    if not isinstance(strokes, list):
        raise SettingsError(f"'{name}': \"strokes\" must be a list")
    return [
        stroke_from_dict(values, origin=f"'{name}', stroke {index + 1}")
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
