"""Warp's fused kernels, a group's dabs in one call: on the GPU in one Triton launch
(:mod:`spectropaint.brushes.kernels.warp_fused`), on the CPU compiled by Numba
(:mod:`spectropaint.brushes.kernels.warp_compiled`, which also plans the dabs); each against the
torch path dab by dab (:func:`spectropaint.brushes.dab.drag_windows`) on the same plan and values,
group after group of real strokes in each phase mode.

On a machine without CUDA the Triton kernel runs through Triton's interpreter on CPU tensors (the
same program, each operation done by numpy); with CUDA, compiled, on the GPU.
"""

import dataclasses
import functools
import os

import numpy as np
import pytest
import torch
from brush_fixtures import NoCompiler, gathered, triton_kernel_on

if not torch.cuda.is_available():  # before Triton is imported: its interpreter, on CPU tensors
    os.environ.setdefault("TRITON_INTERPRET", "1")

from spectropaint.brushes import dab, mask_compiled
from spectropaint.brushes.engine import StrokeSession
from spectropaint.brushes.history import History, OpenStep
from spectropaint.brushes.kernels import triton_math, warp_compiled, warp_fused
from spectropaint.brushes.kernels.originals_fused import Kept
from spectropaint.brushes.kernels.warp import WarpParams, WarpPlan, warp_prepare
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.document import Document
from spectropaint.transforms.stft import STFTSettings

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
RATE = 22050


@pytest.fixture
def fused(monkeypatch):
    """The Triton kernel on for :data:`DEVICE` (interpreted on the CPU, where the compiled CPU
    kernel is then off), compiled afresh."""
    monkeypatch.delenv(warp_fused.FUSED_ENV, raising=False)
    with triton_kernel_on(monkeypatch, warp_fused, torch.device(DEVICE)):
        if DEVICE == "cpu":
            monkeypatch.setattr(warp_compiled, "available", lambda device: False)
        yield


@pytest.fixture
def compiled(monkeypatch):
    """The CPU's compiled kernel on (its documents on the CPU)."""
    monkeypatch.delenv(warp_compiled.FUSED_ENV, raising=False)
    if not warp_compiled.available(torch.device("cpu")):
        pytest.fail("Numba is a dependency (pyproject.toml): the compiled kernel must be there")


def tonal_document(device: str = DEVICE, seconds: float = 2.0) -> Document:
    """Two seconds (or ``seconds``) of steady tones (which auto phase carries on) in a little
    noise, stereo."""
    rng = np.random.default_rng(4)
    t = np.arange(int(seconds * RATE)) / RATE
    tones = sum(0.05 * np.sin(2 * np.pi * f * t) for f in (220.0, 440.0, 1230.0, 3000.0))
    samples = np.stack([tones + 0.01 * rng.standard_normal(len(t)) for _ in range(2)])
    return Document.from_samples(
        samples, RATE, settings=STFTSettings(n_fft=512, hop=128), device=device
    )


def events(radius: float, count: int = 8, frame: float = 40.0, band: float = 60.0):
    """A 60 Hz drag of about a radius per event (several dabs each) from ``frame`` and ``band``,
    bending in frequency."""
    return [
        InputEvent(i / 60, frame + 0.9 * radius * i, band + 12.0 * np.sin(i / 2), 0.6 + i / 30)
        for i in range(count)
    ]


