"""Recorded operations: a selection and what was done to it, as data, replayed in order.

An operation entry of a strokes file (README, "Recorded strokes") is a JSON object::

    {"select": {"shape": "rectangle", "t0": 1.2, "t1": 1.3, "f0": 0, "f1": 22050},
     "apply": "heal", "params": {"mode": "partials"}}

``select`` is one shape, a list of shapes (each with ``"combine": "add" | "subtract" |
"intersect"`` after the first) or ``{"shapes": [...], "feather": [s, hz], "invert": true}``
(:meth:`~spectropaint.transforms.selection.Selection.from_dict`); ``apply`` names an operation of
:data:`~spectropaint.brushes.operations.OPERATIONS` (``paste`` needs no selection) or one of the
helpers: ``declick`` (find the clicks in the selection's time span, or the whole sound, and heal
each), ``dehum`` (find a hum's fundamental, attenuate it and its harmonics by ``gain_db``) and
``image`` (import a picture: ``path`` and :class:`~.image_import.ImagePlacement`'s fields);
``channel`` (optional) limits it to one channel. Shapes that depend on the sound (harmonic, wand)
are measured again when replayed, on the document as it is at that point, so a replay gives the
same result on every run.

:func:`entry_from_dict` reads a stroke or an operation; :func:`apply_entries` replays a list of
them, sharing one clipboard, each as one undo step.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spectropaint.brushes.history import History
from spectropaint.brushes.image_import import ImagePlacement, plan_image
from spectropaint.brushes.operations import (
    NEEDS_SELECTION,
    OPERATIONS,
    Clipboard,
    Plan,
    apply_plans,
    operation_params,
    plan_operation,
)
from spectropaint.brushes.recorded import (
    FORMAT,
    RecordedStroke,
    apply_strokes,
    load_strokes,
    read_json,
    stroke_from_dict,
)
from spectropaint.brushes.restoration import declick_plans, dehum_selection, find_clicks
from spectropaint.brushes.settle import plan_operation_settle, settle_now
from spectropaint.brushes.validation import from_mapping
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.files.image_file import load_image
from spectropaint.transforms.regions import EMPTY, Region
from spectropaint.transforms.selection import Selection, rasterise_blocks, resolve

ACTIONS_VERSION = 2
"""The strokes file version whose ``actions`` list mixes strokes and operations."""


@dataclass(frozen=True)
class DeclickParams:
    """``threshold_db``: how far above both sides a band must stand; ``min_share``: the share of
    bands that must; ``mode``: how each click is healed."""

    threshold_db: float = 12.0
    min_share: float = 0.2
    mode: str = "partials"

    def __post_init__(self) -> None:
        operation_params("heal", {"mode": self.mode})
        if not (0 < self.threshold_db <= 60 and 0 < self.min_share <= 1):
            raise SettingsError("declick needs threshold_db in 0..60 and min_share in 0..1")


@dataclass(frozen=True)
class DehumParams:
    """Where to look for the hum's fundamental, how many harmonics, how wide, how much quieter."""

    low_hz: float = 40.0
    high_hz: float = 70.0
    count: int = 20
    width_cents: float = 50.0
    gain_db: float = -40.0

    def __post_init__(self) -> None:
        if not 0 < self.low_hz < self.high_hz:
            raise SettingsError("dehum needs 0 < low_hz < high_hz")
        operation_params("gain", {"gain_db": self.gain_db})


@dataclass(frozen=True)
class ImageParams:
    """A picture file and where it goes (:class:`ImagePlacement`'s fields)."""

    path: str = ""
    placement: dict = field(default_factory=dict)


HELPERS: dict[str, type] = {"declick": DeclickParams, "dehum": DehumParams, "image": ImageParams}
ACTION_NAMES = (*OPERATIONS, *HELPERS)


