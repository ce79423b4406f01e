"""The brush's footprint as it lands on the document, and its outline on the current axes.

A dab is an ellipse in cells: ``radius_frames`` along time and ``radius_bins`` along frequency,
centred on a fractional frame and bin, and only the bins that exist take it. Drawn on a warped
frequency axis (log, mel) that ellipse is not an ellipse on screen: low bins spread over many rows
on a log axis and crowd together near the top. :func:`outline_polygon` follows the ellipse in cells,
cuts it where the bins end, and maps every point through the block's frequencies and the view's
warp to canvas pixels, so what is outlined is what the brush will reach.

Bins map to Hz through ``band_hz`` (the centre frequency of each bin) when given, by linear
interpolation between centres: evenly spaced STFT bins and uneven constant-Q bands alike.
No Qt here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spectropaint.gpu.view_mapping import ViewMapping
from spectropaint.transforms.geometry import bins_to_hz

OUTLINE_POINTS = 96
"""Points along the ellipse (before clipping): smooth at any size the canvas shows."""
OUTLINE_STEP_PX = 2.0
"""An outline that is not cut takes every k-th of its points (:data:`THINNINGS`) where the
points left are still at most this many pixels apart on average. Qt stroked a small outline's 96
points in 166 us (its halo and line, antialiased), 12 of them in 15 us; on a ten-minute file seen
whole the default brush's outline is a fraction of a pixel wide and 11 pixels tall."""
THINNINGS = (8, 6, 4, 3, 2)
"""The steps an outline may be thinned by: each divides :data:`OUTLINE_POINTS` into a multiple of
four points, so the ellipse's leftmost, rightmost, top and bottom points stay."""


@dataclass(frozen=True)
class Footprint:
    """Where a dab lands: its centre in fractional frames and bins (cell centres on integers), its
    radii in frames and bins, and the channel lane it is drawn in (None: every lane)."""

    frame: float
    bin: float
    radius_frames: float
    radius_bins: float
    channel: int | None = None


def _clip(points: np.ndarray, low: float, high: float) -> np.ndarray:
    """The closed polygon ``points [K, 2]`` (frame, bin) cut to ``low <= bin <= high``."""
    for bound, keep_above in ((low, True), (high, False)):
        if len(points) == 0:
            break
        inside = points[:, 1] >= bound if keep_above else points[:, 1] <= bound
        if inside.all():
            continue
        out = []
        for k in range(len(points)):
            a, b = points[k - 1], points[k]
            a_in, b_in = inside[k - 1], inside[k]
            if a_in != b_in:  # the edge crosses the bound: keep the crossing
                t = (bound - a[1]) / (b[1] - a[1])
                out.append(a + t * (b - a))
            if b_in:
                out.append(b)
        points = np.array(out, dtype=np.float64).reshape(-1, 2)
    return points


def outline_polygon(
    footprint: Footprint,
    mapping: ViewMapping,
    *,
    band_hz: np.ndarray | None = None,
    points: int = OUTLINE_POINTS,
    step_px: float | None = OUTLINE_STEP_PX,
) -> np.ndarray:
    """The footprint's outline in canvas pixels: a closed polygon ``[K, 2]`` of ``(x, y)``.

    Parameters
    ----------
    footprint : Footprint
    mapping : ViewMapping
        The view on the canvas (its axes and warp).
    band_hz : np.ndarray [shape=(n_bins,)], optional
        Centre frequency of each bin, Hz; by default the evenly spaced bins of ``mapping.geometry``.
    points : int
        Points along the whole ellipse (before thinning).
    step_px : float or None
        Thin an outline that is not cut to every k-th point where those are at most this far
        apart on average (:data:`THINNINGS`); None keeps every point.

    Returns
    -------
    np.ndarray [shape=(K, 2)]
        Empty when no bin lies under the footprint. On a log axis the part below the visible
        range is cut just under the canvas's bottom edge (0 Hz has no logarithm).
    """
    geometry = mapping.geometry
    if band_hz is None:
        band_hz = geometry.first_hz + geometry.step_hz * np.arange(geometry.n_bins)
    angle = np.linspace(0.0, 2 * np.pi, points, endpoint=False)
    cells = np.stack(
        (
            footprint.frame + footprint.radius_frames * np.cos(angle),
            footprint.bin + footprint.radius_bins * np.sin(angle),
        ),
        axis=1,
    )
    low_bin, high_bin = -0.5, geometry.n_bins - 0.5
    if mapping.view.freq_scale == "log":
        _, _, low_hz, _ = mapping.visible
        below_view = 0.5 * low_hz  # below the bottom edge, and positive
        low_bin = max(low_bin, float(np.interp(below_view, band_hz, np.arange(len(band_hz)))))
    clipped = _clip(cells, low_bin, high_bin)
    if len(clipped) == 0:
        return np.zeros((0, 2))
    hz = bins_to_hz(clipped[:, 1], band_hz=band_hz)
    outline = np.stack((mapping.x_of_frame(clipped[:, 0]), mapping.y_of_hz(hz)), axis=1)
    if step_px is None or clipped is not cells:
        return outline
    perimeter = float(np.hypot(*(np.roll(outline, -1, axis=0) - outline).T).sum())
    for every in THINNINGS:
        if (
            points % every == 0
            and (points // every) % 4 == 0
            and every * perimeter <= step_px * points
        ):
            return outline[::every]
    return outline