def unpacked(windows, amount: float, region_width: int) -> dab.DragWindows:
    """The :class:`~spectropaint.brushes.dab.DragWindows` packed into ``windows`` (a
    :class:`~.warp_fused.Packed`; anything else is returned as it is) for a region
    ``region_width`` columns wide: the steps as the shifts over ``amount``, the masks computed on
    the host from the distances packed (as the launch computes them)."""
    if not isinstance(windows, warp_fused.Packed):
        return windows
    n_dabs, height, width = windows.shape
    floats = [(n_dabs, 2), (n_dabs, 2), (n_dabs, width), (n_dabs, height), (n_dabs, width),
              (n_dabs, height), (n_dabs,)]  # fmt: skip
    integers = [(2, n_dabs), (2, n_dabs, windows.columns), (2, n_dabs, windows.rows),
                (n_dabs, height), (n_dabs, width), (n_dabs, height), (n_dabs, width)]  # fmt: skip
    *parts, rest = np.split(windows.data, np.cumsum([np.prod(s) for s in floats + integers]))
    assert rest.size == 0  # (every value packed is read)
    shift, high, dest_columns, dest_rows, u, v, peak = (
        part.reshape(shape) for part, shape in zip(parts, floats, strict=False)
    )
    corners, column_maps, row_maps, region_rows, region_columns, in_rows, in_columns = (
        part.view(np.int32).reshape(shape)
        for part, shape in zip(parts[len(floats) :], integers, strict=True)
    )
    _, masks = mask_compiled.weights(u, v, region_columns, region_rows, peak,
                                     hardness=windows.hardness, shape=None, each=True)  # fmt: skip
    return dab.DragWindows(
        masks=masks, corners=corners, step=shift / amount, dest_columns=dest_columns,
        dest_rows=dest_rows, high=high, column_maps=column_maps, row_maps=row_maps,
        region_rows=region_rows, region_columns=region_columns, in_rows=in_rows != 0,
        in_columns=in_columns != 0, region_width=region_width,
    )  # fmt: skip


def torch_prepared(original, prepared, params: WarpParams) -> dict:
    """:func:`.warp.warp_prepare`'s tensors for a group: as given (the compiled path's), or, for
    the fused warp (which computes them in its launch from where the region lies,
    :class:`~.warp_fused.Ramps`), computed by torch's path from the region's starting values
    with the frame before and its reflected bands and frames."""
    if not isinstance(prepared, warp_fused.Ramps):
        return prepared
    kept = original if isinstance(original, Kept) else Kept.of(original[0], original[1])
    region, (n_bins, n_frames) = prepared.region, prepared.grid
    device = prepared.band_hz.device
    rows = dab.reflect_index(torch.arange(region.bin0, region.bin1, device=device), n_bins)
    frames = dab.reflect_index(torch.arange(region.frame0, region.frame1, device=device), n_frames)
    return warp_prepare(gathered(kept.moved(0, -1)), prepared.band_hz[rows], frames, params,
                        hop=prepared.hop, sample_rate=prepared.sample_rate)  # fmt: skip


def complex_values(values: torch.Tensor) -> torch.Tensor:
    return torch.polar(values[0].double(), values[1].double())


def compare(current, reference, masks, corners) -> tuple[float, float, float, bool]:
    """A group's result against the torch path's: the largest and the RMS complex error and the
    largest magnitude error, each of the window's peak, and whether a cell outside every dab's
    mask changed."""
    peak = float(reference[0].abs().max())
    errors = (complex_values(current) - complex_values(reference)).abs()
    magnitude_error = (current[0] - reference[0]).abs().max()
    changed = (reference != current).any(dim=0)
    written = torch.zeros_like(changed)
    height, width = masks.shape[1:]
    for k, (row, column) in enumerate(zip(*corners, strict=True)):
        window = written[:, row : row + height, column : column + width]
        window |= (masks[k] > 0)[None]
    rms = errors[written].pow(2).mean().sqrt()
    return (float(errors.max()) / peak, float(rms) / peak, float(magnitude_error) / peak,
            bool((changed & ~written).any()))  # fmt: skip


def paint_and_compare(phase, radius, document, compared) -> None:
    """A stroke in ``phase`` mode at ``radius``, its groups compared as they are painted (into
    ``compared``); the thresholds every group meets."""
    before = document.blocks[0].magnitude.clone()
    settings = BrushSettings(radius_frames=radius, radius_bins=radius, hardness=0.5)
    params = {"amount": 1.0, "phase": phase}
    stroke = StrokeSession(document, "warp", settings, params=params, history=History(document))
    for event in events(radius):
        stroke.add_events([event])
    stroke.end()
    assert len(compared) >= 3, "the stroke planned too few groups to compare"
    assert not torch.equal(document.blocks[0].magnitude, before)
    largest, rms, magnitude, outside = (max(values) for values in zip(*compared, strict=True))
    assert largest < 1e-4
    assert rms < 3e-6
    assert magnitude < 1e-5
    assert not outside


