"""The torch NSGT: equal to nsgt's numpy transform, exact inverses, local frame spans, resolution."""

import contextlib

import numpy as np
import pytest
import torch

from spectropaint.transforms import fft_ops
from spectropaint.transforms.errors import Cancelled, SettingsError
from spectropaint.transforms.files.demo_sound import demo_samples
from spectropaint.transforms.nsgt import NSGT
from spectropaint.transforms.nsgt_compat import _NumpyWithIntegerClip, nsgt_modules, scale
from spectropaint.transforms.nsgt_design import NSGTSettings, frame_design, scale_bands
from spectropaint.transforms.stft import STFT, STFTSettings
from spectropaint.transforms.transform import RESYNTHESIS_PIECE

RATE = 44100


def snr_db(test, reference) -> float:
    test, reference = np.asarray(test, dtype=np.float64), np.asarray(reference, dtype=np.float64)
    return 20 * np.log10(np.linalg.norm(reference) / np.linalg.norm(test - reference))


@pytest.fixture(scope="module")
def music():
    """Eight seconds of the demo sound (chords, a chirp, noise bursts, clicks), stereo."""
    return torch.from_numpy(np.ascontiguousarray(demo_samples(RATE)[:, : 8 * RATE]))


def test_the_shim_lets_nsgts_own_sliced_transform_run_and_invert():
    modules = nsgt_modules()
    sliced = modules.nsgt.NSGT_sliced(
        scale("log", 200.0, 16000.0, 200), 2**16, 2**13, RATE, real=True
    )
    x = np.random.default_rng(0).standard_normal(3 * RATE)
    coefficients = list(sliced.forward((x,)))
    back = np.concatenate(list(sliced.backward(coefficients)))[: len(x)]
    assert snr_db(back, x) > 250


def test_the_shim_clips_integer_arrays_in_place_and_floats_as_numpy_does():
    shim = _NumpyWithIntegerClip("numpy")
    lengths = np.array([1, 4, 9, 2])
    assert shim.clip(lengths, 4, np.inf, out=lengths) is lengths
    assert lengths.tolist() == [4, 4, 9, 4]
    values = np.array([0.5, 7.0])
    assert shim.clip(values, 1.0, 5.0).tolist() == [1.0, 5.0]
    assert shim.pi == np.pi


