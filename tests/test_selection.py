"""Selections: shapes in seconds and Hz, set operations, feather, invert, rasterised on any grid."""

import numpy as np
import pytest
import torch
from brush_fixtures import small_document
from music_fixtures import RATE, harmonic_tone, music

from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.selection import Selection, rasterise, resolve, selection_audio
from spectropaint.transforms.shapes import (
    Band,
    Dab,
    Harmonic,
    Lasso,
    Painted,
    Range,
    Rectangle,
    Wand,
    shape_from_dict,
)
from spectropaint.transforms.sound_analysis import find_hum, track_fundamental
from spectropaint.transforms.stft import STFTSettings


def full_weight(mask, document):
    """The mask's weight on the whole grid, as numpy ``[bins, frames]``."""
    block = document.blocks[0]
    out = np.zeros((block.n_bins, block.n_frames), dtype=np.float32)
    if mask is not None:
        r = mask.region
        out[r.bin0 : r.bin1, r.frame0 : r.frame1] = mask.weight.numpy()
    return out


def cell_centres(document):
    block = document.blocks[0]
    return block.frame_seconds, np.asarray(block.band_hz)


def test_a_rectangle_selects_exactly_the_cells_whose_centres_it_holds():
    document = small_document()
    mask = rasterise(Selection.of(Rectangle(0.2, 0.45, 1000.0, 3000.0)), document)
    seconds, hz = cell_centres(document)
    expected = ((hz >= 1000) & (hz <= 3000))[:, None] & ((seconds >= 0.2) & (seconds <= 0.45))
    assert np.array_equal(full_weight(mask, document), expected.astype(np.float32))
    rows, columns = np.flatnonzero(expected.any(1)), np.flatnonzero(expected.any(0))
    r = mask.region
    assert (r.bin0, r.bin1, r.frame0, r.frame1) == (
        rows[0],
        rows[-1] + 1,
        columns[0],
        columns[-1] + 1,
    )
    assert r.channels == (0, 1)


def test_the_same_selection_lands_on_the_same_seconds_and_hz_under_another_transform():
    samples = 0.1 * np.random.default_rng(3).standard_normal(RATE)
    selection = Selection.of(Lasso(((0.2, 500.0), (0.8, 500.0), (0.5, 6000.0))))
    for n_fft, hop in ((2048, 512), (512, 128), (4096, 256)):
        document = Document.from_samples(
            samples, RATE, settings=STFTSettings(n_fft=n_fft, hop=hop), device="cpu"
        )
        weight = full_weight(rasterise(selection, document), document)
        seconds, hz = cell_centres(document)
        # inside the triangle: above its base, below both slanted edges
        t, f = np.meshgrid(seconds, hz)
        inside = (
            (f >= 500) & (f <= 500 + (t - 0.2) / 0.3 * 5500) & (f <= 6000 - (t - 0.5) / 0.3 * 5500)
        )
        strict = (
            (f > 500 + 30)
            & (f < 500 + (t - 0.2) / 0.3 * 5500 - 30)
            & (f < 6000 - (t - 0.5) / 0.3 * 5500 - 30)
        )
        assert weight[strict].min() == 1, n_fft  # every cell well inside is selected
        assert weight[~inside].max() == 0, n_fft  # no cell outside is


def test_a_shape_narrower_than_a_cell_still_selects_the_nearest_cell():
    document = small_document()  # 62.5 Hz bins, 4 ms frames
    seconds, hz = cell_centres(document)
    weight = full_weight(rasterise(Selection.of(Band(1010.0, 1020.0)), document), document)
    assert np.array_equal(np.flatnonzero(weight.any(1)), [np.argmin(np.abs(hz - 1015))])
    assert weight.all(axis=0).sum() == 0 and weight.any(axis=0).all()  # one row, every frame
    weight = full_weight(rasterise(Selection.of(Range(0.5001, 0.5002)), document), document)
    assert np.array_equal(np.flatnonzero(weight.any(0)), [np.argmin(np.abs(seconds - 0.50015))])


def test_add_subtract_intersect_and_invert_combine_weights():
    document = small_document()
    a, b = Rectangle(0.1, 0.5, 500.0, 3000.0), Rectangle(0.3, 0.7, 2000.0, 5000.0)
    wa = full_weight(rasterise(Selection.of(a), document), document)
    wb = full_weight(rasterise(Selection.of(b), document), document)
    both = Selection.of(a)
    assert np.array_equal(
        full_weight(rasterise(both.combined(b, "add"), document), document), np.maximum(wa, wb)
    )
    assert np.array_equal(
        full_weight(rasterise(both.combined(b, "subtract"), document), document),
        np.minimum(wa, 1 - wb),
    )
    assert np.array_equal(
        full_weight(rasterise(both.combined(b, "intersect"), document), document),
        np.minimum(wa, wb),
    )
    assert np.array_equal(full_weight(rasterise(both.combined(b), document), document), wb)
    inverted = rasterise(both.invert(), document)
    assert np.array_equal(full_weight(inverted, document), 1 - wa)
    assert inverted.region.shape == wa.shape  # the whole grid