@pytest.mark.parametrize(
    ("kernel", "phase", "radius", "masks"),
    [(kernel, phase, radius, "host") for kernel in ("fused", "compiled")
     for phase in ("auto", "continue", "shift") for radius in (3, 6)]
    + [("compiled", "auto", 6, "device"), ("compiled", "shift", 3, "device")],
)  # fmt: skip
def test_each_group_equals_the_torch_path(request, monkeypatch, kernel, phase, radius, masks):
    """Every group of a stroke (a dab alone too), planned and applied by the kernel, gives what
    torch's plan gives dab by dab on the same windows and values: within 1e-4 of the window's
    peak in complex value (3e-6 RMS), the magnitude within 1e-5; every cell no dab touched
    bit-identical. The torch result is kept, so each group starts from the same values both
    ways. The fused warp computes each cell's weight in its launch, the torch path reads the
    host's: a cell written where the host's weight is 0 fails the last check. The compiled
    kernel's groups too whose masks are made by torch (a GPU's large groups)."""
    request.getfixturevalue(kernel)
    module = warp_fused if kernel == "fused" else warp_compiled
    compared, sizes, copies, kernel_apply = [], [], [], module.apply
    if masks == "device":
        monkeypatch.setattr(dab, "_weights_on_host", lambda *arguments: False)
    on_device = []

    def both(held, given, original, prepared, params):
        # held: a copy [2, C, R, S] of the region, or the document's cells (the fused warp once
        # it has run), changed in place; given: the windows, packed for the fused warp
        windows = unpacked(given, params.amount, original.shape[-1])
        sizes.append(len(windows.masks))
        on_device.append(isinstance(windows.masks, torch.Tensor))
        copies.append(isinstance(held, torch.Tensor))
        reference = torch.stack((held[0], held[1]))
        dab.drag_planned(WarpPlan, reference, windows, gathered(original),
                         torch_prepared(original, prepared, params), params)  # fmt: skip
        kernel_apply(held, given, original, prepared, params)
        masks = torch.as_tensor(windows.masks, device=reference.device)  # (host arrays, or not)
        compared.append(compare(torch.stack((held[0], held[1])), reference, masks, windows.corners))
        held[0].copy_(reference[0])
        held[1].copy_(reference[1])

    monkeypatch.setattr(module, "apply", both)
    paint_and_compare(phase, radius, tonal_document(DEVICE if kernel == "fused" else "cpu"),
                      compared)  # fmt: skip
    assert 1 in sizes and max(sizes) > 1  # a dab alone and planned groups
    assert on_device == [masks == "device"] * len(sizes)
    # the fused warp's first group on a copy; once it has run, the document's cells in place
    assert copies == (
        [True] + [False] * (len(copies) - 1) if kernel == "fused" else [True] * len(copies)
    )


@pytest.mark.parametrize("radius", [3, 6])
def test_a_group_planned_in_one_compiled_call_is_packed_as_the_loops_give_it(
    fused, monkeypatch, radius
):
    """Each group of a fused stroke is planned and packed in one compiled call
    (:func:`~spectropaint.brushes.drag_compiled.packed_windows`): its windows' maps, places and
    shifts equal, bit for bit, those that the distances', own cells' and windows' loops give one
    by one (:func:`~spectropaint.brushes.dab._drag_windows`), and the weights computed from the
    distances it packs equal the host's (:func:`~spectropaint.brushes.mask_compiled.weights`)."""
    expected, found = [], []
    real_part, real_apply = dab._drag_part, warp_fused.apply

    def part(state, stroke, group, box, inside, current, original, prepared, whole):
        width = original.shape[-1]
        windows = dab._drag_windows(state, stroke, group, box, inside, width, True)
        expected.append((windows, group.params(state.params).amount, width))
        real_part(state, stroke, group, box, inside, current, original, prepared, whole)

    monkeypatch.setattr(dab, "_drag_part", part)
    monkeypatch.setattr(warp_fused, "apply", lambda held, packed, *rest: found.append(packed)
                        or real_apply(held, packed, *rest))  # fmt: skip
    document = tonal_document()
    settings = BrushSettings(radius_frames=radius, radius_bins=radius, hardness=0.5)
    stroke = StrokeSession(document, "warp", settings, params={"amount": 0.7, "phase": "auto"},
                           history=History(document))  # fmt: skip
    for event in events(radius):
        stroke.add_events([event])
    stroke.end()
    assert len(found) == len(expected) >= 4 and max(p.shape[0] for p in found) > 1
    for packed, (want, amount, width) in zip(found, expected, strict=True):
        assert packed.data.dtype == np.float32 and packed.hardness == 0.5
        got = unpacked(packed, amount, width)
        assert packed.shape == want.masks.shape
        shift = packed.data[: 2 * packed.shape[0]].reshape(-1, 2)
        assert np.array_equal(shift, (amount * want.step).astype(np.float32))
        for field in dataclasses.fields(dab.DragWindows):
            if field.name != "step":
                assert np.array_equal(getattr(got, field.name), getattr(want, field.name)), field
        assert got.masks.dtype == np.float32 and got.masks.any()


