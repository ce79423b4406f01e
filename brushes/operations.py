"""Operations on a selection: gain, erase, heal, fill with a brush's effect, cut, copy and paste.

Each operation is planned (:func:`plan_operation`) as one :class:`Plan`: a label, the region it
reads and writes (the selection's box plus whatever context it needs), and a ``compute`` of that
region's magnitude and phase. A plan runs as one undo step, by
:meth:`spectropaint.app.session.Session.apply` in the window or :func:`apply_plan` on a bare
document (the command line). The result is blended through the selection's weight
(:func:`~spectropaint.brushes.dab.blend`): a cell of weight 0 keeps its magnitude and phase bit for
bit, and only the selection's box and its context are read, so an operation costs the same on a
ten-second file as on a ten-minute one.

The operations write their *target* coefficients. What an STFT can hold is not every picture: the
issue 11 settle step (re-analysis of what is heard, written back) applies after each of them as it
does after a stroke, over ``plan.region``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from spectropaint.brushes.dab import blend
from spectropaint.brushes.heal import DIRECTIONS, context_frames, heal, reconstruct_phase
from spectropaint.brushes.heal import MODES as HEAL_MODES
from spectropaint.brushes.history import History
from spectropaint.brushes.kernels.context import DabContext
from spectropaint.brushes.kernels.gain import ERASE_DB
from spectropaint.brushes.kernels.phase import phase_ramp
from spectropaint.brushes.params import check_params, param
from spectropaint.brushes.registry import BRUSHES, brush_kind
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.validation import from_mapping
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.geometry import db_label, hz_to_bins
from spectropaint.transforms.regions import EMPTY, Region
from spectropaint.transforms.selection import Mask, main_lobe_bins

Compute = Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
FILL_BRUSHES = tuple(
    name for name, kind in BRUSHES.items() if not (kind.drags or kind.reads_source)
)
"""Brushes whose effect can fill a selection (not the ones that move energy about)."""
PASTE_MODES = ("replace", "mix")


@dataclass(frozen=True)
class Plan:
    """One undoable operation: ``compute(magnitude, phase)`` of ``region`` (each
    ``[channels, bins, frames]``) gives the values written there."""

    label: str
    region: Region
    compute: Compute


# ------------------------------------------------------------------------------ parameters
@dataclass(frozen=True)
class GainOperation:
    """``gain_db``: change of level inside the selection (at full weight)."""

    gain_db: float = param(-12.0, "Gain", "dB", low=ERASE_DB, high=48.0, decimals=1)

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class HealOperation:
    """How to heal: ``mode`` (see :mod:`.heal`) and along which axis."""

    mode: str = param("replace", "Mode", choices=HEAL_MODES)
    direction: str = param("auto", "Direction", choices=DIRECTIONS)

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class FillOperation:
    """Fill with a brush's effect: its name, its parameters, and its settings (the radius, which
    sizes a blur or a filter's margin)."""

    brush: str = param("blur", "Brush", choices=FILL_BRUSHES)
    brush_params: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class PasteOperation:
    """Where to paste: ``at_seconds`` (None: where it was copied from), moved by ``shift_hz``;
    ``replace`` what is there or ``mix`` with it."""

    at_seconds: float | None = param(None, "At", "s", low=0.0, optional=True, decimals=3)
    shift_hz: float = param(0.0, "Shift", "Hz", low=-96000.0, high=96000.0, decimals=1)
    mode: str = param("replace", "Mode", choices=PASTE_MODES)

    def __post_init__(self) -> None:
        check_params(self)


@dataclass(frozen=True)
class NoParams:
    """Operations without parameters (erase, copy, cut)."""


PARAMS: dict[str, type] = {
    "gain": GainOperation,
    "erase": NoParams,
    "heal": HealOperation,
    "fill": FillOperation,
    "cut": NoParams,
    "copy": NoParams,
    "paste": PasteOperation,
}
OPERATIONS = tuple(PARAMS)
NEEDS_SELECTION = frozenset(OPERATIONS) - {"paste"}