def test_feather_softens_the_edge_and_leaves_far_cells_exactly_zero():
    document = small_document()
    sharp = Selection.of(Rectangle(0.3, 0.6, 2000.0, 4000.0))
    soft = full_weight(rasterise(sharp.feathered(0.02, 200.0), document), document)
    hard = full_weight(rasterise(sharp, document), document)
    assert 0.98 < soft.sum() / hard.sum() < 1.02  # a Gaussian moves weight, keeps its total
    seconds, hz = cell_centres(document)
    edge = (np.abs(seconds - 0.3) < 0.004)[None, :] & ((hz > 2500) & (hz < 3500))[:, None]
    assert np.all((soft[edge] > 0.3) & (soft[edge] < 0.7))
    far = ((seconds < 0.3 - 3 * 0.02 - 0.01) | (seconds > 0.6 + 0.07))[None, :] | (
        (hz < 2000 - 3 * 200 - 70) | (hz > 4000 + 670)
    )[:, None]
    assert soft[far].max() == 0.0
    assert soft[(hz > 2800) & (hz < 3200)][:, (seconds > 0.42) & (seconds < 0.48)].min() > 0.99


def test_painted_dabs_take_the_largest_weight_and_fall_to_zero_at_the_rim():
    document = small_document()
    dabs = (Dab(0.3, 2000.0, 0.05, 500.0, 0.0, 1.0), Dab(0.34, 2000.0, 0.05, 500.0, 0.0, 0.5))
    weight = full_weight(rasterise(Selection.of(Painted(dabs)), document), document)
    seconds, hz = cell_centres(document)

    def dab(d):
        r = np.sqrt(
            ((seconds - d.seconds) / d.radius_seconds)[None, :] ** 2
            + ((hz - d.hz) / d.radius_hz)[:, None] ** 2
        )
        return np.where(r < 1, d.weight * (0.5 + 0.5 * np.cos(np.pi * r)), 0.0)

    assert np.allclose(weight, np.maximum(dab(dabs[0]), dab(dabs[1])), atol=1e-6)


def test_shapes_and_selections_round_trip_through_json():
    shapes = [
        Rectangle(1.0, 2.0, 100.0, 200.0),
        Band(40.0, 60.0),
        Range(0.5, 0.7),
        Lasso(((0.0, 100.0), (1.0, 100.0), (0.5, 900.0))),
        Harmonic(0.0, 5.0, 220.0, 10, 50.0),
        Wand(1.0, 440.0, 9.0),
        Painted((Dab(0.3, 2000.0, 0.05, 500.0, 0.5, 1.0),)),
    ]
    for shape in shapes:
        assert shape_from_dict(shape.to_dict()) == shape
    selection = Selection.of(shapes[0]).combined(shapes[1], "subtract").feathered(0.01, 20).invert()
    assert Selection.from_dict(selection.to_dict()) == selection


@pytest.mark.parametrize(
    "values, message",
    [
        ({"shape": "circle"}, "unknown selection shape 'circle'"),
        ({"shape": "rectangle", "t0": 1, "t1": 0.5, "f0": 0, "f1": 10}, "low to high"),
        ({"shape": "rectangle", "t0": 1, "t1": 2, "f0": 0}, "finite number 'f1'"),
        ({"shape": "band", "f0": 1, "f1": 2, "colour": 3}, "unknown band key 'colour'"),
        ({"shape": "lasso", "points": [[0, 1], [1, 2]]}, "at least 3 points"),
        ({"shape": "harmonic", "t0": 0, "t1": 1, "f0": 0}, "above 0 Hz"),
    ],
)
def test_bad_shapes_are_refused_with_the_reason(values, message):
    with pytest.raises(SettingsError, match=message):
        shape_from_dict(values)


def vibrato_document(seconds=3.0, f0=220.0, vibrato_cents=50.0, noise=0.001):
    t = np.arange(int(seconds * RATE)) / RATE
    tone = 0.05 * harmonic_tone(t, f0, harmonics=10, vibrato_cents=vibrato_cents, rolloff=0.85)
    noisy = tone + noise * np.random.default_rng(0).standard_normal(len(t))
    return Document.from_samples(noisy, RATE, device="cpu"), t


