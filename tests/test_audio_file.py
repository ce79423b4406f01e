"""Reading and writing audio files: exact round trips, clipping reports, and every bad input."""

from __future__ import annotations

import json
import struct
import threading

import numpy as np
import pytest
import soundfile as sf
from bad_audio import (
    DROP_PRIVILEGES,
    make_bad_files,
    make_damaged_files,
    make_unreadable_file,
    run_python,
    shared_folder,
    wav_bytes,
)

from spectropaint.transforms.errors import AudioFileError, SettingsError
from spectropaint.transforms.files.audio_file import (
    AudioFormat,
    default_export_subtype,
    load_audio,
    write_audio,
)

FRAMES = 40_000  # more than one read/write block (2**15 frames)
INTEGER_BITS = {"PCM_U8": 8, "PCM_S8": 8, "PCM_16": 16, "PCM_24": 24, "PCM_32": 32}

# Every subtype the export must reproduce, each at one of the tested rates and channel counts
# (all three rates and all three channel counts occur, FLAC's limit being 8 channels).
ROUND_TRIPS = [
    ("WAV", "PCM_U8", 8000, 1),
    ("WAV", "PCM_16", 44100, 2),
    ("WAV", "PCM_24", 192000, 8),
    ("WAV", "PCM_32", 44100, 1),
    ("WAV", "FLOAT", 192000, 2),
    ("WAV", "DOUBLE", 8000, 8),
    ("WAV", "ULAW", 8000, 1),
    ("FLAC", "PCM_16", 192000, 1),
    ("FLAC", "PCM_24", 8000, 8),
    ("AIFF", "PCM_16", 44100, 2),
]


def _random_source(path, file_format, subtype, rate, channels, rng) -> np.ndarray:
    """Write random audio with soundfile itself; return what the file holds, as read back.

    Integer subtypes get random integers of their own depth (both extremes included) handed over
    left-justified; FLOAT gets float32 values up to ±2 (over full scale); DOUBLE full float64.
    """
    bits = INTEGER_BITS.get(subtype, 16 if subtype == "ULAW" else None)
    if bits is not None:
        values = rng.integers(-(2 ** (bits - 1)), 2 ** (bits - 1), (FRAMES, channels))
        values[0], values[1] = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
        data = (values << (32 - bits)).astype(np.int32)
    elif subtype == "FLOAT":
        data = rng.uniform(-2, 2, (FRAMES, channels)).astype(np.float32)
    else:
        data = rng.standard_normal((FRAMES, channels))
    sf.write(path, data, rate, format=file_format, subtype=subtype)
    return _file_values(path)


def _file_values(path) -> np.ndarray:
    """The audio data of a file as stored: int32 for integer encodings, else float64."""
    subtype = sf.info(str(path)).subtype
    dtype = "float64" if subtype in ("FLOAT", "DOUBLE") else "int32"
    return sf.read(str(path), dtype=dtype, always_2d=True)[0]


@pytest.mark.parametrize(("file_format", "subtype", "rate", "channels"), ROUND_TRIPS)
def test_unedited_export_is_bit_identical(tmp_path, file_format, subtype, rate, channels):
    rng = np.random.default_rng(len(subtype) * rate + channels)
    source = tmp_path / f"source.{file_format.lower()}"
    stored = _random_source(source, file_format, subtype, rate, channels, rng)

    audio = load_audio(source)
    assert audio.format == AudioFormat(file_format, subtype, rate, channels)
    assert audio.samples.dtype == np.float64
    assert audio.samples.shape == (channels, FRAMES)
    expected = stored.T * 2.0**-31 if stored.dtype == np.int32 else stored.T
    assert np.array_equal(audio.samples, expected)

    copy = tmp_path / f"copy.{file_format.lower()}"
    report = write_audio(copy, audio.samples, rate, format=file_format, subtype=subtype)
    assert report.clipped_samples == 0
    assert (report.frames, report.channels, report.sample_rate) == (FRAMES, channels, rate)
    written = _file_values(copy)
    assert written.dtype == stored.dtype
    assert np.array_equal(written, stored)


