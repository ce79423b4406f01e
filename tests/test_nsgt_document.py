"""NSGT documents: exact export, edits resynthesised over their own slices, projects, memory,
and changing the transform with the edits kept."""

import numpy as np
import pytest
import soundfile as sf
import torch

from spectropaint.transforms.analysis import make_transform
from spectropaint.transforms.document import Document, _near_on_host
from spectropaint.transforms.errors import AudioFileError, SettingsError
from spectropaint.transforms.files.project_file import load_project, save_project
from spectropaint.transforms.memory_budget import document_bytes
from spectropaint.transforms.nsgt_design import NSGTSettings
from spectropaint.transforms.reanalyse import reanalyse
from spectropaint.transforms.regions import Region
from spectropaint.transforms.stft import STFTSettings
from spectropaint.transforms.torch_device import to_host

RATE = 22050
SETTINGS = NSGTSettings(bins_per_octave=24, fmin=55.0)


def tones(seconds: float = 12.0) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    rng = np.random.default_rng(3)
    left = 0.3 * np.sin(2 * np.pi * 440 * t) + 0.1 * np.sin(2 * np.pi * 110 * t)
    right = 0.2 * np.sin(2 * np.pi * 1000 * t) + 0.01 * rng.standard_normal(t.size)
    return np.stack([left, right])


@pytest.fixture
def document():
    return Document.from_samples(tones(), RATE, settings=SETTINGS, device="cpu")


def band_rows(document: Document, hz: float) -> list[tuple[int, int]]:
    """(block, row) of the band nearest ``hz`` in both blocks of its group."""
    for index in range(0, len(document.blocks), 2):
        band = document.blocks[index].band_hz
        row = int(np.argmin(abs(band - hz)))
        if band[0] <= hz <= band[-1] and abs(band[row] - hz) < 0.05 * hz:
            return [(index, row), (index + 1, row)]
    raise AssertionError(f"no band near {hz} Hz")


def erase_band_between(document: Document, hz: float, t0: float, t1: float) -> list[Region]:
    """Zero the band nearest ``hz`` for frames centred in ``[t0, t1)`` s, in both parities."""
    regions = []
    for index, row in band_rows(document, hz):
        seconds = document.blocks[index].frame_seconds
        frames = np.flatnonzero((seconds >= t0) & (seconds < t1))
        region = Region(row, row + 1, int(frames[0]), int(frames[-1]) + 1, (0, 1), index)
        magnitude, phase = document.read(region)
        document.write(region, torch.zeros_like(magnitude), phase)
        regions.append(region)
    return regions


def level_db(samples: np.ndarray, hz: float, t0: float, t1: float) -> float:
    """Level of the ``hz`` component in ``[t0, t1)`` s, dB re amplitude 1 (a windowed DFT)."""
    part = samples[int(t0 * RATE) : int(t1 * RATE)]
    t = np.arange(part.size) / RATE
    window = np.hanning(part.size)
    amplitude = 2 * abs(np.sum(part * window * np.exp(-2j * np.pi * hz * t))) / window.sum()
    return 20 * np.log10(amplitude + 1e-12)


def test_an_unedited_nsgt_document_exports_bit_identical(document, tmp_path):
    source = tmp_path / "source.wav"
    sf.write(source, tones().T, RATE, subtype="PCM_24")
    opened = Document.from_file(source, settings=SETTINGS, device="cpu")
    opened.export(tmp_path / "copy.wav")
    original, _ = sf.read(source, dtype="int32")
    copy, _ = sf.read(tmp_path / "copy.wav", dtype="int32")
    assert np.array_equal(original, copy)


