"""A picture imported as sound: placed on a rectangle, brightness as level, heard back as the picture."""

import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont
from repair_measures import heard

from spectropaint.brushes.image_import import ImagePlacement, image_levels, plan_image
from spectropaint.brushes.operations import apply_plan, apply_plans
from spectropaint.transforms.document import Document
from spectropaint.transforms.errors import ImageFileError, SettingsError
from spectropaint.transforms.files.image_file import load_image
from spectropaint.transforms.nsgt_design import NSGTSettings
from spectropaint.transforms.sound_analysis import level_picture

RATE = 44100
NSGT = NSGTSettings(bins_per_octave=24, fmin=55.0)


def text_image(path, text="HEAL", size=(400, 120)):
    """Black text on white, drawn with Pillow."""
    image = Image.new("L", size, 255)
    ImageDraw.Draw(image).text((10, 5), text, fill=0, font=ImageFont.load_default(size=90))
    image.save(path)
    return np.asarray(image, dtype=np.float32) / 255


def test_text_analysed_back_from_the_exported_audio_correlates_with_the_picture(tmp_path):
    picture = text_image(tmp_path / "text.png")
    assert np.array_equal(load_image(tmp_path / "text.png"), picture)
    document = Document.from_samples(np.zeros(3 * RATE), RATE, device="cpu")
    placement = ImagePlacement(0.5, 2.5, 500.0, 8000.0, top_db=-50.0, range_db=60.0)
    (plan,) = plan_image(document, picture, placement)
    apply_plan(document, plan)
    out = tmp_path / "out.wav"
    document.export(out)
    back = Document.from_file(out, device="cpu")
    region = plan.region
    level = 20 * np.log10(heard(back, region)[0] / back.full_scale + 1e-9)
    # the picture on the same cells: its brightness at each cell's time and frequency
    expected = image_levels(document, picture, placement, region)
    expected = 20 * np.log10(expected / document.full_scale + 1e-9)
    floor = -50.0 - 60.0
    correlation = np.corrcoef(np.maximum(level, floor).ravel(), np.maximum(expected, floor).ravel())
    assert correlation[0, 1] >= 0.9
    white = expected > -51
    assert abs(np.median(level[white]) - (-50.0)) < 3  # white is heard at its level


def test_rows_follow_the_chosen_frequency_axis():
    stripe = np.zeros((100, 50), dtype=np.float32)
    stripe[49:51] = 1.0  # a white line halfway up
    document = Document.from_samples(np.zeros(2 * RATE), RATE, device="cpu")
    hz = document.blocks[0].band_hz
    for scale, middle in (("linear", 5050.0), ("log", np.sqrt(100.0 * 10000.0))):
        placement = ImagePlacement(0.2, 1.8, 100.0, 10000.0, freq_scale=scale, mode="replace")
        (plan,) = plan_image(document, stripe, placement)
        levels = image_levels(document, stripe, placement, plan.region)
        loudest = hz[plan.region.bin0 + int(np.argmax(levels.mean(axis=1)))]
        assert abs(np.log2(loudest / middle)) < 0.05, scale


def test_replace_clears_the_rectangle_and_add_keeps_what_was_there():
    t = np.arange(2 * RATE) / RATE
    tone = 0.1 * np.sin(2 * np.pi * 3000.0 * t)
    black = np.zeros((10, 10), dtype=np.float32)
    for mode, kept in (("add", True), ("replace", False)):
        document = Document.from_samples(tone, RATE, device="cpu")
        placement = ImagePlacement(0.5, 1.5, 2000.0, 4000.0, mode=mode)
        apply_plans(document, plan_image(document, black, placement), label="image")
        out = document.edited_samples()[0][int(0.8 * RATE) : int(1.2 * RATE)]
        level = np.sqrt(np.mean(out**2)) / (0.1 / np.sqrt(2))
        assert (level > 0.95) if kept else (level < 0.01), mode


def test_bad_pictures_and_placements_are_refused_with_the_reason(tmp_path):
    (tmp_path / "notes.txt").write_text("not a picture")
    with pytest.raises(ImageFileError, match="notes.txt.*not an image"):
        load_image(tmp_path / "notes.txt")
    with pytest.raises(ImageFileError, match="missing.png.*no such file"):
        load_image(tmp_path / "missing.png")
    with pytest.raises(SettingsError, match="t0 < t1"):
        ImagePlacement(2.0, 1.0)
    with pytest.raises(SettingsError, match="mode must be one of"):
        ImagePlacement(mode="blend")


def test_bars_imported_on_an_nsgt_document_are_heard_back_on_every_block(tmp_path):
    """Horizontal bars on a log axis from 200 Hz to 4 kHz cross several NSGT groups of bands: each
    block they reach is written (both slice parities), and the levels of the exported audio
    analysed again (both parities added, on one grid of seconds and Hz) are the bars."""
    picture = np.zeros((60, 200), dtype=np.float32)
    bars = ((6, 12), (26, 32), (46, 52))  # rows from the top
    for top, bottom in bars:
        picture[top:bottom] = 1.0
    document = Document.from_samples(np.zeros(3 * RATE), RATE, settings=NSGT, device="cpu")
    placement = ImagePlacement(
        0.5, 2.5, 200.0, 4000.0, top_db=-40.0, range_db=60.0, freq_scale="log", mode="replace"
    )
    plans = plan_image(document, picture, placement)
    assert len({plan.region.block for plan in plans}) == len(plans) > 6
    apply_plans(document, plans, label="image")
    document.export(tmp_path / "bars.wav")
    back = Document.from_file(tmp_path / "bars.wav", settings=NSGT, device="cpu")
    seen = level_picture(back, 0.7, 2.3)
    rows = (seen.hz > 200.0) & (seen.hz < 4000.0)
    # where each band lies in the picture, from the top (log axis), and whether a bar is there
    y = (1 - np.log(seen.hz[rows] / 200.0) / np.log(4000.0 / 200.0)) * picture.shape[0]
    on_bar = np.any([(y > top) & (y < bottom) for top, bottom in bars], axis=0)
    expected = np.where(on_bar, -40.0, -100.0)[:, None] * np.ones(len(seen.seconds))
    level = np.maximum(seen.level[rows], -100.0)
    assert np.corrcoef(level.ravel(), expected.ravel())[0, 1] >= 0.9
    centre = np.any([(y > top + 1) & (y < bottom - 1) for top, bottom in bars], axis=0)
    assert abs(np.median(level[centre]) - (-40.0)) < 3  # white is heard at its level