@pytest.mark.parametrize("kernel", ["fused", "compiled"])
def test_a_fused_stroke_changes_only_its_boxes_and_undoes_exactly(request, kernel):
    """Painted through either kernel, a stroke moves content inside the boxes its events
    reported, leaves every other cell bit-identical, and its undo restores the document
    exactly."""
    request.getfixturevalue(kernel)
    document = tonal_document(DEVICE if kernel == "fused" else "cpu")
    block = document.blocks[0]
    before = torch.stack((block.magnitude, block.phase)).clone()
    history = History(document)
    settings = BrushSettings(radius_frames=5, radius_bins=5, hardness=0.5)
    stroke = StrokeSession(document, "warp", settings, params={"amount": 1.0}, history=history)
    inside = torch.zeros(before.shape[-2:], dtype=torch.bool, device=before.device)
    for event in events(5):
        box = stroke.add_events([event])
        if not box.empty:
            inside[box.bin0 : box.bin1, box.frame0 : box.frame1] = True
    stroke.end()
    after = torch.stack((block.magnitude, block.phase))
    moved = (after != before).any(dim=0).any(dim=0)
    assert int(moved.sum()) > 100
    assert not bool((moved & ~inside).any())
    energy = (complex_values(after) - complex_values(before)).abs().pow(2)
    assert float(energy[..., inside].sum()) > 1e3 * float(energy[..., ~inside].sum() + 1e-30)
    history.undo()
    assert torch.equal(torch.stack((block.magnitude, block.phase)), before)


def warped(phase: str) -> Document:
    """A tonal document after a warp stroke of radius 6 in ``phase`` mode."""
    document = tonal_document()
    settings = BrushSettings(radius_frames=6, radius_bins=6, hardness=0.5)
    params = {"amount": 1.0, "phase": phase}
    stroke = StrokeSession(document, "warp", settings, params=params, history=History(document))
    for event in events(6):
        stroke.add_events([event])
    stroke.end()
    return document


@pytest.mark.parametrize("phase", ["auto", "shift"])
def test_groups_changed_in_place_equal_groups_changed_on_a_copy(fused, monkeypatch, phase):
    """Once the fused warp has run, a group changes the document's cells in place instead of a
    copy of its region that is then written back: the same stroke both ways gives the same
    document bit for bit, and marks the same frames edited."""
    results = []
    for in_place in (False, True):
        monkeypatch.setattr(warp_fused, "in_place", lambda in_place=in_place: in_place)
        block = warped(phase).blocks[0]
        results.append((block.magnitude.clone(), block.phase.clone(), block.edited_frames.copy()))
    (magnitude, phase_, edited), (in_place_magnitude, in_place_phase, in_place_edited) = results
    assert edited.sum() > 20
    assert torch.equal(magnitude, in_place_magnitude) and torch.equal(phase_, in_place_phase)
    assert np.array_equal(edited, in_place_edited)