@dataclass(frozen=True)
class RecordedAction:
    """One operation: its name, parameters (a JSON mapping), the selection it acted on (None for
    paste, image, or a helper over the whole sound) and the channel (None: all)."""

    apply: str
    params: Mapping[str, Any]
    selection: Selection | None = None
    channel: int | None = None
    origin: str = "a recorded operation"

    def __post_init__(self) -> None:
        check_action(self.apply, self.params)
        if self.apply in NEEDS_SELECTION and self.selection is None:
            raise SettingsError(f"{self.apply} needs a selection ('select')")

    def to_dict(self) -> dict[str, Any]:
        values: dict[str, Any] = {}
        if self.selection is not None:
            selection = self.selection.to_dict()
            shapes = selection["shapes"]
            values["select"] = shapes[0] if len(selection) == 1 and len(shapes) == 1 else selection
        values["apply"] = self.apply
        if self.params:
            values["params"] = dict(self.params)
        if self.channel is not None:
            values["channel"] = self.channel
        return values


def check_action(name: str, params: Mapping[str, Any]) -> Any:
    """The validated parameters of action ``name``."""
    if name in HELPERS:
        values = dict(params or {})
        if name == "image":
            placement = ImagePlacement(**values.get("placement", {}))
            if not isinstance(values.get("path"), str) or not values["path"]:
                raise SettingsError("image needs 'path': the picture's file")
            return ImageParams(values["path"], dict(placement.__dict__))
        return from_mapping(HELPERS[name], values, what=f"{name} parameter")
    if name not in OPERATIONS:
        raise SettingsError(f"unknown operation {name!r} (known: {', '.join(ACTION_NAMES)})")
    return operation_params(name, params)


def action_from_dict(values: Mapping[str, Any], *, origin: str) -> RecordedAction:
    """A :class:`RecordedAction` from its JSON object; SettingsError prefixed by ``origin``."""
    try:
        unknown = sorted(set(values) - {"select", "apply", "params", "channel"})
        if unknown:
            raise SettingsError(f"unknown operation key {', '.join(map(repr, unknown))}")
        name = values.get("apply")
        if not isinstance(name, str):
            raise SettingsError("an operation needs 'apply': the operation's name")
        params = values.get("params", {})
        if not isinstance(params, Mapping):
            raise SettingsError(f"'params' must be an object, not {params!r}")
        selection = Selection.from_dict(values["select"]) if "select" in values else None
        channel = values.get("channel")
        if channel is not None and (isinstance(channel, bool) or not isinstance(channel, int)):
            raise SettingsError(f"'channel' must be a channel number, not {channel!r}")
        return RecordedAction(name, dict(params), selection, channel, origin)
    except SettingsError as exc:
        raise SettingsError(f"{origin}: {exc}") from None


def entry_from_dict(values: Any, *, origin: str) -> RecordedStroke | RecordedAction:
    """A stroke (it has ``brush``) or an operation (it has ``apply``)."""
    if isinstance(values, Mapping) and "apply" in values:
        return action_from_dict(values, origin=origin)
    return stroke_from_dict(values, origin=origin)


# ------------------------------------------------------------------------------------- files
def load_entries(path: str | os.PathLike) -> list[RecordedStroke | RecordedAction]:
    """Read a strokes file: version 1 (``strokes``) or 2 (``actions``: strokes and operations).

    Errors name the file and the entry (:class:`SettingsError`, :class:`SpectroPaintError`).
    """
    name, data = read_json(path)
    if not isinstance(data, Mapping) or "actions" not in data:
        return list(load_strokes(name))  # strokes alone, or the reasons it is not a strokes file
    if data.get("format") != FORMAT:
        raise SettingsError(f'\'{name}\': not a strokes file (it needs "format": "{FORMAT}")')
    entries = data.get("actions")
    if not isinstance(entries, list):
        raise SettingsError(f"'{name}': \"actions\" must be a list")
    folder = os.path.dirname(os.path.abspath(name))
    return [
        _beside(entry_from_dict(values, origin=f"'{name}', action {index + 1}"), folder)
        for index, values in enumerate(entries)
    ]


def _beside(entry, folder: str):
    """An image import whose picture is named relative to the strokes file, found there."""
    if isinstance(entry, RecordedAction) and entry.apply == "image":
        path = entry.params.get("path", "")
        if not os.path.isabs(path):
            params = dict(entry.params, path=os.path.join(folder, path))
            return RecordedAction("image", params, entry.selection, entry.channel, entry.origin)
    return entry


