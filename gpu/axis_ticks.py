"""Where the rulers put their ticks and what the labels say: time, frequency (linear, log, mel) and
notes. Plain functions, no Qt: the ruler widgets and the canvas grid only draw what they return.

The rulers and the axes of an exported picture (:mod:`.png_axes`) both take their ticks here.
Time labels use one format along a whole axis: ``'1.25 s'`` when the axis ends before a minute,
else a clock (``'1:30'``, ``'1:02:30'``), with steps that are round in that format (15 s, 30 s,
1 min, 5 min...). Frequency labels are round numbers of Hz placed where the axis has room for
them; minor ticks (no label) subdivide the majors.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from spectropaint.transforms.geometry import octave_c_hz, warp

MIN_LABEL_SPACING_PX = 72
"""Time labels at least this far apart (a clock label is about 40 px wide)."""
MIN_FREQ_SPACING_PX = 30
"""Frequency labels at least this far apart (a line of text and some air)."""
MIN_MINOR_SPACING_PX = 6
TIME_STEPS = (
    *(m * 10.0**e for e in range(-3, 1) for m in (1, 2, 5)),
    10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0, 18000.0, 36000.0,
)  # fmt: skip
"""Major time steps, seconds: 1-2-5 below ten seconds, clock-round above."""
MINOR_PARTS = {1: 5, 2: 4, 5: 5, 15: 3, 30: 3, 60: 4, 120: 4, 300: 5, 600: 5, 900: 3, 1800: 3}
"""Minor subdivisions of a major step, by its leading digits (or whole seconds above ten)."""


@dataclass(frozen=True)
class Tick:
    value: float
    """Seconds or Hz."""
    position: float
    """0..1 along the ruler: left to right for time, bottom to top for frequency."""
    label: str
    """Empty for a minor tick."""

    @property
    def major(self) -> bool:
        return bool(self.label)


def nice_step(span: float, max_ticks: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten that cuts ``span`` into at most ``max_ticks``."""
    raw = span / max(1, max_ticks)
    power = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    for factor in (1, 2, 5, 10):
        if factor * power >= raw * (1 - 1e-12):
            return factor * power
    return 10 * power


def _minor_parts(step: float) -> int:
    if step >= 10:
        return MINOR_PARTS.get(round(step), 4)
    leading = round(step / 10 ** math.floor(math.log10(step) + 1e-9))
    return MINOR_PARTS.get(leading, 5)


def _decimals(step: float) -> int:
    return max(0, -math.floor(math.log10(step) + 1e-9)) if step < 1 else 0


def format_seconds(seconds: float, step: float, *, clock: bool) -> str:
    """``'1.25 s'``, or with ``clock`` ``'2:05'``, ``'2:05.5'``, ``'1:02:05'``, with ``step``'s
    precision."""
    decimals = _decimals(step)
    if not clock:
        return f"{seconds:.{decimals}f} s"
    negative, seconds = seconds < 0, abs(seconds)
    seconds = round(seconds, decimals)
    hours, rest = divmod(seconds, 3600)
    minutes, rest = divmod(rest, 60)
    width = 2 + (decimals + 1 if decimals else 0)
    text = f"{rest:0{width}.{decimals}f}"
    text = f"{int(hours)}:{int(minutes):02d}:{text}" if hours else f"{int(minutes)}:{text}"
    return "-" + text if negative else text


