"""The brush table: each name maps to its kernel, its parameters and how its dabs combine.

Like napari's mode-to-tool table, this is the one place that knows which brushes exist; the GUI lists
``BRUSHES`` and recorded strokes name them.

Two ways of combining dabs:

- **stamping** brushes (everything but warp) compute from the stroke's starting values and blend by
  the stroke's *coverage*, the maximum weight any of its dabs gave a cell. A -12 dB gain stroke lowers
  what it covers by 12 dB however many dabs overlap there, and the result does not depend on the
  spacing or on how events were merged.
- **dragging** brushes (warp) work on the current values, dab after dab, so content is carried along.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from spectropaint.brushes.kernels.blur import BlurInto, BlurParams, blur
from spectropaint.brushes.kernels.clone import CloneInto, CloneParams, clone
from spectropaint.brushes.kernels.context import Kernel
from spectropaint.brushes.kernels.gain import ERASE_DB, GainParams, gain, gain_factor
from spectropaint.brushes.kernels.pen import PenInto, PenParams, pen
from spectropaint.brushes.kernels.spectral_filter import FilterInto, FilterParams, spectral_filter
from spectropaint.brushes.kernels.warp import WarpParams, WarpPlan, warp, warp_prepare
from spectropaint.brushes.validation import from_mapping
from spectropaint.transforms.errors import SettingsError


@dataclass(frozen=True)
class BrushKind:
    """One brush of the table.

    Attributes
    ----------
    name : str
    kernel : Kernel
    params_type : type
        The frozen dataclass of the kernel's parameters (validated when made).
    keeps_phase : bool
        The kernel changes magnitude only: blending leaves phase bit-identical.
    drags : bool
        Dabs work on the current values (warp) instead of the stroke's starting values.
    reads_source : bool
        The kernel reads a clone source at ``params.offset_frames``, ``params.offset_bins``.
    local : bool
        The kernel's result at a cell depends only on cells within its margin, never on the box
        around it or on which dab painted the cell, so the dabs of one input event are one kernel
        call on their joint box (see :func:`~spectropaint.brushes.dab.apply_dabs`). The pen is
        not (its partial follows each dab's centre: it is given, per cell, the centre of the dab
        that painted the cell last), nor the spectral filter (see ``whole_box``).
    whole_box : bool
        The kernel's result depends on the dab's whole region (the spectral filter filters its 2-D
        spectrum): the dabs of an event share one read, blend and write, but the kernel works per
        dab, on that dab's region sliced from theirs. It reads nothing of its context but
        ``inner``, and takes a leading dimension of dabs (``[K, C, Bm, Tm]``): the regions of one
        size go through it in one call.
    prepare : callable or None
        What a kernel would otherwise compute per dab from the stroke's starting values, computed
        once per event over its region: ``prepare(original, bin_hz, frames, params, *, hop,
        sample_rate) -> dict`` of tensors ``[..., Bm, Tm]`` (``original`` ``[2, C, Bm, Tm + 1]``
        with the frame before the region in front); each dab's kernel gets them sliced to its
        region as ``context.prepared`` (dragging brushes: warp's phase ramp and drift).
    plan : callable or None
        A dragging brush's dabs of one group planned together: ``plan(original, prepared, dabs,
        params, *, width)`` (``original`` ``[2, C, Bm, Tm]`` and ``prepared`` for the group's
        region, ``dabs`` a :class:`~.kernels.context.DragDabs`) computes all that does not read
        the values at once, and its ``dab(index, values)`` gives each dab's result on its window
        from the values the previous ones left (warp: :class:`~.kernels.warp.WarpPlan`). The
        kernel, dab by dab, is the reference it is tested against.
    reads_radius : bool
        The kernel reads the dab's radii in the block's cells (``context.radius``: blur's widths,
        the pen's band profile), so dabs whose radii differ there (on bands spaced unevenly in the
        stroke's plane) are never one kernel call.
    reads_frames : bool
        The kernel reads where its region lies in time (``context.frames``: phase ramps; the
        pen's ``frame_weight``; the clone's source), so two blocks painted together (the NSGT's
        parity pair, :func:`~spectropaint.brushes.dab.apply_dabs`) go through it one at a time.
        The others read neither that nor where it lies in frequency: their contexts' ``frames``,
        ``bins`` and ``bin_hz`` are None (three operations a dab fewer).
    settles_phase : bool
        The stroke's settle imposes the painted phase as well as the magnitude (gain and erase,
        whose phase is the original's and fits); the others' phase is free to settle (see
        :mod:`spectropaint.brushes.settle`).
    scale : callable or None
        ``scale(params) -> float`` where the kernel multiplies every magnitude by one number that
        depends on the parameters alone (gain and erase; such a kernel keeps the phase and reads
        no margin): where the fused kernels run, a group's original magnitudes are then read,
        scaled, blended and written in one launch
        (:meth:`~spectropaint.brushes.history.OpenStep.scale_into`) instead of going through
        the kernel and the blend: bit for bit what the fused blend gives, and torch's blend to
        float rounding.
    blends_into : object or None
        The kernel and the blend in the kernel's own launches, written straight into the
        document, where the fused kernels run (the blur's :class:`~.kernels.blur.BlurInto`, the
        spectral filter's :class:`~.kernels.spectral_filter.FilterInto`, the pen's and the
        clone's :class:`~.kernels.triton_math.KernelInto`): ``takes(device, region, box)`` says
        whether a region and box of that size may go through them, ``apply(values, weight,
        destination, params, context, holders)`` computes the box ``context.inner`` of the
        group's region ``values`` ``[2, C, Bm, Tm]``, blends it with its values there by
        ``weight`` (as :func:`~.blend.blend` does) and writes it into ``destination`` (as
        :meth:`~spectropaint.transforms.document.Document.cells` gives it), and says whether it
        did (not where the kernel does not take that context: the NSGT's pen). ``holders`` says
        which cells it writes: the owner map ``[B, T]`` or None (every cell); a whole-box brush's
        runs once per size of its dabs' boxes (``context.inner``: where such a box lies in its
        dab's region) and writes only the cells each dab holds last (``holders``: each dab's
        place and number, and which dab holds each cell; see
        :func:`~.kernels.filter_fused.filter_into`). Equal to the kernel and the fused blend to
        float rounding. ``reads_kept``: ``apply`` also takes, instead of the region's values, a
        :class:`~.kernels.originals_fused.Kept` (where a region inside the grid lies: the
        stroke's kept tiles and the document), and reads the values there (the pen's, the
        blur's, the filter's, the clone's); ``reflects``: a region past the grid too, each cell
        past it read at its reflection (the blur's).
    defaults : Mapping
        Parameter values this brush starts from when they differ from ``params_type``'s.
    """

    name: str
    kernel: Kernel
    params_type: type
    keeps_phase: bool
    drags: bool = False
    reads_source: bool = False
    local: bool = True
    whole_box: bool = False
    prepare: Callable[..., dict[str, Any]] | None = None
    plan: Callable[..., Any] | None = None
    reads_radius: bool = False
    reads_frames: bool = False
    settles_phase: bool = False
    scale: Callable[[Any], float] | None = None
    blends_into: Any = None
    defaults: Mapping[str, Any] = field(default_factory=dict)

    def params(self, values: Mapping[str, Any] | None = None) -> Any:
        """This brush's parameters: its defaults overridden by ``values`` (validated)."""
        if values is not None and not isinstance(values, Mapping):
            raise SettingsError(f"{self.name} parameters must be an object, not {values!r}")
        return from_mapping(
            self.params_type, {**self.defaults, **(values or {})}, what=f"{self.name} parameter"
        )


BRUSHES: dict[str, BrushKind] = {
    kind.name: kind
    for kind in (
        BrushKind(
            "gain", gain, GainParams, keeps_phase=True, settles_phase=True, scale=gain_factor
        ),
        BrushKind(
            "erase",
            gain,
            GainParams,
            keeps_phase=True,
            settles_phase=True,
            scale=gain_factor,
            defaults={"gain_db": ERASE_DB},
        ),
        BrushKind(
            "blur", blur, BlurParams, keeps_phase=True, reads_radius=True, blends_into=BlurInto
        ),
        BrushKind(
            "filter",
            spectral_filter,
            FilterParams,
            keeps_phase=True,
            local=False,
            whole_box=True,
            blends_into=FilterInto,
        ),
        BrushKind(
            "warp",
            warp,
            WarpParams,
            keeps_phase=False,
            drags=True,
            prepare=warp_prepare,
            plan=WarpPlan,
            reads_frames=True,
        ),
        BrushKind(
            "clone",
            clone,
            CloneParams,
            keeps_phase=False,
            reads_source=True,
            reads_frames=True,
            blends_into=CloneInto,
        ),
        BrushKind(
            "pen",
            pen,
            PenParams,
            keeps_phase=False,
            local=False,
            reads_radius=True,
            reads_frames=True,
            blends_into=PenInto,
        ),
    )
}


def brush_kind(name: str) -> BrushKind:
    """The brush called ``name``; :class:`SettingsError` naming the known ones otherwise."""
    try:
        return BRUSHES[name]
    except (KeyError, TypeError):
        raise SettingsError(f"unknown brush {name!r} (known: {', '.join(BRUSHES)})") from None