def operation_params(name: str, values: Mapping[str, Any] | None = None) -> Any:
    """The validated parameters of operation ``name``; SettingsError naming what is wrong."""
    if name not in PARAMS:
        raise SettingsError(f"unknown operation {name!r} (known: {', '.join(OPERATIONS)})")
    return from_mapping(PARAMS[name], dict(values or {}), what=f"{name} parameter")


# ------------------------------------------------------------------------------- clipboard
@dataclass(frozen=True, eq=False)
class Clip:
    """Copied coefficients of one block: ``magnitude``, ``phase`` ``[C, B, T]`` and ``weight``
    ``[B, T]`` (on the CPU) of ``region``, whose first frame is centred at ``seconds``."""

    region: Region
    magnitude: torch.Tensor
    phase: torch.Tensor
    weight: torch.Tensor
    seconds: float


@dataclass
class Clipboard:
    """What the last copy or cut took: one :class:`Clip` per block the selection reached (none
    before a copy)."""

    clips: tuple[Clip, ...] = ()

    @property
    def seconds(self) -> float:
        """Where the copy starts: its earliest first frame."""
        return min(clip.seconds for clip in self.clips)


# ---------------------------------------------------------------------------------- helpers
def _grown(region: Region, bins: int, frames: int, document) -> Region:
    block = document.blocks[region.block]
    grown = Region(
        region.bin0 - bins,
        region.bin1 + bins,
        region.frame0 - frames,
        region.frame1 + frames,
        region.channels,
        region.block,
    )
    return grown.clipped(block.n_bins, block.n_frames)


def _inner(outer: Region, inner: Region) -> tuple[slice, slice]:
    return (
        slice(inner.bin0 - outer.bin0, inner.bin1 - outer.bin0),
        slice(inner.frame0 - outer.frame0, inner.frame1 - outer.frame0),
    )


def _band_hz(document, region: Region) -> torch.Tensor:
    band = document.blocks[region.block].band_hz[region.bin0 : region.bin1]
    return torch.as_tensor(band, dtype=torch.float64, device=document.device)