@pytest.mark.parametrize("name", ["log", "mel", "bark"])
def test_coefficients_equal_nsgts_numpy_forward_on_the_same_frame(name):
    """Per slice, ours = nsgt's * (2 M / N) * exp(2 pi i l_k (m + M/4) / M): the same atoms, our
    normalisation (a full-scale sine is 0 dB in every band) and our time origin (nsgt rotates
    each slice by a quarter, then rolls its coefficients back)."""
    settings = NSGTSettings(scale=name, bins_per_octave=12, fmin=100.0)
    rate = 22050
    transform = NSGT(settings, rate)
    design = transform.design
    n = design.slice_length
    frequencies, q = scale_bands(settings, rate)
    sliced = nsgt_modules().nsgt.NSGT_sliced(
        scale(name, frequencies[0], frequencies[-1], len(frequencies)),
        n,
        design.transition,
        rate,
        real=True,
        min_win=4,
    )
    m = np.concatenate([[group.m] * group.n_bands for group in design.groups])
    sliced.M = np.concatenate((m, m[-2:0:-1]))  # our coefficient counts, mirrored
    x = np.random.default_rng(1).standard_normal(3 * n)
    theirs = list(sliced.forward((x,)))
    ours = transform.analyse(torch.from_numpy(x[None]))
    compared = 0
    for s, slice_coefficients in enumerate(theirs):
        parity, r = s % 2, s // 2
        for g, group in enumerate(design.groups):
            block = ours[2 * g + parity][0].numpy()
            if (r + 1) * group.m > block.shape[-1]:
                continue
            for row, k in enumerate(range(group.bands.start, group.bands.stop)):
                slots = np.arange(group.m)
                phase = np.exp(2j * np.pi * sliced.rfbas[k] * (slots + group.m // 4) / group.m)
                expected = slice_coefficients[k] * (2 * group.m / n) * phase
                got = block[row, r * group.m : (r + 1) * group.m]
                np.testing.assert_allclose(got, expected, atol=2e-6 * np.abs(expected).max())
                compared += 1
    assert compared > 3 * len(design.band_hz)


@pytest.mark.parametrize(
    "settings",
    [
        NSGTSettings(),
        NSGTSettings(scale="mel", bins_per_octave=24),
        NSGTSettings(scale="bark", bins_per_octave=96, fmin=55.0),
        NSGTSettings(bins_per_octave=12, fmin=27.5, fmax=16000.0),
    ],
    ids=["log48", "mel24", "bark96", "log12-16k"],
)
def test_round_trip_of_music_is_above_120_db(music, settings):
    transform = NSGT(settings, RATE)
    blocks = transform.analyse(music)
    assert len(blocks) == 2 * len(transform.design.groups)
    back = transform.synthesise(blocks, music.shape[-1])
    assert snr_db(back.double().numpy(), music.numpy()) > 120


def test_blocks_are_rectangular_with_evenly_spaced_frames_and_ascending_bands(music):
    transform = NSGT(NSGTSettings(), RATE)
    layouts = transform.layout(music.shape[-1])
    blocks = transform.analyse(music)
    all_bands = np.concatenate([layout.band_hz for layout in layouts[::2]])
    assert np.all(np.diff(all_bands) > 0)
    for layout, block in zip(layouts, blocks, strict=True):
        assert block.shape == (2, layout.n_bins, layout.n_frames)
        assert transform.slice_length % layout.hop == 0
        seconds = layout.frame_seconds(RATE)
        assert seconds[0] <= 0 and seconds[-1] >= music.shape[-1] / RATE
    hops = [layout.hop for layout in layouts[2::2]]
    assert hops == sorted(hops, reverse=True)  # bands higher up step faster


@pytest.mark.parametrize("shared", [False, True], ids=["alone", "sharing_work"])
def test_frame_spans_analyse_bit_identical_to_the_whole_signal(music, shared):
    """Each span transforms its block's own slices (within sharing_work, blocks of one parity
    reuse the slice spectra computed for another, views of them for spans inside); on the CPU
    every span equals the whole analysis."""
    transform = NSGT(NSGTSettings(scale="mel"), RATE)  # 23 slices: several chunks per parity
    blocks = transform.analyse(music)
    rng = np.random.default_rng(2)
    with transform.sharing_work() if shared else contextlib.nullcontext():
        for _ in range(3):
            for block, coefficients in enumerate(blocks):
                total = coefficients.shape[-1]
                frame0 = int(rng.integers(0, total - 1))
                frame1 = int(rng.integers(frame0 + 1, total + 1))
                part = transform.analyse_frames(music, block, frame0, frame1)
                assert torch.equal(part, coefficients[:, :, frame0:frame1])
        if shared:
            assert len(transform._local.shared) > 2  # it did share


def test_pieces_of_every_block_analyse_from_a_span_as_the_whole_signal(music):
    """One rfft per parity over the union of the pieces' slices gives each block's frames bit for
    bit as the whole analysis, from the samples the pieces read only."""
    transform = NSGT(NSGTSettings(scale="mel"), RATE)
    n = music.shape[-1]
    blocks = transform.analyse(music)
    start, stop = 3 * RATE, 4 * RATE
    pieces = []
    for block in range(len(blocks)):
        lo, hi = transform.frames_over(block, start, stop, n)
        pieces.append((block, lo + block % 3, hi - block % 2))  # ranges differ between blocks
    read = [transform.samples_read(block, lo, hi, n) for block, lo, hi in pieces]
    a, b = min(r[0] for r in read), max(r[1] for r in read)
    analysed = transform.analyse_pieces(music[:, a:b], a, pieces, n)
    for (block, lo, hi), part in zip(pieces, analysed, strict=True):
        assert torch.equal(part, blocks[block][:, :, lo:hi])
        assert torch.equal(transform.analyse_span(music[:, a:b], a, block, lo, hi, n), part)
    with pytest.raises(ValueError, match="outside the span"):
        transform.analyse_pieces(music[:, a + 1 : b], a + 1, pieces, n)


@pytest.mark.parametrize("workers", [2, 3])
def test_analysis_on_threads_is_bit_identical_to_one_thread(music, monkeypatch, workers):
    transform = NSGT(NSGTSettings(scale="mel"), RATE)  # 23 slices: 3 chunks
    monkeypatch.setattr(fft_ops, "cpu_workers", lambda device: 1)
    seen_one: list[float] = []
    one = transform.analyse_polar(music, progress=seen_one.append)
    monkeypatch.setattr(fft_ops, "cpu_workers", lambda device: workers)
    seen: list[float] = []
    threaded = transform.analyse_polar(music, progress=seen.append)
    for (magnitude, phase), (magnitude_t, phase_t) in zip(one, threaded, strict=True):
        assert torch.equal(magnitude, magnitude_t) and torch.equal(phase, phase_t)
    assert seen == seen_one == sorted(seen) and len(seen) == 3 and seen[-1] == 1.0


def test_analysis_on_threads_stops_when_progress_cancels(music, monkeypatch):
    transform = NSGT(NSGTSettings(scale="mel"), RATE)
    monkeypatch.setattr(fft_ops, "cpu_workers", lambda device: 2)
    seen: list[float] = []

    def progress(done: float) -> bool:
        seen.append(done)
        return len(seen) < 2

    with pytest.raises(Cancelled):
        transform.analyse_polar(music, progress=progress)
    assert len(seen) == 2 and seen[-1] < 1.0


def test_frame_spans_invert_alone_and_sum_to_the_whole_inverse(music):
    transform = NSGT(NSGTSettings(bins_per_octave=24), RATE)
    n = music.shape[-1]
    blocks = transform.analyse(music)
    whole = transform.synthesise(blocks, n)
    total = torch.zeros_like(whole)
    for block, coefficients in enumerate(blocks):
        frames = coefficients.shape[-1]
        for frame0, frame1 in ((0, frames // 3), (frames // 3, frames)):
            start, part = transform.synthesise_frames(
                coefficients[:, :, frame0:frame1], block, frame0, n
            )
            reach = transform.samples_reached(block, frame0, frame1, n)
            assert start == reach[0] and start + part.shape[-1] == reach[1]
            total[:, start : start + part.shape[-1]] += part
    assert snr_db(total.double().numpy(), whole.double().numpy()) > 120


def test_an_edit_reaches_only_its_own_slices():
    """The inverse of one edited frame is nonzero only inside the samples it reaches, and those
    are one slice long whatever the file's length."""
    transform = NSGT(NSGTSettings(), RATE)
    for seconds in (30, 120):
        n = seconds * RATE
        block = 6
        frames = transform.layout(n)[block].n_frames
        frame = frames // 2
        start, stop = transform.samples_reached(block, frame, frame + 1, n)
        assert stop - start == transform.slice_length
        lo, hi = transform.frames_over(block, start, stop, n)
        assert lo <= frame < hi and hi - lo == transform.design.groups[3].m
        coefficients = torch.zeros((1, transform.layout(n)[block].n_bins, 1), dtype=torch.complex64)
        coefficients[0, 3, 0] = 1.0
        first, samples = transform.synthesise_frames(coefficients, block, frame, n)
        assert (first, first + samples.shape[-1]) == (start, stop)
        assert samples.abs().max() > 0


def two_tone_rows(transform: NSGT, signal: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Band centres and time-averaged magnitude (pair sums) of the lowest scale bands."""
    blocks = transform.analyse(torch.from_numpy(signal[None]))
    layout = transform.layout(signal.size)
    block = 2  # the group above the DC band, even slices; the odd ones hold the other half
    m = transform.design.groups[1].m
    even, odd = blocks[block][0], blocks[block + 1][0]
    summed = even[:, m // 2 : m // 2 + odd.shape[-1]] + odd[:, : even.shape[-1] - m // 2]
    middle = summed[:, summed.shape[-1] // 4 : 3 * summed.shape[-1] // 4]
    return layout[block].band_hz, middle.abs().mean(dim=-1).numpy()


def test_two_tones_a_semitone_apart_at_55_hz_are_two_rows_with_a_20_db_dip():
    transform = NSGT(NSGTSettings(bins_per_octave=48), RATE)
    t = np.arange(20 * RATE) / RATE
    signal = 0.3 * np.sin(2 * np.pi * 55.0 * t) + 0.3 * np.sin(2 * np.pi * 58.27 * t)
    hz, level = two_tone_rows(transform, signal)
    db = 20 * np.log10(level / 0.3 + 1e-12)  # re each tone's own amplitude
    low, high = np.argmin(abs(hz - 55.0)), np.argmin(abs(hz - 58.27))
    assert high - low == 4  # 48 bins per octave: four rows a semitone
    dip = db[low : high + 1].min()
    assert db[low] - dip >= 20 and db[high] - dip >= 20
    assert abs(db[low]) < 1.5 and abs(db[high]) < 1.5


@pytest.mark.parametrize(
    "values, message",
    [
        ({"scale": "erb"}, "scale must be one of log, mel, bark"),
        ({"bins_per_octave": 8}, "bins per octave must be an integer from 12 to 96"),
        ({"bins_per_octave": 48.0}, "bins per octave must be an integer"),
        ({"fmin": 0.0}, "fmin must be from 1 to 20000 Hz"),
        ({"fmin": 100.0, "fmax": 150.0}, "fmax must be at least an octave above fmin"),
    ],
)
def test_bad_settings_are_refused_with_the_reason(values, message):
    with pytest.raises(SettingsError, match=message):
        NSGTSettings(**values)


def test_an_fmax_at_the_sample_rates_limit_is_refused_naming_what_fits():
    with pytest.raises(SettingsError, match=r"fmax 22000 Hz leaves no room .* at most 21733 Hz"):
        frame_design(NSGTSettings(fmax=22000.0), RATE)


def test_resynthesis_pieces_are_the_slices_grid_and_the_stft_s_a_fixed_length():
    nsgt = NSGT(NSGTSettings(), RATE)
    length = nsgt.slice_length
    start, stop = 3 * length // 2 + 5, 5 * length - 7
    pieces = nsgt.resynthesis_pieces(start, stop)
    assert pieces == [
        (start, 2 * length),
        (2 * length, 3 * length),
        (3 * length, 4 * length),
        (4 * length, stop),
    ]
    design = nsgt.design
    for a, b in pieces:  # a piece overlaps 3 slices at most: one inside it, one at each end
        overlapping = [
            s for s in range(8) if design.slice_start(s) < b and design.slice_start(s) + length > a
        ]
        assert len(overlapping) <= 3
    stft = STFT(STFTSettings(), device="cpu")
    assert stft.resynthesis_pieces(10, 10 + 2 * RESYNTHESIS_PIECE + 1) == [
        (10, 10 + RESYNTHESIS_PIECE),
        (10 + RESYNTHESIS_PIECE, 10 + 2 * RESYNTHESIS_PIECE),
        (10 + 2 * RESYNTHESIS_PIECE, 11 + 2 * RESYNTHESIS_PIECE),
    ]
    assert nsgt.resynthesis_pieces(100, 100) == [] == stft.resynthesis_pieces(7, 3)


@pytest.mark.parametrize("name", ["log", "mel"])
def test_columns_outside_a_window_weigh_nothing_and_no_bin_takes_many(name):
    """The synthesis adds each group's rows into a slice's spectrum (``index_add_``). The columns
    beyond a band's window weigh 0 and go to bins of their own, so that no bin takes many
    additions: on a GPU those to one bin wait on each other (the layout that put them all on bin 0
    gave it 10^5 of them, and the synthesis three times its time)."""
    design = frame_design(NSGTSettings(name, bins_per_octave=48, fmin=32.7), RATE)
    outside = 0
    for group in design.groups:
        unweighted = (group.analysis == 0) & (group.synthesis == 0)
        outside += np.count_nonzero(unweighted)
        additions = np.bincount(group.index.ravel(), minlength=design.slice_length // 2 + 1)
        assert additions.max() <= 4, (group.m, additions.max())
    assert outside > 0.2 * sum(group.index.size for group in design.groups)