@pytest.mark.parametrize("phase", ["auto", "continue"])
def test_groups_reading_their_starting_values_where_they_lie_equal_groups_reading_a_copy(
    fused, monkeypatch, phase
):
    """Once the fused warp changes the document in place, a group's two launches read its
    region's starting values from the stroke's kept tiles (those this event kept too: the launch
    changes the document's cells under them) and elsewhere the document instead of a gathered
    copy: the same stroke both ways gives the same document bit for bit."""
    given, results = [], []
    real = warp_fused.apply
    monkeypatch.setattr(
        warp_fused, "apply",
        lambda held, windows, original, *rest: given.append(original)
        or real(held, windows, original, *rest),
    )  # fmt: skip
    for where_they_lie in (True, False):
        if not where_they_lie:
            monkeypatch.setattr(OpenStep, "kept", lambda *args: None)
        given.clear()
        block = warped(phase).blocks[0]
        results.append((block.magnitude.clone(), block.phase.clone()))
        kept = [original for original in given if not isinstance(original, torch.Tensor)]
        # the first group (before the kernel has run) reads a copy
        assert len(kept) == (len(given) - 1 if where_they_lie else 0) and len(given) > 3
    (magnitude, phase_), (copied_magnitude, copied_phase) = results
    assert torch.equal(magnitude, copied_magnitude) and torch.equal(phase_, copied_phase)


def test_the_kernel_is_off_where_asked_or_off_the_gpu(monkeypatch):
    pytest.importorskip("triton", reason="Triton is in the test extras (pyproject.toml)")
    monkeypatch.setattr(triton_math, "INTERPRETED", False)
    assert not warp_fused.available(torch.device("cpu"))
    monkeypatch.setenv(warp_fused.FUSED_ENV, "0")
    assert not warp_fused.available(torch.device("cuda"))
    monkeypatch.delenv(warp_fused.FUSED_ENV)
    assert warp_fused.available(torch.device("cuda"))


def test_the_compiled_kernel_is_for_the_cpu_and_off_where_asked(compiled, monkeypatch):
    assert warp_compiled.available(torch.device("cpu"))
    assert not warp_compiled.available(torch.device("cuda"))
    monkeypatch.setenv(warp_compiled.FUSED_ENV, "0")
    assert not warp_compiled.available(torch.device("cpu"))


@pytest.mark.parametrize("phase", ["auto", "continue", "shift"])
def test_the_compiled_preparation_is_torch_s_bit_for_bit(compiled, phase):
    """The ramps, drift and advances the compiled path prepares a region with are
    :func:`~spectropaint.brushes.kernels.warp.warp_prepare`'s, bit for bit, on a region of real
    phases far into a file (large frame numbers)."""
    block = tonal_document("cpu").blocks[0]
    original = torch.stack((block.magnitude, block.phase))[:, :, 20:60, 100:171]
    bin_hz = torch.linspace(0.0, RATE / 2, block.n_bins, dtype=torch.float64)[20:60]
    frames = torch.arange(40_000, 40_070, dtype=torch.float64)
    params = WarpParams(phase=phase)
    expected = warp_prepare(original, bin_hz, frames, params, hop=128, sample_rate=RATE)
    found = warp_compiled.prepare(original, bin_hz, frames, params, hop=128, sample_rate=RATE)
    assert sorted(found) == sorted(expected)
    for name, tensor in expected.items():
        assert found[name].shape == tensor.shape and found[name].dtype == tensor.dtype
        assert torch.equal(found[name], tensor), name