def _blended(
    magnitude: torch.Tensor,
    phase: torch.Tensor,
    new_magnitude: torch.Tensor,
    new_phase: torch.Tensor,
    weight: torch.Tensor,
    *,
    keeps_phase: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    return blend(
        torch.stack((magnitude, phase)), new_magnitude, new_phase, weight, keeps_phase=keeps_phase
    )


def _seed(region: Region) -> int:
    """A seed for random phases that depends on where the operation acts, not on when."""
    return (region.frame0 * 1_000_003 + region.bin0 * 9_176 + region.frame1 * 31 + region.bin1) % (
        2**31
    )


# ------------------------------------------------------------------------------- operations
def _gain(mask: Mask, gain_db: float, label: str) -> Plan:
    factor = 10.0 ** (gain_db / 20.0)

    def compute(magnitude, phase):
        return _blended(magnitude, phase, magnitude * factor, phase, mask.weight, keeps_phase=True)

    return Plan(label, mask.region, compute)


def _heal(document, mask: Mask, params: HealOperation) -> Plan:
    block = document.blocks[mask.region.block]
    index, selection = mask.region.block, mask.region
    transform = document.transform
    context = context_frames(block.hop, document.sample_rate)
    consistent = transform.name == "stft"
    if consistent:  # the frames that overlap the selection's are context too
        reached = transform.frames_reaching(
            index, selection.frame0, selection.frame1, document.n_samples
        )
        context = max(context, selection.frame0 - reached[0], reached[1] - selection.frame1)
    frames = max(context, selection.shape[1]) if params.mode == "pattern" else context
    region = _grown(selection, context, frames, document)
    weight = mask.padded(region)
    band_hz = _band_hz(document, region)
    lobe = round(main_lobe_bins(document))
    frame_weight = transform.frame_weight(
        index, torch.arange(region.frame0, region.frame1, device=document.device)
    )

    def compute(magnitude, phase):
        healed = heal(
            magnitude,
            phase,
            weight,
            band_hz=band_hz,
            hop=block.hop,
            sample_rate=document.sample_rate,
            mode=params.mode,
            direction=params.direction,
            lobe_bins=lobe,
            seed=_seed(region),
            frame_weight=frame_weight,
        )
        healed_phase = healed.phase
        if healed.free is not None and consistent:
            healed_phase = reconstruct_phase(
                document.transform,
                region,
                n_samples=document.n_samples,
                base=torch.stack((magnitude, phase)),
                magnitude=healed.magnitude,
                phase=healed_phase,
                weight=weight,
                free=healed.free,
            )
        keeps_phase = healed.free is None and params.mode == "attenuate"
        return _blended(
            magnitude, phase, healed.magnitude, healed_phase, weight, keeps_phase=keeps_phase
        )

    return Plan(f"heal ({params.mode})", region, compute)


def _fill(document, mask: Mask, params: FillOperation) -> Plan:
    kind = brush_kind(params.brush)
    if params.brush not in FILL_BRUSHES:
        raise SettingsError(f"fill takes one of {', '.join(FILL_BRUSHES)}, not {params.brush!r}")
    brush_params = kind.params(params.brush_params)
    settings = BrushSettings.from_dict(params.settings)
    margin_bins, margin_frames = brush_params.margin(settings)
    region = _grown(mask.region, margin_bins, margin_frames, document)
    inner = _inner(region, mask.region)
    block = document.blocks[region.block]
    context = DabContext(
        inner=inner,
        bin_hz=_band_hz(document, region),
        frames=torch.arange(region.frame0, region.frame1, device=document.device),
        hop=block.hop,
        sample_rate=document.sample_rate,
        radius=(settings.radius_frames, settings.radius_bins),
        full_scale=document.full_scale,
    )

    def compute(magnitude, phase):
        new_magnitude, new_phase = kind.kernel(magnitude, phase, mask.weight, brush_params, context)
        box = (slice(None), *inner)
        out_magnitude, out_phase = magnitude.clone(), phase.clone()
        out_magnitude[box], out_phase[box] = _blended(
            magnitude[box],
            phase[box],
            new_magnitude,
            new_phase,
            mask.weight,
            keeps_phase=kind.keeps_phase,
        )
        return out_magnitude, out_phase

    return Plan(f"fill ({params.brush})", region, compute)


def copy_selection(document, masks: Sequence[Mask]) -> tuple[Clip, ...]:
    """The selection's coefficients as they are now, one :class:`Clip` per block."""
    clips = []
    for mask in masks:
        magnitude, phase = document.read(mask.region)
        seconds = float(document.blocks[mask.region.block].frame_seconds[mask.region.frame0])
        clips.append(Clip(mask.region, magnitude.cpu(), phase.cpu(), mask.weight.cpu(), seconds))
    return tuple(clips)


def _shift_bins(band_hz: np.ndarray, region: Region, shift_hz: float) -> int:
    """Whole bands that move ``region``'s centre band by ``shift_hz`` (on evenly spaced bands,
    ``shift_hz`` over the spacing)."""
    if not shift_hz or len(band_hz) < 2:
        return 0
    centre = float(band_hz[(region.bin0 + region.bin1 - 1) // 2])
    target = float(hz_to_bins(centre + shift_hz, band_hz=band_hz))
    return round(target - float(hz_to_bins(centre, band_hz=band_hz)))


def _at(clip: Clip, frames: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``clip``'s complex coefficients ``[C, B, len(frames)]`` at block ``frames`` (zero outside
    it) and whether each frame lies inside."""
    index = frames - clip.region.frame0
    inside = (index >= 0) & (index < clip.region.shape[1])
    values = torch.polar(clip.magnitude, clip.phase)[..., index.clamp(0, clip.region.shape[1] - 1)]
    return torch.where(inside, values, 0), inside


def _moved(document, clip: Clip, clips: tuple[Clip, ...], frames: int) -> torch.Tensor:
    """``clip``'s coefficients (complex ``[C, B, T]``) moved by ``frames`` whole frames.

    Where the transform splits the signal between blocks over time (the NSGT's slice parities,
    whose frame weights sum to 1), a frame's share differs from its source's: the signal at each
    source frame is the weighted least-squares combination of this clip and its partner's (the
    clip of the block with the same bands and hop) there, times the destination's weight.
    """
    transform, block = document.transform, document.blocks[clip.region.block]
    source = torch.arange(clip.region.frame0, clip.region.frame1)
    weight = transform.frame_weight(clip.region.block, source)
    if weight is None or frames == 0:
        return torch.polar(clip.magnitude, clip.phase)
    weight = weight.cpu()
    values, inside = _at(clip, source)
    total = weight * values
    norm = torch.where(inside, weight**2, 0.0)
    for other in clips:
        other_block = document.blocks[other.region.block]
        if other is clip or other_block.hop != block.hop or other_block.n_bins != block.n_bins:
            continue
        if not np.array_equal(other_block.band_hz, block.band_hz):
            continue
        offset = (block.layout.frame0_sample - other_block.layout.frame0_sample) // block.hop
        partner = source + offset
        partner_weight = transform.frame_weight(other.region.block, partner).cpu()
        values, inside = _at(other, partner)
        total = total + partner_weight * values
        norm = norm + torch.where(inside, partner_weight**2, 0.0)
    destination = transform.frame_weight(clip.region.block, source + frames).cpu()
    return total * (destination / norm.clamp_min(1e-6))


def _paste(document, clipboard: Clipboard, params: PasteOperation) -> list[Plan]:
    """Each clip placed ``at_seconds`` minus where the copy started later (whole frames of its
    block) and moved by ``shift_hz`` (whole bands; a shift adds the phase of a modulation by the
    bands' change of frequency, so partials stay coherent)."""
    at = clipboard.seconds if params.at_seconds is None else params.at_seconds
    plans = []
    for clip in clipboard.clips:
        plan = _paste_clip(document, clip, clipboard.clips, at - clipboard.seconds, params)
        if plan is not None:
            plans.append(plan)
    return plans


def _paste_clip(
    document, clip: Clip, clips: tuple[Clip, ...], seconds: float, params: PasteOperation
) -> Plan | None:
    source = clip.region
    block = document.blocks[source.block]
    frames = round(seconds * document.sample_rate / block.hop)
    bins = _shift_bins(block.band_hz, source, params.shift_hz)
    wanted = Region(
        source.bin0 + bins,
        source.bin1 + bins,
        source.frame0 + frames,
        source.frame1 + frames,
        source.channels,
        source.block,
    )
    region = wanted.clipped(block.n_bins, block.n_frames)
    if region.empty:
        return None
    rows, columns = _inner(wanted, region)
    device = document.device
    moved = _moved(document, clip, clips, frames)[:, rows, columns].to(device)
    magnitude, phase = moved.abs(), moved.angle()
    weight = clip.weight[rows, columns].to(device)
    if bins:
        band = torch.as_tensor(block.band_hz, dtype=torch.float64, device=device)
        change = band[region.bin0 : region.bin1] - band[region.bin0 - bins : region.bin1 - bins]
        start = block.layout.frame0_sample / block.hop
        destination = torch.arange(region.frame0, region.frame1, device=device) + start
        ramp = phase_ramp(change, destination, hop=block.hop, sample_rate=document.sample_rate)
        if document.transform.name == "stft":  # its frames' phase is taken at their start
            ramp = ramp - math.pi * bins
        phase = torch.remainder(phase + ramp.to(phase.dtype), 2 * math.pi)

    def compute(old_magnitude, old_phase):
        if params.mode == "replace":
            return _blended(old_magnitude, old_phase, magnitude, phase, weight, keeps_phase=False)
        real = old_magnitude * torch.cos(old_phase) + weight * magnitude * torch.cos(phase)
        imag = old_magnitude * torch.sin(old_phase) + weight * magnitude * torch.sin(phase)
        touched = weight > 0
        return (
            torch.where(touched, torch.sqrt(real * real + imag * imag), old_magnitude),
            torch.where(touched, torch.atan2(imag, real), old_phase),
        )

    return Plan(f"paste ({params.mode})", region, compute)


def plan_operation(
    document,
    masks: Mask | Sequence[Mask] | None,
    name: str,
    params: Mapping[str, Any] | Any | None = None,
    *,
    clipboard: Clipboard,
) -> list[Plan]:
    """Plan operation ``name`` on a selection rasterised on one block (a :class:`Mask`) or on
    several (:func:`~spectropaint.transforms.selection.rasterise_blocks`: each block is acted on
    over its own frames and bands); None or no mask: no selection (only ``paste`` needs none).

    Returns the plans of one undo step (none when the operation changes no coefficient: ``copy``;
    a paste that falls outside the grid; an empty selection). ``copy`` and ``cut`` fill
    ``clipboard``; ``paste`` reads it. Raises :class:`SettingsError` for unknown operations, bad
    parameters, or nothing to paste.
    """
    if not isinstance(params, tuple(PARAMS.values())):
        params = operation_params(name, params)
    elif name not in PARAMS or not isinstance(params, PARAMS[name]):
        raise SettingsError(f"operation {name!r} does not take {type(params).__name__}")
    if name == "paste":
        if not clipboard.clips:
            raise SettingsError("nothing to paste: copy or cut a selection first")
        return _paste(document, clipboard, params)
    masks = [] if masks is None else [masks] if isinstance(masks, Mask) else list(masks)
    if not masks:
        return []
    if name in ("copy", "cut"):
        clipboard.clips = copy_selection(document, masks)
        return [_gain(mask, ERASE_DB, "cut") for mask in masks] if name == "cut" else []
    return [_plan_one(document, mask, name, params) for mask in masks]


def _plan_one(document, mask: Mask, name: str, params) -> Plan:
    if name == "gain":
        return _gain(mask, params.gain_db, f"gain {db_label(params.gain_db)}")
    if name == "erase":
        return _gain(mask, ERASE_DB, "erase")
    if name == "heal":
        return _heal(document, mask, params)
    return _fill(document, mask, params)


def apply_plans(
    document, plans: list[Plan], *, label: str, history: History | None = None
) -> Region:
    """Run ``plans`` in order on ``document`` as one undo step of ``history`` (if given); the box
    they changed together (``EMPTY`` if none).

    Each plan's region is recorded on its own, so a step of many small plans far apart (the clicks
    of a whole file) keeps only their tiles. Should a ``compute`` raise, everything already written
    is undone (with a history; without one the plans before it stay).
    """
    channels = tuple(sorted({c for plan in plans for c in plan.region.channels}))
    step = history.begin(channels, label=label) if history is not None else None
    changed = EMPTY
    try:
        for plan in plans:
            magnitude, phase = document.read(plan.region)
            new_magnitude, new_phase = plan.compute(magnitude, phase)
            if step is not None:
                step.record(plan.region)
            document.write(plan.region, new_magnitude, new_phase)
            changed = changed.union(plan.region)
    except BaseException:
        if history is not None:
            history.abort()
        raise
    if history is not None:
        history.commit()
    return changed


def apply_plan(document, plan: Plan, *, history: History | None = None) -> Region:
    """:func:`apply_plans` of one plan."""
    return apply_plans(document, [plan], label=plan.label, history=history)
