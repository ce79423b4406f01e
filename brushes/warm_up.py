"""Loading the brushes' GPU kernels before the first stroke needs them.

CUDA loads a kernel's code at its first launch. On the H200 each new kernel cost about 10 ms, and a
gain stroke's first move meets a dozen of them: it took 110 ms, against 2 ms for the next move, and
the pointer's moves queued behind it; a blur dab meeting an FFT length for the first time waited
30 to 170 ms (:data:`~spectropaint.brushes.kernels.fft.GPU_LENGTHS`). :func:`warm_up_later`
paints a short stroke of every brush on a scratch document and runs the blur's FFTs of every length
it uses, on a thread of its own, once per device; the window starts it when a document's
first frame shows (not sooner: kernel loading holds the device, and the first picture waits). The
Triton kernels (warp's groups and ramps, the blend, the clone's, the pen's and the blur's) compile
at their first launch the same way, a second or so each unless Triton's cache on disk holds them.
It also measures the document's full scale, which the first stroke otherwise waits for.

On the CPU only the code Numba compiles needs this: it compiles each function at its first use
(on a 2-core machine 2.6 s for the host's mask loop, :mod:`.mask_compiled`, 0.6 s for the blend,
:mod:`.blend_compiled`, 1.9 s for the clone's kernel, 5 s for warp's; a fraction of that when its
cache on disk is loaded), so a clone stroke, which meets the first three, then a warp stroke are
painted on the scratch document instead, on the same thread. Numba compiles one function at a
time: a stroke that needs one while the thread compiles another waits for it, so the ones every
brush needs come first: the host's planning loops (:mod:`.plan_compiled`, some 2 s on a 2-core
machine without the cache), on the CPU and on a GPU alike.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import replace

import numpy as np
import torch

from spectropaint.brushes import mask_compiled, plan_compiled
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.kernels import compiled_math
from spectropaint.brushes.kernels.fft import warm_lengths
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms import joined_at_exit
from spectropaint.transforms.document import Document

log = logging.getLogger(__name__)

SCRATCH_SECONDS = 0.5
SCRATCH_RATE = 44100
PARAMS = {"clone": {"offset_frames": -8, "offset_bins": 0}}
"""Parameters a brush needs besides its defaults to paint on the scratch document."""
COMPILED = ("clone", "warp")
"""The brushes whose kernels Numba compiles on the CPU."""
RADII = {"warp": (8.0, 20.0, 40.0), "gain": (8.0, 16.0)}
"""The radii (frames and bins) a brush is painted at where its kernel is compiled apart for
windows of each size (:data:`~.kernels.warp_fused.PROGRAMS`), and where a wider brush takes
another launch: gain's strokes of dabs of 16 and more have their coverage raised by the launch of
:mod:`.kernels.coverage_fused` (:data:`~.kernels.coverage_fused.FEWEST_CELLS`), which every
stamping brush's wide strokes share; the others at the default settings'."""

_warm: set[str] = set()
_lock = threading.Lock()


def warm_up(
    device: torch.device | str, *, every_device: bool = False, brushes=tuple(BRUSHES)
) -> list[str]:
    """Paint a two-move stroke of each of ``brushes`` (every brush unless given; at each of its
    :data:`RADII`, where it has them) on a scratch stereo document on ``device`` (once per
    device; only CUDA loads kernels lazily, unless ``every_device``); the brushes painted. A brush whose kernel blends into the document itself
    (:attr:`~.registry.BrushKind.blends_into`) is painted a second time without it.

    A brush that fails is logged and skipped: warming up never stops the app. As the
    interpreter exits it stops before its next brush (:func:`.joined_at_exit.exiting`).
    """
    device = torch.device(device)
    with _lock:
        if (device.type != "cuda" and not every_device) or str(device) in _warm:
            return []
        _warm.add(str(device))
    noise = np.random.default_rng(0).standard_normal((2, int(SCRATCH_SECONDS * SCRATCH_RATE)))
    scratch = Document.from_samples(0.1 * noise, SCRATCH_RATE, device=device)
    middle = SCRATCH_SECONDS / 2
    painted = []
    for name in brushes:
        if joined_at_exit.exiting():
            return painted
        kind = BRUSHES[name]
        # a brush whose kernel blends into the document itself is painted blended apart too: the
        # NSGT's paired blocks take that path (the fused blend's kernel, the filter's stacked one)
        kinds = [kind] if kind.blends_into is None else [kind, replace(kind, blends_into=None)]
        sizes = [BrushSettings(radius_frames=radius, radius_bins=radius)
                 for radius in RADII[name]] if name in RADII else [BrushSettings()]  # fmt: skip
        try:
            for each in kinds:
                for settings in sizes:
                    stroke = StrokeSession(scratch, each, settings, params=PARAMS.get(name))
                    stroke.add_events([InputEvent(0.0, middle, 1000.0)])
                    stroke.add_events([InputEvent(0.016, middle + 0.02, 1050.0)])
                    stroke.abort()
        except Exception:
            log.exception("warming up the %s brush on %s failed", name, device)
            continue
        painted.append(name)
    warm_lengths(device)
    return painted


def warm_up_later(document) -> threading.Thread:
    """The host's planning and weights loops compiled (:func:`.plan_compiled.compile_loops`,
    :func:`.mask_compiled.compile_loops`), then
    :func:`warm_up` for ``document``'s device and its full scale measured, on a daemon thread; on
    the CPU the compiled kernels alone (none where they are turned off). The interpreter's exit
    waits for the thread, which ends at its next step then (:mod:`.joined_at_exit`)."""
    device = document.device

    def work() -> None:
        try:
            for step in (plan_compiled.compile_loops, mask_compiled.compile_loops, brushes):
                if joined_at_exit.exiting():
                    return
                step()
        except Exception:
            log.exception("warming up the brushes failed")

    def brushes() -> None:
        if device.type == "cuda":
            document.full_scale  # noqa: B018 - measured once, then kept by the document
            warm_up(device)
        elif compiled_math.wanted(device):
            warm_up(device, every_device=True, brushes=COMPILED)

    return joined_at_exit.start(work, name="brush warm-up")