@pytest.mark.parametrize(
    ("seconds", "frame", "band"),
    [(2.0, 40.0, 60.0), (2.0, 1.0, 1.0), (2.0, 336.0, 250.0), (120.0, 20_600.0, 120.0)],
    ids=["inside", "past-the-low-edges", "past-the-high-edges", "far-into-a-file"],
)
def test_the_fused_ramps_equal_torch_s(fused, monkeypatch, seconds, frame, band):
    """The ramps, advances and drift the fused warp computes of each group's region in its
    launch (from where the region lies, and where its starting values lie) against
    :func:`.warp.warp_prepare` given the region's values and its reflected bands and frames:
    ramps and advances bit for bit, the drift too but where it lies a half turn away (wrapped
    the other way round, a whole turn apart). Strokes in a 2-second document (345 frames, 257
    bands) and far into a 2-minute one, where a frame's whole turns need float64."""
    launches, groups = [], []
    real_launch, real_apply = triton_math.launch, warp_fused.apply

    def spy(kernel, grid, *args, **options):
        real_launch(kernel, grid, *args, **options)
        if kernel is warp_fused._kernel():
            launches.append({**dict(zip(kernel.arg_names, args, strict=False)), **options})

    monkeypatch.setattr(triton_math, "launch", spy)
    monkeypatch.setattr(warp_fused, "apply", lambda held, windows, original, ramps, params:
                        groups.append((original, ramps, params))
                        or real_apply(held, windows, original, ramps, params))  # fmt: skip
    document = tonal_document(seconds=seconds)
    settings = BrushSettings(radius_frames=4, radius_bins=4, hardness=0.5)
    stroke = StrokeSession(document, "warp", settings, params={"amount": 1.0, "phase": "auto"},
                           history=History(document))  # fmt: skip
    for event in events(4, count=4, frame=frame, band=band):
        stroke.add_events([event])
    stroke.end()
    assert len(launches) == len(groups) >= 3
    for found, (original, ramps, params) in zip(launches, groups, strict=True):
        want = torch_prepared(original, ramps, params)
        channels, (n_rows, width) = found["C"], want["ramp"].shape
        window = found["H"] * found["W"]
        computed = found["scratch"][6 * channels * window :]
        plane = channels * n_rows * width
        ramp, drift = computed[: 2 * plane].view(2, channels, n_rows, width)
        omega = computed[2 * plane : 2 * plane + channels * n_rows].view(channels, n_rows)
        assert all(torch.equal(ramp[c], want["ramp"]) for c in range(channels))
        assert all(torch.equal(omega[c], want["omega"][:, 0]) for c in range(channels))
        apart = (drift - want["drift"]).abs()
        half_turns = (want["drift"].abs() - np.pi).abs() < 1e-5
        assert torch.equal(apart == 0, ~half_turns | (apart == 0))
        turned = apart[half_turns]
        assert ((turned == 0) | ((turned - 2 * np.pi).abs() < 1e-5)).all()
    regions = [ramps.region for _, ramps, _ in groups]
    n_bins, n_frames = groups[0][1].grid
    low = min(r.bin0 for r in regions) < 0 and min(r.frame0 for r in regions) < 0
    high = max(r.bin1 for r in regions) > n_bins and max(r.frame1 for r in regions) > n_frames
    assert (low, high) == (frame < 10, 300 < frame < 400)
    assert (min(r.frame0 for r in regions) > 20_000) == (frame > 400)


def test_a_warp_kernel_that_cannot_compile_leaves_its_work_to_torch_s_path(
    fused, monkeypatch, caplog
):
    """Where the fused warp fails to compile (Triton finds no C compiler), the stroke is still
    painted, the first group too, through torch's path, and Triton's kernels are off for the
    session."""
    monkeypatch.setattr(triton_math, "_failure", None)
    monkeypatch.setattr(
        warp_fused, "_kernel", functools.cache(NoCompiler)
    )  # (as the fixture clears)
    document = tonal_document()
    before = document.blocks[0].magnitude.clone()
    painted = []
    stroke = StrokeSession(document, "warp", BrushSettings(radius_frames=5, radius_bins=5),
                           params={"amount": 1.0}, history=History(document))  # fmt: skip
    for event in events(5):
        box = stroke.add_events([event])
        painted.append(not box.empty and bool(
            (document.blocks[0].magnitude[:, box.bin0 : box.bin1, box.frame0 : box.frame1]
             != before[:, box.bin0 : box.bin1, box.frame0 : box.frame1]).any()))  # fmt: skip
    stroke.end()
    assert painted[0] and sum(painted) >= 6
    assert (document.blocks[0].magnitude - before).abs().max() > 1e-3
    assert "C compiler" in caplog.text
    assert not triton_math.takes(torch.device("cuda"))
    monkeypatch.setattr(triton_math, "_failure", None)  # (the fixture's check: nothing else failed)