def test_an_erased_band_leaves_the_output_silent_there_and_everything_else_exact(document):
    regions = erase_band_between(document, 440.0, 4.0, 6.0)
    out = document.edited_samples()
    original = document.audio.samples
    inside = level_db(out[0], 440.0, 4.6, 5.4) - level_db(original[0], 440.0, 4.6, 5.4)
    assert inside < -30
    assert abs(level_db(out[0], 110.0, 4.6, 5.4) - level_db(original[0], 110.0, 4.6, 5.4)) < 0.5
    assert abs(level_db(out[0], 440.0, 0.5, 1.5) - level_db(original[0], 440.0, 0.5, 1.5)) < 0.1
    reach = [document.samples_of(region) for region in regions]
    start, stop = min(r[0] for r in reach), max(r[1] for r in reach)
    assert np.array_equal(out[:, :start], original[:, :start])
    assert np.array_equal(out[:, stop:], original[:, stop:])
    assert stop - start < 3 * document.transform.slice_length


def test_edited_between_agrees_with_the_whole_export(document):
    erase_band_between(document, 1000.0, 3.0, 3.5)
    whole = document.edited_samples()
    ((start, stop),) = document.edited_sample_spans()
    middle = (start + stop) // 2
    assert np.allclose(document.edited_between(start, middle), whole[:, start:middle], atol=1e-9)


def test_a_project_of_an_nsgt_document_reloads_bit_for_bit(document, tmp_path):
    erase_band_between(document, 440.0, 2.0, 3.0)
    save_project(document, tmp_path / "song.spp")
    loaded = load_project(tmp_path / "song.spp", device="cpu").document
    assert loaded.settings == SETTINGS and loaded.transform.name == "nsgt"
    for ours, theirs in zip(document.blocks, loaded.blocks, strict=True):
        assert torch.equal(ours.magnitude, theirs.magnitude)
        assert torch.equal(ours.phase, theirs.phase)
        assert np.array_equal(ours.edited_frames, theirs.edited_frames)
    assert np.array_equal(document.edited_samples(), loaded.edited_samples())


def test_the_memory_budget_states_the_nsgt_documents_tensors_exactly(document):
    need = document_bytes(document.n_samples, 2, SETTINGS, sample_rate=RATE)
    held = sum(b.magnitude.nbytes + b.phase.nbytes for b in document.blocks)
    assert need.part("spectrogram") == held
    assert need.part("audio") == document.audio.samples.nbytes
    assert need.part("analysis") > 0


def test_settings_that_do_not_fit_the_files_rate_are_refused_naming_the_file(tmp_path):
    path = tmp_path / "low.wav"
    sf.write(path, tones(1.0).T, 8000)
    with pytest.raises(AudioFileError, match=r"low.wav.*fmax 10000 Hz leaves no room"):
        Document.from_file(path, settings=NSGTSettings(fmax=10000.0))
    with pytest.raises(SettingsError, match="fmax 10000 Hz"):
        Document.from_samples(tones(1.0), 8000, settings=NSGTSettings(fmax=10000.0))


@pytest.mark.parametrize(
    "first, second",
    [(STFTSettings(), SETTINGS), (SETTINGS, STFTSettings(n_fft=1024, hop=256))],
    ids=["stft-to-nsgt", "nsgt-to-stft"],
)
def test_changing_the_transform_keeps_the_edits_and_the_original(first, second):
    before = Document.from_samples(tones(), RATE, settings=first, device="cpu")
    if isinstance(first, NSGTSettings):
        erase_band_between(before, 440.0, 4.0, 6.0)
    else:
        block = before.blocks[0]
        row = int(np.argmin(abs(block.band_hz - 440.0)))
        frames = np.flatnonzero((block.frame_seconds >= 4.0) & (block.frame_seconds < 6.0))
        region = Region(row - 2, row + 3, int(frames[0]), int(frames[-1]) + 1, (0, 1))
        magnitude, phase = before.read(region)
        before.write(region, torch.zeros_like(magnitude), phase)
    wanted = before.edited_samples()
    after = reanalyse(before, second)
    assert after.settings == second and after.audio is before.audio and after.is_edited
    got = after.edited_samples()
    error = np.linalg.norm(got - wanted) / np.linalg.norm(wanted)
    assert 20 * np.log10(error) < -100
    ((start, stop),) = before.edited_sample_spans()
    ((start2, stop2),) = after.edited_sample_spans()
    assert np.array_equal(
        got[:, : min(start, start2)], before.audio.samples[:, : min(start, start2)]
    )
    assert np.array_equal(got[:, max(stop, stop2) :], before.audio.samples[:, max(stop, stop2) :])