def time_ticks(
    start: float, stop: float, length_px: float, *, spacing_px: float = MIN_LABEL_SPACING_PX
) -> list[Tick]:
    """Major (labelled) and minor ticks of a time axis showing ``[start, stop]`` seconds, the
    labels at least ``spacing_px`` apart."""
    if not stop > start or length_px <= 0:
        return []
    span = stop - start
    wanted = span / max(1.0, length_px / spacing_px)
    step = next((s for s in TIME_STEPS if s >= wanted), None)
    if step is None:
        step = nice_step(span, max(1, int(length_px // spacing_px)))
    clock = stop >= 60
    parts = _minor_parts(step)
    minor = step / parts
    if minor / span * length_px < MIN_MINOR_SPACING_PX:
        parts, minor = 1, step
    ticks = []
    for k in range(math.ceil(start / minor - 1e-9), math.floor(stop / minor + 1e-9) + 1):
        value = k * minor
        major = k % parts == 0
        label = format_seconds(value, step, clock=clock) if major else ""
        ticks.append(Tick(value, (value - start) / span, label))
    return ticks


def plain_number(value: float, decimals: int = 6) -> str:
    """``value`` to ``decimals`` places without trailing zeros: ``'2'``, ``'-1.5'``,
    ``'1705.000125'``. Labels of ticks a step apart differ however far an axis is zoomed in (six
    significant digits, as ``:g`` writes, made ``1705.0001`` and ``1705.0002`` both ``1705``)."""
    text = f"{value:.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def format_hz(hz: float, *, short: bool = False) -> str:
    """``'250 Hz'``, ``'1.5 kHz'`` (``'250'``, ``'1.5k'`` when ``short``), to a millionth of a Hz."""
    if hz >= 1000:
        return plain_number(hz / 1000, 9) + ("k" if short else " kHz")
    return plain_number(hz) + ("" if short else " Hz")


def level_ticks(
    floor_db: float, range_db: float, length_px: float, spacing_px: float
) -> list[Tick]:
    """Labelled ticks at round levels of a colour bar showing ``[floor_db, floor_db + range_db]``
    dB over ``length_px``, at least ``spacing_px`` apart; positions from the bottom."""
    if not range_db > 0 or length_px <= 0:
        return []
    step = nice_step(range_db, length_px / spacing_px)
    first, last = math.ceil(floor_db / step - 1e-9), math.floor((floor_db + range_db) / step + 1e-9)
    return [
        Tick(k * step, (k * step - floor_db) / range_db, plain_number(k * step))
        for k in range(first, last + 1)
    ]


def _round_frequencies(low: float, high: float) -> list[float]:
    """Round frequencies in ``[low, high]`` in the order they deserve a label: 0 Hz, then powers of
    ten, then 5, 2 and 3 times them."""
    top = math.ceil(math.log10(max(high, 1.0)))
    bottom = math.floor(math.log10(max(low, 1.0)))
    out = [0.0] if low <= 0 <= high else []
    for factor in (1, 5, 2, 3):
        for power in range(top, bottom - 1, -1):
            value = factor * 10.0**power
            if low <= value <= high:
                out.append(value)
    return out


def _finer_frequencies(
    low: float, high: float, px: Callable[[float], float], spacing_px: float
) -> list[float]:
    """For an axis zoomed in between the values of :func:`_round_frequencies`: multiples of 100,
    50, 20, 10, 5, 2, 1... Hz (the coarsest first, down to a tenth of the span) where consecutive
    multiples are at least 1.5 times ``spacing_px`` apart at ``px`` (pixels of a
    frequency), so that the labels added keep one step."""
    out = []
    top = math.floor(math.log10(max(low, 1.0)))
    for power in range(top, math.floor(math.log10(high - low)) - 2, -1):
        for factor in (5, 2, 1) if power < top else (1,):
            step = factor * 10.0**power
            first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)
            if last - first > 1000:
                continue
            for k in range(first, last + 1):
                value = round(k * step, max(0, -power))
                above = px(value + step) - px(value)
                below = px(value) - px(value - step) if value > step else math.inf
                if min(above, below) >= 1.5 * spacing_px:
                    out.append(value)
    return out


def freq_ticks(
    low: float,
    high: float,
    scale: str,
    length_px: float,
    *,
    spacing_px: float = MIN_FREQ_SPACING_PX,
) -> list[Tick]:
    """Ticks of a frequency axis ``[low, high]`` Hz drawn linear in ``warp(hz, scale)``.

    A linear axis gets evenly spaced round values; log and mel axes get round frequencies where they
    are at least ``spacing_px`` apart (powers of ten first), and unlabelled minor ticks
    at every 1..9 times a power of ten that has room.
    """
    if not high > low or length_px <= 0:
        return []
    if scale == "log":
        if high <= 0:
            return []
        low = max(low, 1e-3)
    w_low, w_high = float(warp(low, scale)), float(warp(high, scale))

    def position(value: float) -> float:
        return (float(warp(value, scale)) - w_low) / (w_high - w_low)

    if scale == "linear":
        step = nice_step(high - low, length_px / spacing_px)
        parts = 5 if round(step / 10 ** math.floor(math.log10(step))) != 2 else 4
        minor = step / parts
        if minor / (high - low) * length_px < MIN_MINOR_SPACING_PX:
            parts, minor = 1, step
        ticks = []
        for k in range(math.ceil(low / minor - 1e-9), math.floor(high / minor + 1e-9) + 1):
            value = k * minor
            label = format_hz(value) if k % parts == 0 else ""
            ticks.append(Tick(value, position(value), label))
        return ticks
    majors: dict[float, float] = {}
    placed: list[float] = []
    finer = _finer_frequencies(low, high, lambda value: position(value) * length_px, spacing_px)
    for value in _round_frequencies(low, high) + finer:
        if value in majors:
            continue
        px = position(value) * length_px
        if all(abs(px - other) >= spacing_px for other in placed):
            placed.append(px)
            majors[value] = px
    minors = []
    last_px = -math.inf
    for power in range(math.floor(math.log10(max(low, 1.0))), math.ceil(math.log10(high)) + 1):
        for factor in range(1, 10):
            value = factor * 10.0**power
            if not low <= value <= high or value in majors:
                continue
            px = position(value) * length_px
            if px - last_px >= MIN_MINOR_SPACING_PX:
                minors.append(value)
                last_px = px
    ticks = [Tick(v, position(v), format_hz(v)) for v in majors]
    ticks += [Tick(v, position(v), "") for v in minors]
    return sorted(ticks, key=lambda tick: tick.value)


def note_ticks(low: float, high: float, length_px: float) -> list[Tick]:
    """Every C (C0 = 16.35 Hz) within ``[low, high]`` Hz on a log axis, labelled ``C4``."""
    if not high > low > 0 or length_px <= 0:
        return []
    w_low, w_high = math.log(low), math.log(high)
    ticks = []
    for octave in range(0, 11):
        hz = octave_c_hz(octave)
        if low <= hz <= high:
            ticks.append(Tick(hz, (math.log(hz) - w_low) / (w_high - w_low), f"C{octave}"))
    return ticks


def label_left(tick_px: float, text_px: float, length_px: float, gap: float = 3.0) -> float:
    """Where a label beside a tick at ``tick_px`` starts: after it, or before it when it would run
    past the axis's end (so the last label is not cut off)."""
    if tick_px + gap + text_px <= length_px:
        return tick_px + gap
    return max(0.0, tick_px - gap - text_px)