def test_audio_data_properties(tmp_path):
    path = tmp_path / "a.wav"
    sf.write(path, np.zeros((22050, 3)), 44100, subtype="PCM_16")
    audio = load_audio(path)
    assert (audio.n_channels, audio.n_frames, audio.sample_rate) == (3, 22050, 44100)
    assert audio.duration == pytest.approx(0.5)
    assert audio.path == str(path)


@pytest.mark.parametrize(
    ("file_format", "subtype", "rate", "channels"),
    [("OGG", "VORBIS", 44100, 2), ("MP3", "MPEG_LAYER_III", 48000, 1)],
)
def test_lossy_formats_write_and_load(tmp_path, file_format, subtype, rate, channels):
    seconds = 1.0
    t = np.arange(int(seconds * rate)) / rate
    tone = 0.5 * np.sin(2 * np.pi * 440 * t) * np.ones((channels, 1))
    path = tmp_path / f"tone.{file_format.lower()}"
    report = write_audio(path, tone, rate, format=file_format, subtype=subtype)
    assert (report.format, report.subtype) == (file_format, subtype)

    audio = load_audio(path)
    assert audio.format.sample_rate == rate
    assert audio.format.channels == channels
    assert audio.format.subtype == subtype
    assert abs(audio.n_frames - tone.shape[1]) <= 2 * 1152  # codec padding, at most two frames
    # same tone back: the 440 Hz bin dominates, 0.5 amplitude within 1 dB
    spectrum = np.abs(np.fft.rfft(audio.samples[0, : rate // 2]))
    assert np.argmax(spectrum) == pytest.approx(440 * (rate // 2) / rate, abs=1)
    rms = np.sqrt(np.mean(audio.samples[:, rate // 4 : rate // 2] ** 2))
    assert 20 * np.log10(rms / (0.5 / np.sqrt(2))) == pytest.approx(0, abs=1)

    assert default_export_subtype(audio.format, "WAV") == "FLOAT"
    assert default_export_subtype(audio.format, "FLAC") == "PCM_24"


def test_pcm16_clipping_is_counted_and_saturates(tmp_path):
    samples = np.random.default_rng(7).uniform(-0.9, 0.9, (2, 1000))
    samples[0, 10:15] = 1.5  # 5 above
    samples[1, 100:102] = -1.5  # 2 below
    samples[0, 20] = 1.0  # 32768 does not fit in 16 bits: clipped to 32767
    samples[0, 21] = -1.0  # -32768 fits
    path = tmp_path / "loud.wav"
    report = write_audio(path, samples, 8000, format="WAV", subtype="PCM_16")

    assert report.clipped_samples == 8
    assert report.peak == 1.5
    stored = sf.read(path, dtype="int16", always_2d=True)[0]
    assert np.all(stored[10:15, 0] == 32767)
    assert np.all(stored[100:102, 1] == -32768)
    assert tuple(stored[20:22, 0]) == (32767, -32768)
    assert "8 samples clipped (peak +3.5 dBFS)" in report.message  # 20 log10 1.5 = 3.52


def test_message_describes_the_file(tmp_path):
    path = tmp_path / "x.wav"
    report = write_audio(path, np.zeros((2, 132300)), 44100, format="WAV", subtype="PCM_16")
    assert report.message == f"wrote '{path}' (WAV PCM_16, 2 ch, 44100 Hz, 3.00 s)"


def test_float_export_keeps_values_above_full_scale(tmp_path):
    samples = np.full((1, 100), 0.25)
    samples[0, 50] = 1.5
    path = tmp_path / "hot.wav"
    report = write_audio(path, samples, 8000, format="WAV", subtype="FLOAT")
    assert report.clipped_samples == 0
    assert report.peak == 1.5
    assert sf.read(path)[0][50] == 1.5
    assert "above full scale" in report.message


def test_write_refuses_non_finite_samples_and_leaves_no_file(tmp_path):
    samples = np.zeros((2, 8000))
    samples[1, 4000] = np.nan
    samples[0, 6000] = -np.inf
    path = tmp_path / "bad.wav"
    with pytest.raises(AudioFileError) as caught:
        write_audio(path, samples, 8000)
    message = str(caught.value)
    assert str(path) in message
    assert "2 samples are NaN or infinite (the first at 0.500 s, channel 2)" in message
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("kwargs", "samples"),
    [
        ({"format": "FLAC", "subtype": "FLOAT"}, np.zeros((1, 10))),  # FLAC holds no floats
        ({"format": "WAV", "subtype": "PCM_16"}, np.zeros(10)),  # not (channels, frames)
        ({"format": "WAV", "subtype": "PCM_16"}, np.zeros((65, 10))),  # too many channels
    ],
)
def test_write_refuses_bad_settings(tmp_path, kwargs, samples):
    with pytest.raises(SettingsError):
        write_audio(tmp_path / "x", samples, 8000, **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_write_reports_what_the_encoder_refuses(tmp_path):
    path = tmp_path / "nine.flac"
    with pytest.raises(AudioFileError) as caught:
        write_audio(path, np.zeros((9, 100)), 44100, format="FLAC", subtype="PCM_16")
    assert "cannot encode 9 ch at 44100 Hz as FLAC PCM_16" in str(caught.value)  # FLAC: 1 to 8
    assert list(tmp_path.iterdir()) == []


def test_write_refuses_zero_sample_rate(tmp_path):
    with pytest.raises(SettingsError):
        write_audio(tmp_path / "x.wav", np.zeros((1, 10)), 0)


def test_write_refuses_empty_audio(tmp_path):
    with pytest.raises(AudioFileError, match="0 frames"):
        write_audio(tmp_path / "x.wav", np.zeros((1, 0)), 8000)


@pytest.mark.parametrize(
    ("source", "target", "expected"),
    [
        (("WAV", "PCM_16"), "WAV", "PCM_16"),
        (("WAV", "PCM_24"), "FLAC", "PCM_24"),
        (("WAV", "FLOAT"), "FLAC", "PCM_24"),
        (("WAV", "DOUBLE"), "FLAC", "PCM_24"),
        (("WAV", "DOUBLE"), "AIFF", "DOUBLE"),
        (("WAV", "PCM_32"), "FLAC", "PCM_24"),
        (("WAV", "PCM_U8"), "FLAC", "PCM_S8"),
        (("OGG", "VORBIS"), "WAV", "FLOAT"),
        (("OGG", "OPUS"), "FLAC", "PCM_24"),
        (("MP3", "MPEG_LAYER_III"), "AIFF", "FLOAT"),
        (("OGG", "VORBIS"), "OGG", "VORBIS"),
        (("FLAC", "PCM_16"), "OGG", "VORBIS"),
        (("WAV", "PCM_16"), "MP3", "MPEG_LAYER_III"),
    ],
)
def test_default_export_subtype(source, target, expected):
    assert default_export_subtype(AudioFormat(*source, 44100, 2), target) == expected


def test_default_export_subtype_rejects_unknown_format():
    with pytest.raises(SettingsError):
        default_export_subtype(AudioFormat("WAV", "PCM_16", 44100, 2), "MP4")


def test_default_subtype_of_8_bit_wav_exports_to_flac_exactly(tmp_path):
    source = tmp_path / "u8.wav"
    values = np.random.default_rng(3).integers(-128, 128, (4000, 1))
    sf.write(source, (values << 24).astype(np.int32), 8000, subtype="PCM_U8")
    audio = load_audio(source)
    subtype = default_export_subtype(audio.format, "FLAC")
    write_audio(tmp_path / "u8.flac", audio.samples, 8000, format="FLAC", subtype=subtype)
    assert np.array_equal(load_audio(tmp_path / "u8.flac").samples, audio.samples)


# --- bad input ------------------------------------------------------------------------------------

BAD_CASES = [
    "empty",
    "text_named_wav",
    "random_bytes_flac",
    "random_bytes_after_mpeg_sync",
    "folder",
    "missing",
    "missing_folder",
    "named_pipe",
    "device",
    "no_audio",
    "sample_rate_zero",
    "zero_channels",
    "channels_65535",
    "unknown_encoding",
    "rf64_ds64_cut",
    "aiff_rate_overflows",
    "aiff_rate_nan",
    "too_large",
]
DAMAGED_CASES = [
    "truncated_wav",
    "truncated_aiff",
    "truncated_rf64",
    "truncated_flac",
    "truncated_ogg",
    "ogg_without_last_page",
    "ogg_bad_checksum",
    "ogg_zeroed_bytes",
    "nan_in_float",
    "double_1e300",
    "float_at_flt_max",
]


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory):
    return make_bad_files(tmp_path_factory.mktemp("bad"))


def test_every_corpus_case_is_tested(bad_files):
    assert sorted(bad_files) == sorted(BAD_CASES)


def _load_in_thread(path) -> BaseException | None:
    """Load in a daemon thread so that a file that blocks (a FIFO) fails the test, not hangs it."""
    outcome: list[BaseException | None] = []

    def load() -> None:
        try:
            load_audio(path)
            outcome.append(None)
        except BaseException as err:  # handed to the test
            outcome.append(err)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(timeout=20)
    assert outcome, f"load_audio({path}) did not return"
    return outcome[0]


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_file_gives_one_specific_error(bad_files, case, capfd):
    path, expected = bad_files[case]
    error = _load_in_thread(path)
    assert isinstance(error, AudioFileError), f"{case}: got {error!r}"
    assert error.path == str(path)
    assert str(path) in str(error)
    assert expected in error.reason
    assert capfd.readouterr().err == ""  # no decoder (libmpg123) writes its own lines


@pytest.fixture(scope="module")
def damaged_files(tmp_path_factory):
    return make_damaged_files(tmp_path_factory.mktemp("damaged"))


def test_every_damaged_case_is_tested(damaged_files):
    assert sorted(damaged_files) == sorted(DAMAGED_CASES)


@pytest.mark.parametrize("case", DAMAGED_CASES)
def test_damaged_file_opens_with_what_it_holds_and_one_warning(damaged_files, case, capfd):
    damaged = damaged_files[case]
    audio = load_audio(damaged.path)
    (warning,) = audio.warnings
    assert damaged.warning in warning
    frames = audio.n_frames
    assert 0 < frames <= (damaged.total or frames)
    if damaged.total is not None:  # what is missing is said in seconds (or that it is unknown)
        missing = (damaged.total - frames) / audio.sample_rate
        assert f"{missing:.3f} s missing" in warning or warning.endswith("the rest is missing")
    if damaged.expected is not None:  # the usable part is exactly the audio the file held
        assert np.array_equal(audio.samples, damaged.expected[:, :frames])
    assert np.isfinite(audio.samples).all() and np.abs(audio.samples).max() <= 1e6
    assert capfd.readouterr().err == ""


def test_damaged_mp3_opens_with_the_decoders_notes_as_a_warning(tmp_path, capfd):
    """libmpg123 writes notes on bad frames to standard error: they become one warning."""
    rate = 48000
    tone = 0.5 * np.sin(2 * np.pi * 440 * np.arange(3 * rate) / rate)[None]
    path = tmp_path / "tone.mp3"
    write_audio(path, tone, rate, format="MP3", subtype="MPEG_LAYER_III")
    content = bytearray(path.read_bytes())
    content[len(content) // 2 : len(content) // 2 + 500] = bytes(500)
    path.write_bytes(bytes(content))
    audio = load_audio(path)
    assert any(
        "the decoder reported damage: Illegal Audio-MPEG-Header" in w for w in audio.warnings
    )
    assert capfd.readouterr().err == ""


def test_memory_budget_refuses_before_reading(tmp_path):
    path = tmp_path / "second.wav"
    sf.write(path, np.zeros((44100, 2)), 44100, subtype="PCM_16")
    need = 44100 * 2 * 8  # float64 samples: 705,600 bytes
    with pytest.raises(AudioFileError, match=r"would need 705\.6 kB, 700\.0 kB available"):
        load_audio(path, max_bytes=700_000)
    assert load_audio(path, max_bytes=need).n_frames == 44100


@pytest.mark.parametrize("rate", [7, 384000])
def test_any_positive_sample_rate_loads(tmp_path, rate):
    path = tmp_path / "odd_rate.wav"
    sf.write(path, np.zeros((50, 1)), rate, subtype="PCM_16")
    assert load_audio(path).sample_rate == rate


@pytest.mark.parametrize(("channels", "refused"), [(64, False), (65, True)])
def test_channel_limit(tmp_path, channels, refused):
    path = tmp_path / "many.wav"
    sf.write(path, np.zeros((10, channels)), 8000, subtype="PCM_16")
    if refused:
        with pytest.raises(AudioFileError, match="absurd header: 65 channels"):
            load_audio(path)
    else:
        assert load_audio(path).n_channels == 64


def test_wav_chunks_with_odd_sizes_are_walked(tmp_path):
    """A padded odd-sized chunk before the data: intact loads, cut reports the true sizes."""
    pcm = np.arange(-50, 50, dtype="<i2").tobytes()  # 100 mono frames
    whole = wav_bytes(pcm, channels=1, sample_rate=8000)
    listed = whole[:36] + b"LIST" + struct.pack("<I", 3) + b"abc\0" + whole[36:]
    listed = listed[:4] + struct.pack("<I", len(listed) - 8) + listed[8:]
    intact = tmp_path / "listed.wav"
    intact.write_bytes(listed)
    assert np.array_equal(load_audio(intact).samples[0], np.arange(-50, 50) / 32768)

    cut = tmp_path / "listed_cut.wav"
    cut.write_bytes(listed[:-60])
    (warning,) = load_audio(cut).warnings
    assert "declares 200 bytes of audio data, file holds 140" in warning


def test_rf64_file_loads(tmp_path):
    path = tmp_path / "long.wav"
    samples = np.random.default_rng(4).uniform(-1, 1, (2, 5000))
    write_audio(path, samples, 48000, format="RF64", subtype="FLOAT")
    audio = load_audio(path)
    assert audio.format.format == "RF64"
    assert np.array_equal(audio.samples, samples.astype(np.float32))


_LOAD_AND_REPORT = f"""
import json, sys
from spectropaint.transforms.files.audio_file import load_audio
from spectropaint.transforms.errors import AudioFileError
{DROP_PRIVILEGES}
results = {{}}
for path in sys.argv[1:]:
    try:
        results[path] = f"loaded {{load_audio(path).n_frames}} frames"
    except AudioFileError as err:
        results[path] = str(err)
print(json.dumps(results))
"""


def test_unreadable_file_is_refused():
    """Run as a user the permissions apply to (root would read a mode-000 file regardless).

    The same child loads a readable twin in the same folder, so the refusal can only come from the
    file's own permissions.
    """
    with shared_folder() as folder:
        locked, expected = make_unreadable_file(folder)
        twin = folder / "twin.wav"
        sf.write(twin, np.zeros(800), 8000, subtype="PCM_16")
        twin.chmod(0o644)
        child = run_python(_LOAD_AND_REPORT, str(locked), str(twin))
    assert child.returncode == 0, child.stderr
    results = json.loads(child.stdout)
    assert results[str(twin)] == "loaded 800 frames"
    assert results[str(locked)] == f"cannot open '{locked}': {expected}"