def test_changing_the_transform_of_an_unedited_document_leaves_it_unedited(document):
    after = reanalyse(document, STFTSettings())
    assert not after.is_edited
    assert after.edited_samples() is document.audio.samples
    transform = make_transform(STFTSettings(), RATE)
    assert after.blocks[0].n_frames == transform.layout(document.n_samples, RATE)[0].n_frames


def test_the_level_under_the_pointer_is_the_tones_on_either_transform():
    for settings in (STFTSettings(), SETTINGS):
        document = Document.from_samples(tones(), RATE, settings=settings, device="cpu")
        level = document.magnitude_at(5.0, 440.0).values()
        reference = document.transform.full_scale if settings is SETTINGS else 1024.0 / 2
        db = 20 * np.log10(level / reference)
        assert abs(db[0] - 20 * np.log10(0.3)) < 1.5, settings  # the left channel's 440 Hz tone
        assert db[1] < -40  # the right channel has no 440 Hz
        assert document.magnitude_at(-50.0, 440.0) is None


def test_resyntheses_on_two_threads_at_once_agree(document):
    """Playback resynthesis and an export may run together: their shared work is per thread."""
    import threading

    erase_band_between(document, 440.0, 4.0, 6.0)
    expected = document.edited_samples()
    results, errors = [], []

    def export():
        try:
            for _ in range(3):
                results.append(document.edited_samples())
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=export) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(results) == 9 and all(np.array_equal(r, expected) for r in results)


def pcm24(samples: np.ndarray) -> np.ndarray:
    """``samples`` as a 24-bit file would give them back."""
    return np.round(samples * 2**23) / 2**23


def test_an_edit_added_to_the_device_samples_is_the_hosts_sum_bit_for_bit():
    """On CUDA the document adds an edit's samples to its float32 copy of the original when that
    copy is exact; the sum must be the host's (original plus the edit in float64), whatever the
    edit's extent against the span asked for."""
    document = Document.from_samples(pcm24(tones()), RATE, settings=SETTINGS, device="cpu")
    before = document.audio.samples.copy()
    rng = np.random.default_rng(5)
    for s0, length, start, stop in ((1000, 5000, 2000, 9000), (3000, 2000, 1000, 8000)):
        contribution = torch.from_numpy(rng.standard_normal((2, length)).astype(np.float32))
        summed = document._added_on_device(start, stop, s0, contribution).numpy()
        expected = document.audio.samples[:, start:stop].copy()
        a, near = _near_on_host(s0, contribution, start, stop)
        expected[:, a : a + near.shape[-1]] += near
        assert summed.dtype == np.float64 and np.array_equal(summed, expected)
    assert np.array_equal(document.audio.samples, before)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("source", ["24-bit", "float64"])
def test_on_cuda_an_edit_is_added_on_the_device_only_where_its_samples_are_exact(
    source, monkeypatch
):
    samples = pcm24(tones()) if source == "24-bit" else tones()
    document = Document.from_samples(samples, RATE, settings=SETTINGS, device="cuda")
    erase_band_between(document, 440.0, 3.0, 5.0)
    ((start, stop),) = document.edited_sample_spans()
    exact = source == "24-bit"
    assert document._samples_exact() == exact
    found = document._edit_synthesis(start, stop)
    summed = document._added_on_device(start, stop, *found)
    on_device = to_host(summed)
    a, near = _near_on_host(*found, start, stop)
    on_host = samples[:, start:stop].copy()
    on_host[:, a : a + near.shape[-1]] += near
    assert np.array_equal(on_device, on_host) == exact  # float32 samples of float64 audio differ
    added = []
    monkeypatch.setattr(document, "_added_on_device", lambda *args: added.append(args) or summed)
    ours = document.edited_between(start, stop)
    assert len(added) == exact
    assert np.allclose(ours, on_host, rtol=0, atol=1e-6)  # the GPU's sums vary in order
    assert np.abs(ours - samples[:, start:stop]).max() > 0.1  # the 440 Hz tone is erased
