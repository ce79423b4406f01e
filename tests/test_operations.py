"""Operations on a selection, judged on what is heard: gain, erase, fill, cut, copy, paste, heal."""

import numpy as np
import pytest
import torch
from brush_fixtures import small_document
from music_fixtures import RATE, harmonic_tone, music
from repair_measures import (
    analysed,
    box,
    click_left_db,
    heard,
    linear_interpolation,
    log_spectral_distance,
    residual_drop_db,
)

from spectropaint.brushes.history import History
from spectropaint.brushes.operations import Clipboard, apply_plans, plan_operation
from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.selection import Selection, rasterise, resolve
from spectropaint.transforms.shapes import Harmonic, Lasso, Rectangle


def grids(document):
    block = document.blocks[0]
    return torch.stack((block.magnitude, block.phase)).clone()


def run(document, selection, name, params=None, *, clipboard=None, history=None):
    mask = rasterise(resolve(selection, document), document) if selection else None
    plans = plan_operation(document, mask, name, params, clipboard=clipboard or Clipboard())
    return apply_plans(document, plans, label=name, history=history) if plans else None


def test_gain_through_a_feathered_selection_scales_by_the_weight_and_keeps_the_rest_bit_for_bit():
    document = small_document()
    selection = Selection.of(Lasso(((0.2, 1000.0), (0.7, 1500.0), (0.4, 5000.0)))).feathered(
        0.01, 100.0
    )
    mask = rasterise(selection, document)
    before = grids(document)
    run(document, selection, "gain", {"gain_db": -20.0})
    after = grids(document)
    weight = torch.zeros(before.shape[-2:])
    r = mask.region
    weight[r.bin0 : r.bin1, r.frame0 : r.frame1] = mask.weight
    untouched = weight == 0
    assert torch.equal(after[:, :, untouched], before[:, :, untouched])
    assert torch.equal(after[1], before[1])  # gain keeps phase everywhere
    expected = before[0] * (1 + (0.1 - 1) * weight)
    assert torch.allclose(after[0], expected, rtol=1e-5, atol=1e-8)
    assert ((weight > 0) & (weight < 0.5)).sum() > 50  # the feather is soft


@pytest.mark.parametrize(
    "name, params",
    [
        ("gain", {"gain_db": 6.0}),
        ("erase", {}),
        ("heal", {"mode": "replace"}),
        ("heal", {"mode": "partials"}),
        ("heal", {"mode": "attenuate"}),
        ("heal", {"mode": "pattern"}),
        ("heal", {"direction": "frequency"}),
        ("fill", {"brush": "blur", "brush_params": {"sigma": 0.5}}),
        ("fill", {"brush": "filter", "brush_params": {"mode": "highpass"}}),
        ("fill", {"brush": "pen", "brush_params": {"level_db": -20}}),
        ("cut", {}),
    ],
)
def test_each_operation_is_one_undo_step_and_leaves_the_unselected_cells_alone(name, params):
    document = small_document()
    history = History(document)
    selection = Selection.of(Rectangle(0.3, 0.5, 1000.0, 3000.0))
    mask = rasterise(selection, document)
    before = grids(document)
    run(document, selection, name, params, history=history)
    after = grids(document)
    assert not torch.equal(before, after)
    outside = torch.ones(before.shape[-2:], dtype=torch.bool)
    r = mask.region
    outside[r.bin0 : r.bin1, r.frame0 : r.frame1] = False
    assert torch.equal(after[:, :, outside], before[:, :, outside])
    assert len(history.undo_steps) == 1
    history.undo()
    assert torch.equal(grids(document), before)
    history.redo()
    assert torch.equal(grids(document), after)


def tone_with_click(*, click_at=1.5, level=0.03, seed=1):
    """Held harmonic tones with vibrato over soft noise, and a 30 ms broadband click: the clean
    and the damaged samples."""
    rng = np.random.default_rng(seed)
    t = np.arange(3 * RATE) / RATE
    clean = level * harmonic_tone(t, 220.0, harmonics=14) + 0.001 * rng.standard_normal(len(t))
    damaged = clean.copy()
    i, n = int(click_at * RATE), int(0.03 * RATE)
    damaged[i : i + n] += rng.standard_normal(n) * np.exp(-np.arange(n) / (0.008 * RATE))
    return clean, damaged


def test_heal_removes_a_click_better_than_erase_and_linear_interpolation():
    clean, damaged = tone_with_click()
    reach = 1024 / RATE  # half a window: the frames the click reaches
    selection = Selection.of(Rectangle(1.5 - reach, 1.53 + reach, 0.0, RATE / 2))
    results = {}
    for method in ("heal", "erase", "linear"):
        document = Document.from_samples(damaged, RATE, device="cpu")
        mask = rasterise(selection, document)
        if method == "linear":
            linear_interpolation(document, mask.region)
        else:
            run(document, selection, method, {"mode": "partials"} if method == "heal" else {})
        results[method] = heard(document)[box(mask.region)]
    cells = box(mask.region)
    reference, before = analysed(clean, RATE)[cells], analysed(damaged, RATE)[cells]
    distance = {m: log_spectral_distance(results[m], reference) for m in results}
    assert residual_drop_db(before, results["heal"], reference) >= 30
    assert distance["heal"] < distance["linear"] < distance["erase"]
    assert distance["heal"] < 0.8 * distance["linear"]


