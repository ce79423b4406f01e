"""Strokes on a document: one region-changed event per input event, channels, opacity, merging."""

import numpy as np
import pytest
import torch
from brush_fixtures import small_document

from spectropaint.brushes.engine import StrokeSession, paint
from spectropaint.brushes.history import History
from spectropaint.brushes.kernels import compiled_math
from spectropaint.brushes.kernels.gain import GainParams
from spectropaint.brushes.registry import BRUSHES
from spectropaint.brushes.settings import BrushSettings
from spectropaint.brushes.stroke import InputEvent
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.regions import Region


def line(x0, y0, x1, y1, n, pressure=1.0):
    return [
        InputEvent(i / 60, x0 + (x1 - x0) * i / (n - 1), y0 + (y1 - y0) * i / (n - 1), pressure)
        for i in range(n)
    ]


def grids(document):
    block = document.blocks[0]
    return torch.stack((block.magnitude, block.phase)).clone()


def test_each_add_events_call_returns_the_box_it_changed():
    document = small_document()
    session = StrokeSession(document, "erase", BrushSettings(radius_frames=5, radius_bins=4))
    events = line(30, 40, 90, 70, 12)
    for previous, event in zip([events[0], *events], events, strict=False):
        before = grids(document)
        region = session.add_events([event])
        bins, frames = np.nonzero((grids(document) != before).any(dim=(0, 1)).numpy())
        assert region.bin0 <= bins.min() and bins.max() < region.bin1
        assert region.frame0 <= frames.min() and frames.max() < region.frame1
        # the dabs of one event lie on the segment from the previous event, radius around it
        assert (
            region.frame0 >= min(previous.x, event.x) - 5
            and region.frame1 <= max(previous.x, event.x) + 6
        )
        assert (
            region.bin0 >= min(previous.y, event.y) - 4
            and region.bin1 <= max(previous.y, event.y) + 5
        )


def test_an_event_that_adds_no_dab_changes_nothing():
    document = small_document()
    session = StrokeSession(document, "blur")
    assert not session.add_events([InputEvent(0.0, 50.0, 50.0)]).empty
    before = grids(document)
    assert session.add_events([InputEvent(0.1, 50.0, 50.0), InputEvent(0.2, 50.5, 50.0)]).empty
    assert torch.equal(grids(document), before)


def test_a_stroke_on_one_channel_leaves_the_other_bit_identical():
    document = small_document()
    before = grids(document)
    paint(document, "gain", line(20, 30, 120, 30, 20), BrushSettings(channel=1))
    after = grids(document)
    assert torch.equal(after[:, 0], before[:, 0])
    assert not torch.equal(after[:, 1], before[:, 1])


def test_linked_channels_get_the_same_edit():
    document = small_document()
    before = grids(document)
    paint(document, "gain", line(20, 30, 120, 30, 20), params=GainParams(gain_db=6.0), settle=False)
    ratio = grids(document)[0] / before[0]
    torch.testing.assert_close(ratio[0], ratio[1])
    assert ratio.max().item() == pytest.approx(10 ** (6 / 20), rel=1e-5)


@pytest.mark.parametrize("spacing", [0.05, 0.3])
def test_overlapping_dabs_do_not_compound_a_gain_beyond_the_stroke_strength(spacing):
    document = small_document()
    before = grids(document)
    settings = BrushSettings(
        radius_frames=6, radius_bins=6, hardness=0.6, strength=0.5, spacing=spacing
    )
    paint(
        document,
        "gain",
        line(40, 60, 160, 60, 30),
        settings,
        params={"gain_db": -12.0},
        settle=False,
    )
    ratio = (grids(document)[0] / before[0]).numpy()
    full = 1 + (10 ** (-12 / 20) - 1) * 0.5
    np.testing.assert_allclose(ratio[:, 60, 50:150], full, rtol=1e-5)
    assert ratio.min() >= full * (1 - 1e-5)


