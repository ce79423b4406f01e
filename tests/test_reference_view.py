"""The CQT and VQT reference views (nnAudio): a tone lands in its band; the dock draws it."""

import numpy as np
import pytest

from spectropaint.app.panels.reference_view import HINT, RANGE_DB, STALE, ReferenceView, picture
from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import SettingsError
from spectropaint.transforms.reference import constant_q

RATE = 22050


def tone(hz: float, seconds: float = 2.0) -> np.ndarray:
    return 0.5 * np.sin(2 * np.pi * hz * np.arange(int(seconds * RATE)) / RATE)


@pytest.mark.parametrize("kind", ["CQT", "VQT"])
def test_a_tone_is_loudest_in_its_own_band(kind):
    result = constant_q(tone(440.0), RATE, kind=kind, bins_per_octave=24, fmin=55.0)
    assert result.magnitude.shape[0] == len(result.band_hz)
    loudest = int(np.argmax(result.magnitude[:, result.magnitude.shape[1] // 2]))
    assert abs(result.band_hz[loudest] - 440.0) < 440.0 * (2 ** (1 / 48) - 1)
    assert result.band_hz[-1] < 0.45 * RATE


def test_bad_reference_settings_are_refused():
    with pytest.raises(SettingsError, match="one of CQT, VQT"):
        constant_q(tone(440.0), RATE, kind="STFT")
    with pytest.raises(SettingsError, match="bins per octave"):
        constant_q(tone(440.0), RATE, bins_per_octave=200)


def test_the_picture_puts_low_bands_at_the_bottom_and_spans_the_range():
    result = constant_q(tone(110.0), RATE, bins_per_octave=12, fmin=55.0)
    rgb = picture(result, "grayscale")
    row = len(result.band_hz) - 1 - int(np.argmin(abs(result.band_hz - 110.0)))
    assert rgb[row, rgb.shape[1] // 2, 0] == 255  # the loudest cell: the top colour
    assert rgb[:, :, 0].min() == 0  # RANGE_DB below it: the first colour
    assert RANGE_DB == 80.0


def test_the_dock_analyses_the_documents_edited_audio(qtbot):
    document = Document.from_samples(np.stack([tone(440.0), tone(220.0)]), RATE, device="cpu")
    view = ReferenceView()
    qtbot.addWidget(view)
    assert view.analyse() is None
    view.set_document(document, channel=1)
    view.kind.setCurrentText("VQT")
    result = view.analyse()
    loudest = int(np.argmax(result.magnitude[:, result.magnitude.shape[1] // 2]))
    assert abs(result.band_hz[loudest] - 220.0) < 10.0
    assert not view.image.pixmap().isNull()
    assert "VQT" in view.info.text() and "cpu" in view.info.text()


def test_the_dock_says_when_its_picture_is_of_audio_since_edited_or_replaced(qtbot):
    document = Document.from_samples(np.stack([tone(440.0), tone(220.0)]), RATE, device="cpu")
    view = ReferenceView()
    qtbot.addWidget(view)
    view.audio_changed()  # nothing shown: nothing to say
    assert view.info.text() == HINT
    view.set_document(document)
    view.analyse()
    shown = view.info.text()
    view.audio_changed()
    view.audio_changed()
    assert view.info.text() == shown + STALE
    view.analyse()
    assert view.info.text().startswith("CQT") and not view.info.text().endswith(STALE)
    view.set_document(Document.from_samples(tone(110.0)[None], RATE, device="cpu"))
    assert view.image.pixmap().isNull() and view.info.text() == HINT