def click_at_level(level_db: float, *, seed: int = 1, at: float = 1.5):
    """:func:`tone_with_click`'s music with its click scaled to ``level_db`` above the music's
    energy over the samples the frames reaching the click see (half a window each side)."""
    clean, damaged = tone_with_click(click_at=at, seed=seed)
    i, n, half = int(at * RATE), int(0.03 * RATE), 1024
    burst = damaged[i : i + n] - clean[i : i + n]
    music_energy = np.sum(clean[i - half : i + n + half] ** 2)
    burst *= np.sqrt(music_energy * 10 ** (level_db / 10) / np.sum(burst**2))
    damaged = clean.copy()
    damaged[i : i + n] += burst
    return clean, damaged


@pytest.mark.parametrize("level_db", [10.0, 20.0])
def test_heal_removes_a_click_at_realistic_levels(level_db):
    """The issue's target on a click 10 or 20 dB above the music: the click's own energy in the
    selection (what it changes in what is heard: the healed damaged sound against the same heal
    of the clean one) falls >= 30 dB, and so does all the damage (the heal's own error about the
    music included) at 20 dB; at 10 dB that error, 8 to 10 dB below the music, leaves ~25 dB."""
    clean, damaged = click_at_level(level_db)
    reach = 1024 / RATE
    selection = Selection.of(Rectangle(1.5 - reach, 1.53 + reach, 0.0, RATE / 2))
    heard_after = {}
    for method in ("partials", "replace", "erase", "linear"):
        for name, samples in (("damaged", damaged), ("clean", clean)):
            document = Document.from_samples(samples, RATE, device="cpu")
            mask = rasterise(selection, document)
            if method == "linear":
                linear_interpolation(document, mask.region)
            elif method == "erase":
                run(document, selection, "erase")
            else:
                run(document, selection, "heal", {"mode": method})
            heard_after[method, name] = heard(document)[box(mask.region)]
    cells = box(mask.region)
    reference, before = analysed(clean, RATE)[cells], analysed(damaged, RATE)[cells]
    click_left = click_left_db(
        before, reference, heard_after["replace", "damaged"], heard_after["replace", "clean"]
    )
    assert click_left >= 30
    drops = {
        m: residual_drop_db(before, heard_after[m, "damaged"], reference)
        for m in ("partials", "replace")
    }
    assert min(drops.values()) >= (30 if level_db >= 20 else 24), drops
    distance = {
        m: log_spectral_distance(heard_after[m, "damaged"], reference)
        for m in ("partials", "replace", "erase", "linear")
    }
    assert max(distance["partials"], distance["replace"]) < distance["linear"] < distance["erase"]


def test_heal_continues_a_steady_tone_through_the_gap_in_phase():
    t = np.arange(2 * RATE) / RATE
    tone = 0.1 * np.sin(2 * np.pi * 1234.5 * t)
    document = Document.from_samples(tone, RATE, device="cpu")
    gap = Selection.of(Rectangle(0.9, 1.1, 0.0, RATE / 2))
    run(document, gap, "erase")
    run(document, gap, "heal", {"mode": "replace"})
    out = document.edited_samples()[0]
    inside = (t > 0.92) & (t < 1.08)
    error = out[inside] - tone[inside]
    assert 10 * np.log10(np.sum(tone[inside] ** 2) / np.sum(error**2)) > 20


def test_minus_40_db_on_a_harmonic_selection_takes_every_harmonic_and_leaves_the_rest():
    t = np.arange(3 * RATE) / RATE
    voice = 0.05 * harmonic_tone(t, 220.0, harmonics=10, vibrato_cents=50.0, rolloff=0.85)
    other = 0.02 * np.sin(2 * np.pi * 2530.0 * t) + 0.0005 * np.random.default_rng(
        2
    ).standard_normal(len(t))
    rest = Document.from_samples(other, RATE, device="cpu")
    document = Document.from_samples(voice + other, RATE, device="cpu")
    selection = resolve(Selection.of(Harmonic(0.2, 2.8, 220.0, 10, 50.0)), document)
    mask = rasterise(selection, document)
    run(document, selection, "gain", {"gain_db": -40.0})
    out = heard(document)[0]
    seconds, hz = document.blocks[0].frame_seconds, document.blocks[0].band_hz
    columns = (seconds > 0.3) & (seconds < 2.7)
    true = 220.0 * 2 ** (50 / 1200 * np.sin(2 * np.pi * 5.0 * seconds[columns]))
    voice_alone = analysed(voice, RATE)[0][:, columns]
    for h in range(1, 11):
        lobe = np.abs(hz[:, None] - h * true[None, :]) <= 2 * (hz[1] - hz[0])
        drop = 10 * np.log10(np.sum(voice_alone[lobe] ** 2) / np.sum(out[:, columns][lobe] ** 2))
        assert drop > 25, (h, drop)
    weight = np.zeros(out.shape, dtype=bool)
    r = mask.region
    weight[r.bin0 : r.bin1, r.frame0 : r.frame1] = mask.weight.numpy() > 0
    near = np.abs(hz - 2530.0) < 60  # the other tone, between harmonics 11 and 12
    kept = analysed(other, RATE)[0][near][:, columns]
    level = 10 * np.log10(np.sum(out[near][:, columns] ** 2) / np.sum(kept**2))
    assert abs(level) < 0.5
    assert rest.blocks[0].magnitude.shape[-1] == out.shape[-1]