def save_entries(path: str | os.PathLike, entries: Iterable[RecordedStroke | RecordedAction]):
    """Write ``entries`` as a version 2 strokes file (one entry per line)."""
    lines = ",\n".join(f"    {json.dumps(entry.to_dict())}" for entry in entries)
    text = (
        f'{{\n  "format": "{FORMAT}",\n  "version": {ACTIONS_VERSION},\n'
        f'  "actions": [\n{lines}\n  ]\n}}\n'
    )
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


# ------------------------------------------------------------------------------------ replay
def plan_action(
    document, action: RecordedAction, *, clipboard: Clipboard
) -> tuple[str, list[Plan]]:
    """What ``action`` does to ``document`` now: a label and the plans of its one undo step (none
    for a copy, or a selection that selects nothing)."""
    params = check_action(action.apply, action.params)
    channels = None if action.channel is None else (action.channel,)
    if action.channel is not None and action.channel >= document.n_channels:
        raise SettingsError(
            f"channel {action.channel} asked for; the document has {document.n_channels}"
        )
    selection = None
    if action.selection is not None:
        selection = resolve(action.selection, document)
    span = _time_span(document, selection)
    if action.apply == "declick":
        clicks = find_clicks(
            document,
            t0=span[0],
            t1=span[1],
            threshold_db=params.threshold_db,
            min_share=params.min_share,
        )
        return f"de-click ({len(clicks)} clicks)", declick_plans(document, clicks, mode=params.mode)
    if action.apply == "dehum":
        selection = dehum_selection(
            document,
            t0=span[0],
            t1=span[1],
            low_hz=params.low_hz,
            high_hz=params.high_hz,
            count=params.count,
            width_cents=params.width_cents,
        )
        masks = rasterise_blocks(resolve(selection, document), document, channels=channels)
        plans = plan_operation(
            document, masks, "gain", {"gain_db": params.gain_db}, clipboard=clipboard
        )
        return "de-hum", plans
    if action.apply == "image":
        placement = ImagePlacement(**params.placement)
        plans = plan_image(document, load_image(params.path), placement, channels=channels)
        return f"import image {os.path.basename(params.path)}", plans
    masks = None if selection is None else rasterise_blocks(selection, document, channels=channels)
    plans = plan_operation(document, masks, action.apply, params, clipboard=clipboard)
    labels = {plan.label for plan in plans}  # 'gain -3.0 dB', 'heal (inpaint)': what it did
    return (labels.pop() if len(labels) == 1 else action.apply), plans


def _time_span(document, selection: Selection | None) -> tuple[float, float]:
    """The selection's time span within the sound (all of it without a selection)."""
    end = document.n_samples / document.sample_rate
    if selection is None:
        return 0.0, end
    t0, t1, _, _ = selection.bounds()
    return max(0.0, t0), min(end, t1)


def apply_action(document, action: RecordedAction, *, clipboard: Clipboard, history=None) -> Region:
    """Replay one operation as one undo step of ``history``, settled at once (as the window
    settles it in the background: :mod:`.settle`); the box it changed."""
    try:
        label, plans = plan_action(document, action, clipboard=clipboard)
    except SettingsError as exc:
        raise SettingsError(f"{action.origin}: {exc}") from None
    if not plans:
        return EMPTY
    history = History(document) if history is None else history  # the values before, to settle
    region = apply_plans(document, plans, label=label, history=history)
    settled = settle_now(
        document,
        history,
        lambda: plan_operation_settle(history, region, [plan.region for plan in plans]),
    )
    return region.union(settled)


def apply_entries(
    document,
    entries: Iterable[RecordedStroke | RecordedAction],
    *,
    history=None,
    clipboard: Clipboard | None = None,
) -> None:
    """Replay strokes and operations in order (one undo step each, with ``history``)."""
    clipboard = Clipboard() if clipboard is None else clipboard
    for entry in entries:
        if isinstance(entry, RecordedAction):
            apply_action(document, entry, clipboard=clipboard, history=history)
        else:
            apply_strokes(document, [entry], history=history)
