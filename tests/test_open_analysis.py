"""``spectropaint --transform nsgt ...``: the window opens sounds (and the demo sound) in the analysis
the command line names; bad settings are refused with the reason before any window."""

from __future__ import annotations

import pytest
from gui_fixtures import open_window, write_test_sound

from spectropaint.app import gui_main
from spectropaint.app.cli import main
from spectropaint.transforms.files import coarse_read
from spectropaint.transforms.nsgt_design import NSGTSettings
from spectropaint.transforms.stft import STFTSettings

NSGT = NSGTSettings(scale="mel", bins_per_octave=24, fmin=55.0)
NSGT_ARGS = ["--transform", "nsgt", "--scale", "mel", "--bins-per-octave", "24", "--fmin", "55"]


@pytest.fixture
def launched(monkeypatch):
    """What ``main`` asked ``run_gui`` for (the window is not opened)."""
    calls = []
    monkeypatch.setattr(gui_main, "run_gui", lambda path, **options: calls.append((path, options)))
    return calls


def test_the_command_line_names_the_analysis_the_window_opens_sounds_in(launched):
    main(["song.wav", *NSGT_ARGS])
    main(["--n-fft", "4096", "--hop", "1024", "song.wav"])
    main([])
    assert [options["analysis"] for _, options in launched] == [
        NSGT,
        STFTSettings(n_fft=4096, hop=1024),
        STFTSettings(),
    ]
    assert [path for path, _ in launched] == ["song.wav", "song.wav", None]


def test_bad_analysis_settings_exit_1_with_the_reason_before_any_window(launched, capsys):
    assert main(["--transform", "nsgt", "--bins-per-octave", "7", "song.wav"]) == 1
    assert "bins per octave must be an integer from 12 to 96" in capsys.readouterr().err
    assert main(["--transform", "nsgt", "--fmin", "100", "--fmax", "150"]) == 1
    assert "fmax must be at least an octave above fmin" in capsys.readouterr().err
    assert launched == []


def loudest_hz(document, channel: int) -> float:
    """The centre of the band that holds ``channel``'s loudest coefficient, over every block."""
    loudest = max(document.blocks, key=lambda block: float(block.magnitude[channel].max()))
    row = int(loudest.magnitude[channel].max(dim=1).values.argmax())
    return float(loudest.band_hz[row])


pytestmark = [
    pytest.mark.gpu,
    pytest.mark.filterwarnings("ignore::DeprecationWarning:rendercanvas"),
]


@pytest.fixture
def previews(monkeypatch):
    """The arguments of every coarse preview read (for any sound long enough: 1 frame a column)."""
    calls = []
    monkeypatch.setattr(coarse_read, "MIN_DECIMATION", 1)
    read = coarse_read.read_coarse
    monkeypatch.setattr(
        coarse_read, "read_coarse", lambda *args, **kw: calls.append(args) or read(*args, **kw)
    )
    return calls


def test_the_window_opens_a_sound_and_the_demo_in_its_analysis_with_no_stft_preview(
    qtbot, tmp_path, previews
):
    path = tmp_path / "tones.wav"
    write_test_sound(path)
    window = open_window(qtbot, tmp_path, path, analysis=NSGT)
    document = window.session.document
    assert document.settings == NSGT and document.transform.name == "nsgt"
    assert abs(loudest_hz(document, 0) / 440.0 - 1) < 0.03  # the tones, a mel band each
    assert abs(loudest_hz(document, 1) / 1320.0 - 1) < 0.03
    assert previews == []  # a preview would be of an STFT the sound is not edited in
    window.open_path(None)
    qtbot.waitUntil(lambda: window.session.document is not document, timeout=60_000)
    assert window.session.document.settings == NSGT


def test_an_stft_named_on_the_command_line_is_also_the_preview_s(qtbot, tmp_path, previews):
    path = tmp_path / "tones.wav"
    write_test_sound(path)
    settings = STFTSettings(n_fft=1024, hop=256)
    window = open_window(qtbot, tmp_path, path, analysis=settings)
    assert window.session.document.settings == settings
    assert [args[2] for args in previews] == [settings]