def test_copy_and_paste_moves_a_passage_to_the_cursor_and_up_in_frequency():
    t = np.arange(3 * RATE) / RATE
    burst = np.where((t > 0.5) & (t < 0.9), 0.1 * np.sin(2 * np.pi * 1000.0 * t), 0.0)
    document = Document.from_samples(burst, RATE, device="cpu")
    clipboard = Clipboard()
    source = Selection.of(Rectangle(0.45, 0.95, 800.0, 1200.0))
    run(document, source, "copy", clipboard=clipboard)
    assert len(clipboard.clips) == 1
    step = 512 / RATE
    at = clipboard.seconds + round(1.0 / step) * step  # a whole number of frames later
    run(document, None, "paste", {"at_seconds": at, "shift_hz": 500.0}, clipboard=clipboard)
    out = document.edited_samples()[0]
    pasted = out[(t > at + 0.1) & (t < at + 0.4)]
    spectrum = np.abs(np.fft.rfft(pasted * np.hanning(len(pasted))))
    freqs = np.fft.rfftfreq(len(pasted), 1 / RATE)
    shift = round(500.0 / (RATE / 2048)) * RATE / 2048  # whole bins
    assert abs(freqs[np.argmax(spectrum)] - (1000.0 + shift)) < 5
    near = np.abs(freqs - (1000.0 + shift)) < 30
    assert np.sum(spectrum[near] ** 2) / np.sum(spectrum**2) > 0.98  # one clean tone
    level = np.sqrt(np.mean(pasted**2)) / (0.1 / np.sqrt(2))
    assert 0.8 < level < 1.1
    original = out[(t > 0.55) & (t < 0.85)]
    assert np.allclose(original, burst[(t > 0.55) & (t < 0.85)])  # the source is still there


def test_paste_without_a_copy_says_so_and_cut_empties_the_selection():
    document = small_document()
    with pytest.raises(SettingsError, match="nothing to paste"):
        run(document, None, "paste", {})
    clipboard = Clipboard()
    selection = Selection.of(Rectangle(0.3, 0.5, 1000.0, 3000.0))
    mask = rasterise(selection, document)
    before = grids(document)
    run(document, selection, "cut", clipboard=clipboard)
    r = mask.region
    cut = grids(document)[0][:, r.bin0 : r.bin1, r.frame0 : r.frame1]
    assert cut.max() < 1e-6 * before[0].max()  # -120 dB
    run(document, None, "paste", {}, clipboard=clipboard)  # back where it came from
    assert torch.allclose(grids(document)[0], before[0], atol=1e-6)


def test_fill_with_the_pen_paints_its_level_into_silence():
    document = Document.from_samples(np.zeros(2 * RATE), RATE, device="cpu")
    selection = Selection.of(Rectangle(0.5, 1.5, 2000.0, 2500.0))
    mask = rasterise(selection, document)
    run(document, selection, "fill", {"brush": "pen", "brush_params": {"level_db": -30.0}})
    power = (heard(document)[0][box(mask.region)[1:]] / document.full_scale) ** 2
    inner = power[3:-3, 5:-5]  # away from the edges, where the painted area ends
    # the pen's tones in neighbouring bands beat against each other: what is heard averages
    # 1 to 2 dB under the painted level (the stroke-end settle step of issue 11 evens that out)
    assert abs(10 * np.log10(inner.mean()) - (-30.0)) < 2.5


def test_an_unknown_operation_or_a_brush_that_cannot_fill_is_refused():
    document = small_document()
    selection = Selection.of(Rectangle(0.3, 0.5, 1000.0, 3000.0))
    with pytest.raises(SettingsError, match="unknown operation 'polish'"):
        run(document, selection, "polish")
    with pytest.raises(SettingsError, match="brush must be one of"):
        run(document, selection, "fill", {"brush": "warp"})


def test_heal_costs_the_same_on_a_long_file_as_on_a_short_one():
    """Operations read only the selection and its context (the region they plan)."""
    shapes = set()
    for seconds in (2.0, 20.0):
        document = Document.from_samples(music(seconds), RATE, device="cpu")
        mask = rasterise(Selection.of(Rectangle(1.0, 1.5, 0.0, RATE / 2)), document)
        (plan,) = plan_operation(document, mask, "heal", {}, clipboard=Clipboard())
        shapes.add(plan.region.shape)
        # the context: the 3 frames that overlap each end (n_fft 2048, hop 512)
        assert plan.region.shape == (1025, mask.region.shape[1] + 2 * 3)
    assert len(shapes) == 1