def test_merged_events_paint_the_same_as_the_unmerged_stroke():
    fine = line(20, 20, 200, 100, 97, pressure=0.8)
    merged = fine[::4]
    settings = BrushSettings(radius_frames=7, radius_bins=5, spacing=0.2, pressure_size=0.5)
    results = []
    for events in (fine, merged):
        document = small_document()
        session = StrokeSession(document, "blur", settings)
        for event in events:
            session.add_events([event])
        session.end()
        results.append(grids(document))
    torch.testing.assert_close(results[0], results[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("brush", ["warp", "pen", "clone"])
def test_events_batched_or_one_by_one_give_the_same_documents(brush):
    """Bit-identical dab by dab; fused (the dabs of a batch applied as joint boxes), equal to float
    tolerance: sines and cosines of a larger box may round differently by an ulp."""
    events = line(20, 20, 180, 90, 40, pressure=0.6)
    for fuse in (False, True):
        results = []
        for batches in ([events], [[e] for e in events]):
            document = small_document()
            session = StrokeSession(
                document, brush, BrushSettings(radius_frames=8, radius_bins=6), fuse=fuse
            )
            for batch in batches:
                session.add_events(batch)
            session.end()
            results.append(grids(document))
        if not fuse or BRUSHES[brush].keeps_phase:
            assert torch.equal(results[0], results[1])
        else:
            assert torch.allclose(results[0], results[1], rtol=0, atol=2e-6)


def test_abort_restores_the_document_and_reports_the_box():
    document = small_document()
    before = grids(document)
    session = StrokeSession(document, "warp", BrushSettings(radius_frames=8, radius_bins=8))
    session.add_events(line(30, 30, 120, 80, 20))
    painted = session.region
    assert not painted.empty
    assert session.abort() == painted
    assert torch.equal(grids(document), before)


def test_bad_brush_parameters_and_channels_are_refused():
    document = small_document(channels=1)
    with pytest.raises(SettingsError, match="unknown brush 'smear'"):
        StrokeSession(document, "smear")
    with pytest.raises(SettingsError, match="unknown gain parameter 'sigma'"):
        StrokeSession(document, "gain", params={"sigma": 2})
    with pytest.raises(SettingsError, match="takes GainParams"):
        StrokeSession(document, "erase", params=object())
    with pytest.raises(SettingsError, match="channel must be below 1"):
        StrokeSession(document, "gain", BrushSettings(channel=1))
    with pytest.raises(SettingsError, match="hardness must be from 0 to 1"):
        BrushSettings(hardness=1.5)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("brush", sorted(BRUSHES))
def test_a_stroke_on_cuda_matches_the_cpu_and_undoes_exactly(brush):
    events = line(20, 20, 180, 90, 40, pressure=0.6)
    settings = BrushSettings(radius_frames=8, radius_bins=6)
    reference = small_document()
    block = reference.blocks[0]
    everything = Region(0, block.n_bins, 0, block.n_frames, (0, 1))
    results = {}
    for device in ("cpu", "cuda"):
        document = small_document(device=device)
        # the same coefficients on both devices: only the brushes' arithmetic may differ
        document.write(everything, block.magnitude, block.phase)
        before = grids(document)
        history = History(document)
        paint(document, brush, events, settings, history=history, settle=False)
        results[device] = grids(document).cpu()
        history.undo()
        assert torch.equal(grids(document), before)
    magnitude_error = (results["cuda"][0] - results["cpu"][0]).abs().max()
    assert magnitude_error <= 1e-4 * results["cpu"][0].abs().max()
    phase_error = torch.remainder(results["cuda"][1] - results["cpu"][1] + np.pi, 2 * np.pi) - np.pi
    loud = results["cpu"][0] > 1e-3 * results["cpu"][0].max()
    # warp's phase is ill-conditioned where its neighbours' phasors nearly cancel: on the CPU a
    # 5e-7 rad change of the input phase moves this stroke's output by 1.6e-3 rad (2.5e-3 before
    # the dabs were fused), and the devices' trigonometry differs by about that
    assert phase_error[loud].abs().max() < (1e-2 if brush == "warp" else 1e-3)


def test_a_stroke_keeps_the_compiled_switch_as_it_first_read_it(monkeypatch):
    """The switch turned off part way through a stroke changes the strokes after it, not that
    one: it paints what a stroke with the switch on throughout paints, bit for bit."""
    monkeypatch.delenv(compiled_math.COMPILED_ENV, raising=False)
    settings = BrushSettings(radius_frames=6, radius_bins=5, hardness=0.4)
    events = line(20, 40, 90, 60, 12, pressure=0.7)

    def painted(switch_after: int | None, off_at_start: bool = False):
        monkeypatch.delenv(compiled_math.COMPILED_ENV, raising=False)
        if off_at_start:
            monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")
        document = small_document()
        stroke = StrokeSession(document, "warp", settings)
        for index, event in enumerate(events):
            if index == switch_after:
                monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")
            stroke.add_events([event])
        stroke.end()
        return grids(document)

    on = painted(None)
    assert torch.equal(painted(switch_after=4), on)
    assert compiled_math.switched_off()  # outside the stroke, the environment's answer
    off = painted(None, off_at_start=True)
    assert not torch.equal(off, on)  # the switch does change the path a stroke takes
    assert (off[0] - on[0]).abs().max() < 1e-3 * on[0].abs().max()  # the same brush's paths


def test_held_switches_are_a_thread_s_own(monkeypatch):
    """A stroke painted on one thread holds its switches there: another thread (the window's,
    the warm-up's) reads the environment, and nothing stays held once both are done."""
    monkeypatch.setenv(compiled_math.COMPILED_ENV, "0")
    import threading

    entered, leave, seen = threading.Event(), threading.Event(), []

    def painting():
        with compiled_math.SwitchesHeld({compiled_math.COMPILED_ENV: False}):
            seen.append(compiled_math.switched_off())
            entered.set()
            leave.wait(5)

    thread = threading.Thread(target=painting)
    thread.start()
    entered.wait(5)
    seen.append(compiled_math.switched_off())  # (this thread: the environment's answer)
    with compiled_math.SwitchesHeld({}):
        leave.set()
        thread.join(5)
        seen.append(compiled_math.switched_off())
    monkeypatch.setenv(compiled_math.COMPILED_ENV, "1")
    seen.append(compiled_math.switched_off())  # nothing held: the environment's answer now
    assert seen == [False, True, True, False]