def test_the_fundamental_is_tracked_through_vibrato():
    document, _ = vibrato_document()
    seconds, hz = track_fundamental(document, 0.1, 2.9, 225.0, 10)
    # the true pitch at each frame, from the same formula as the tone (vibrato 5 Hz, 50 cents)
    true = 220.0 * 2 ** (50 / 1200 * np.sin(2 * np.pi * 5.0 * seconds))
    cents = 1200 * np.abs(np.log2(hz / true))
    assert len(seconds) > 200 and cents.max() < 10


def test_a_harmonic_selection_covers_every_harmonic_over_the_whole_tone():
    document, _ = vibrato_document()
    selection = resolve(Selection.of(Harmonic(0.1, 2.9, 220.0, 10, 50.0)), document)
    weight = full_weight(rasterise(selection, document), document)
    seconds, hz = cell_centres(document)
    columns = np.flatnonzero((seconds >= 0.1) & (seconds <= 2.9))
    true = 220.0 * 2 ** (50 / 1200 * np.sin(2 * np.pi * 5.0 * seconds[columns]))
    for h in range(1, 11):
        # every cell within 1.5 bins of the harmonic: the main lobe (two bins each side), less
        # what the pitch track may miss
        near = np.abs(hz[:, None] - h * true[None, :]) <= 1.5 * (hz[1] - hz[0])
        assert weight[:, columns][near].min() == 1, h
    between = np.abs(hz - 330.0).argmin()  # halfway between harmonics 1 and 2
    assert weight[between, columns].max() == 0


def test_the_wand_takes_the_connected_region_standing_above_its_surroundings():
    t = np.arange(2 * RATE) / RATE

    def gate(start, stop):  # smooth edges: an abrupt one splatters over every band
        return np.clip(np.minimum(t - start, stop - t) / 0.05, 0, 1)

    burst = gate(0.8, 1.2) * 0.1 * np.sin(2 * np.pi * 3000 * t)
    other = gate(0.3, 0.5) * 0.1 * np.sin(2 * np.pi * 6000 * t)
    noise = 0.001 * np.random.default_rng(1).standard_normal(len(t))
    document = Document.from_samples(burst + other + noise, RATE, device="cpu")
    selection = resolve(Selection.of(Wand(1.0, 3000.0, 20.0)), document)
    weight = full_weight(rasterise(selection, document), document)
    seconds, hz = cell_centres(document)
    row = np.abs(hz - 3000).argmin()
    inside = (seconds > 0.85) & (seconds < 1.15)
    assert weight[row, inside].min() == 1
    assert weight[:, (seconds < 0.7) | (seconds > 1.3)].max() == 0  # not the other burst
    assert weight[np.abs(hz - 3000) > 300].max() == 0  # nor the noise around
    nothing = resolve(Selection.of(Wand(1.6, 9000.0, 20.0)), document)
    assert rasterise(nothing, document) is None


@pytest.mark.parametrize("mains", [50.0, 59.7, 47.3])
def test_a_hum_fundamental_is_found_under_music_to_a_quarter_hertz(mains):
    t = np.arange(6 * RATE) / RATE
    # the hum's fundamental at -44 dBFS under music of -20 dBFS RMS that holds an A major chord
    # (itself a harmonic series of 55 Hz) and plucks notes
    hum = sum(0.006 / h * np.sin(2 * np.pi * h * mains * t + h) for h in range(1, 9))
    document = Document.from_samples(hum + music(6.0), RATE, device="cpu")
    assert abs(find_hum(document, 0.0, 6.0) - mains) < 0.25


def test_an_unresolved_shape_cannot_be_rasterised():
    document = small_document()
    with pytest.raises(SettingsError, match="resolve"):
        rasterise(Selection.of(Harmonic(0.0, 0.5, 220.0)), document)
    assert torch.is_tensor(
        rasterise(resolve(Selection.of(Harmonic(0.0, 0.5, 220.0)), document), document).weight
    )


def test_auditioning_a_band_gives_the_tone_inside_it_alone():
    t = np.arange(2 * RATE) / RATE
    low, high = 0.1 * np.sin(2 * np.pi * 500 * t), 0.1 * np.sin(2 * np.pi * 3000 * t)
    document = Document.from_samples(low + high, RATE, device="cpu")
    mask = rasterise(Selection.of(Rectangle(0.5, 1.5, 2500.0, 3500.0)), document)
    first, samples = selection_audio(document, mask)
    middle = slice(int(0.7 * RATE) - first, int(1.3 * RATE) - first)
    heard = samples[0, middle]
    expected = high[first:][middle]
    assert 10 * np.log10(np.sum(expected**2) / np.sum((heard - expected) ** 2)) > 30
    assert first <= int(0.5 * RATE) and first + samples.shape[-1] >= int(1.5 * RATE)
