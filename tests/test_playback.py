"""PlaybackEngine (the callback's copying, A/B, loops, tear-free updates, a real PortAudio stream)
and the Resynthesizer that keeps it equal to the edited document."""

from __future__ import annotations

import logging
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest
from gui_fixtures import JACK_RATE, jack_server  # noqa: F401 - fixture

from spectropaint.app.playback.engine import OutputDevice, PlaybackEngine, find_output_device
from spectropaint.app.playback.resynthesis import Resynthesizer, merge_spans
from spectropaint.transforms.document import Document
from spectropaint.transforms.nsgt_design import NSGTSettings
from spectropaint.transforms.regions import Region
from spectropaint.transforms.stft import STFTSettings
from spectropaint.transforms.transform import RESYNTHESIS_PIECE

NO_DEVICE = OutputDevice(None, "", 0, "no audio output device (test)")
STEREO = OutputDevice(0, "test device", 2)
OK = SimpleNamespace(output_underflow=False)


def ramp(channels: int = 2, n: int = 1000) -> np.ndarray:
    """A signal whose every sample says where it is: channel c, sample i holds (i + 1000 c) / 1e5."""
    return (np.arange(n)[None, :] + 1000 * np.arange(channels)[:, None]) / 1e5


def pull(engine: PlaybackEngine, frames: int, channels: int = 2) -> np.ndarray:
    """Run the callback once as PortAudio would and return the block ``[frames, channels]``."""
    out = np.full((frames, channels), np.nan, dtype=np.float32)
    engine._fill(out, frames, None, OK)
    return out


def as_played(samples: np.ndarray) -> np.ndarray:
    return samples.T.astype(np.float32)


def test_callback_copies_consecutive_blocks_and_advances():
    signal = ramp()
    engine = PlaybackEngine(signal, 8000, device=STEREO)
    engine._playing = True
    blocks = [pull(engine, 128) for _ in range(3)]
    np.testing.assert_array_equal(np.concatenate(blocks), as_played(signal[:, :384]))
    assert engine.position == 384


def test_paused_engine_outputs_silence_and_keeps_position():
    engine = PlaybackEngine(ramp(), 8000, device=STEREO)
    engine.seek(100)
    np.testing.assert_array_equal(pull(engine, 64), 0)
    assert engine.position == 100


def test_end_of_signal_pads_with_zeros_and_stops():
    signal = ramp()
    engine = PlaybackEngine(signal, 8000, device=STEREO)
    engine.seek(950)
    engine._playing = True
    block = pull(engine, 128)
    np.testing.assert_array_equal(block[:50], as_played(signal[:, 950:]))
    np.testing.assert_array_equal(block[50:], 0)
    assert not engine.playing


def test_loop_wraps_inside_a_block():
    signal = ramp()
    engine = PlaybackEngine(signal, 8000, device=STEREO)
    engine.set_loop((200, 260))
    engine.seek(240)
    engine._playing = True
    block = pull(engine, 100)
    expected = np.concatenate([np.arange(240, 260), np.arange(200, 260), np.arange(200, 220)])
    np.testing.assert_array_equal(block, as_played(signal[:, expected]))
    assert engine.position == 220


def test_seek_while_playing_takes_effect_at_the_next_block():
    signal = ramp()
    engine = PlaybackEngine(signal, 8000, device=STEREO)
    engine._playing = True
    pull(engine, 64)
    engine.seek(700)
    assert engine.position == 700
    np.testing.assert_array_equal(pull(engine, 32), as_played(signal[:, 700:732]))


def test_bypass_plays_the_original_and_update_changes_only_the_edited_signal():
    signal = ramp()
    engine = PlaybackEngine(signal, 8000, device=STEREO)
    new = -signal[:, 300:400]
    engine.update_span(300, new)
    engine._playing = True
    engine.seek(250)
    edited = pull(engine, 200)
    np.testing.assert_array_equal(edited[:50], as_played(signal[:, 250:300]))
    np.testing.assert_array_equal(edited[50:150], as_played(new))
    np.testing.assert_array_equal(edited[150:], as_played(signal[:, 400:450]))
    engine.bypass = True
    engine.seek(250)
    np.testing.assert_array_equal(pull(engine, 200), as_played(signal[:, 250:450]))


def test_pending_patch_overrides_a_torn_copy():
    """A segment copied while the writer is mid-copy is replaced by the published patch."""
    signal = ramp()
    engine = PlaybackEngine(signal, 8000, device=STEREO)
    engine._edited = engine._original.copy()
    new = as_played(-signal[:, 100:200])
    engine._edited[100:150] = new[:50]  # the writer got halfway
    engine._patch = (100, new)
    engine._playing = True
    engine.seek(80)
    block = pull(engine, 140)
    np.testing.assert_array_equal(block[20:120], new)
    np.testing.assert_array_equal(block[:20], as_played(signal[:, 80:100]))
    np.testing.assert_array_equal(block[120:], as_played(signal[:, 200:220]))


def test_writer_keeps_the_patch_published_until_the_callback_in_flight_leaves():
    engine = PlaybackEngine(ramp(), 8000, device=STEREO)
    engine._entered = 1  # a callback is copying right now
    writer = threading.Thread(target=engine.update_span, args=(100, np.zeros((2, 50))))
    writer.start()
    wait_until(lambda: engine._patch is not None and engine._edited[100:150].max() == 0, 5)
    assert writer.is_alive() and engine._patch is not None
    engine._left = 1  # the callback returned
    writer.join(5)
    assert not writer.is_alive() and engine._patch is None


def test_update_outside_the_signal_is_refused():
    engine = PlaybackEngine(ramp(), 8000, device=STEREO)
    with pytest.raises(ValueError, match="outside"):
        engine.update_span(990, np.zeros((2, 20)))
    with pytest.raises(ValueError, match="channels"):
        engine.update_span(0, np.zeros((1, 20)))


def test_no_output_device_disables_transport_with_its_reason():
    engine = PlaybackEngine(ramp(), 8000, device=NO_DEVICE)
    assert not engine.available
    assert "no audio output device" in engine.reason
    with pytest.raises(RuntimeError, match="unavailable: no audio output device"):
        engine.play()
    engine.update_span(10, np.zeros((2, 5)))  # still a working buffer
    assert engine.edited()[10:15].max() == 0


def test_portaudio_error_on_query_becomes_a_reason_in_the_users_words(monkeypatch, caplog):
    """With no sound card the transport said 'no audio output device (Error querying device -1)':
    the reason now says what to do, and PortAudio's own words go to the log only."""
    import sounddevice as sd

    def fail(*args, **kwargs):
        raise sd.PortAudioError("Error querying device -1")

    monkeypatch.setattr(sd, "query_devices", fail)
    with caplog.at_level(logging.WARNING, logger="spectropaint.app.playback.engine"):
        device = find_output_device()
    assert not device.available
    assert device.reason == (
        "no audio output device was found. Connect one and press Play to look again"
    )
    assert "Error querying device -1" in caplog.text
    engine = PlaybackEngine(ramp(), 8000, device=device)
    with pytest.raises(RuntimeError) as raised:
        engine.play()
    assert str(raised.value) == f"Playback is unavailable: {device.reason}"
    assert "Error" not in str(raised.value) and "-1" not in str(raised.value)


class RecordingEngine(PlaybackEngine):
    """Taps every block the real stream's callback delivered."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.delivered: list[np.ndarray] = []

    def _fill(self, outdata, frames, time_info, status):
        super()._fill(outdata, frames, time_info, status)
        self.delivered.append(outdata.copy())


def wait_until(condition, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(0.01)


def test_real_stream_delivers_the_edited_signal(jack_server):  # noqa: F811
    rng = np.random.default_rng(1)
    signal = 0.5 * rng.uniform(-1, 1, size=(2, JACK_RATE))
    engine = RecordingEngine(signal, JACK_RATE, device=jack_server)
    assert engine.available, engine.reason
    edit_start = JACK_RATE // 2
    edit = 0.25 * rng.uniform(-1, 1, size=(2, 4000))
    try:
        engine.play()
        wait_until(lambda: engine.position > 0, 5)
        engine.update_span(edit_start, edit)  # ahead of the playhead, while playing
        wait_until(lambda: not engine.playing, 10)
    finally:
        engine.close()
    played = np.concatenate(engine.delivered)
    expected = signal.copy()
    expected[:, edit_start : edit_start + edit.shape[1]] = edit
    np.testing.assert_array_equal(played[:JACK_RATE], as_played(expected))
    np.testing.assert_array_equal(played[JACK_RATE:], 0)


def test_real_stream_never_delivers_a_block_mixing_two_versions_of_a_span(jack_server):  # noqa: F811
    """Rewrite the looped span while it plays: each block shows exactly one version.

    The rewrites come in bursts of back-to-back versions, each burst started at a seeded random
    moment of the callback's period (so writes meet callbacks in flight), and each burst is
    followed by a wait for a block that entered after it: that block must hold the burst's last
    version. So every burst is heard however slowly a loaded machine runs the stream, and the
    writer never starves the callback (a writer rewriting without pause did, and the test missed
    its deadline under load)."""
    n = JACK_RATE // 4
    bursts, per_burst, period_s = 30, 5, 256 / JACK_RATE
    engine = RecordingEngine(np.zeros((2, n)), JACK_RATE, device=jack_server)
    engine.set_loop((0, n))
    rng = np.random.default_rng(8)
    last_of_burst = []
    version = 0
    try:
        engine.play()
        wait_until(lambda: engine._left > 0, 10)
        for _ in range(bursts):
            time.sleep(rng.uniform(0.0, period_s))
            for _ in range(per_burst):
                version += 1
                engine.update_span(0, np.full((2, n), version / 1e4))
            entered = engine._entered
            wait_until(lambda entered=entered: engine._left > entered, 30)
            last_of_burst.append(version / 1e4)
        wait_until(lambda: len(engine.delivered) >= engine._left, 5)
        delivered = list(engine.delivered)  # while playing: closing may deliver silence after
    finally:
        engine.close()
    versions = [np.unique(block) for block in delivered]
    assert all(len(v) == 1 for v in versions), [v for v in versions if len(v) != 1][:3]
    seen = np.array([v[0] for v in versions], dtype=np.float32)
    assert set(np.float32(last_of_burst)) <= set(seen)  # every burst was heard while it played
    assert np.all(np.diff(seen) >= 0)


def test_merge_spans_joins_overlapping_and_touching_spans():
    assert merge_spans([(5, 9), (0, 3), (3, 4), (8, 12), (20, 21)]) == [(0, 4), (5, 12), (20, 21)]


def resynthesised_by_pieces(document, region, scale=0.25):
    """``region`` scaled by ``scale`` and resynthesised into a playback engine by a
    :class:`Resynthesizer`: the engine, checked equal to the edited document, and the calls of
    ``edited_between`` ``(start, stop, lock held)``."""
    engine = PlaybackEngine(document.audio.samples, document.sample_rate, device=NO_DEVICE)
    lock = threading.Lock()
    calls = []
    edited_between = document.edited_between

    def spying_edited_between(start, stop):
        calls.append((start, stop, lock.locked()))
        return edited_between(start, stop)

    document.edited_between = spying_edited_between
    resynthesizer = Resynthesizer(document, engine, lock)
    try:
        magnitude, phase = document.read(region)
        with lock:
            document.write(region, magnitude * scale, phase)
        resynthesizer.schedule(region)
        assert resynthesizer.wait_idle(30) and resynthesizer.error is None
    finally:
        resynthesizer.close()
        document.edited_between = edited_between
    np.testing.assert_allclose(engine.edited(), document.edited_samples().T, atol=1e-6)
    assert np.abs(engine.edited() - as_played(document.audio.samples)).max() > 0.01
    return calls


def test_resynthesizer_keeps_the_playback_buffer_equal_to_the_edited_document():
    signal = 0.2 * np.random.default_rng(2).standard_normal((2, 8000 * 30))
    document = Document.from_samples(signal, 8000, settings=STFTSettings(n_fft=256, hop=64))
    region = Region(10, 60, 20, 20 + (3 * RESYNTHESIS_PIECE + 700) // 64, (0, 1))
    calls = resynthesised_by_pieces(document, region)
    # chunk by chunk, each read under the lock, together covering the samples the region reaches
    assert all(b - a <= RESYNTHESIS_PIECE and held for a, b, held in calls)
    assert (calls[0][0], calls[-1][1]) == document.samples_of(region) and len(calls) == 4


def test_an_nsgt_edit_is_resynthesised_one_slice_at_a_time_on_the_slices_grid():
    # fixed 1.5 s pieces would transform each slice (12 s at 44.1 kHz, 48 bins per octave)
    # again for every piece inside it
    signal = 0.2 * np.random.default_rng(8).standard_normal((2, 8000 * 40))
    document = Document.from_samples(signal, 8000, settings=NSGTSettings(bins_per_octave=12))
    length = document.transform.slice_length
    block = document.blocks[4]
    middle = block.n_frames // 2
    region = Region(0, block.n_bins, middle - 2, middle + 2, (0, 1), block=4)
    calls = resynthesised_by_pieces(document, region)
    start, stop = document.samples_of(region)
    assert (calls[0][0], calls[-1][1]) == (start, stop) and len(calls) >= 2
    assert all(held and b - a <= length for a, b, held in calls)
    assert all(b % length == 0 for _, b, _ in calls[:-1])  # cut on the slices' grid
    assert len(calls) == -(-stop // length) - start // length


def test_playing_until_a_sample_stops_there():
    # Play Selection: from the selection's start to its end, once
    signal = ramp()
    engine = PlaybackEngine(signal, 8000, device=STEREO)
    engine.seek(300)
    engine._end = 350  # what play(from_sample=300, until=350) sets, without a stream
    engine._playing = True
    block = pull(engine, 128)
    np.testing.assert_array_equal(block[:50], as_played(signal[:, 300:350]))
    np.testing.assert_array_equal(block[50:], 0)
    assert not engine.playing and engine.position == 350


def test_a_strokes_deferred_spans_wait_for_its_end_or_for_playback():
    signal = 0.2 * np.random.default_rng(4).standard_normal((1, 8000 * 4))
    document = Document.from_samples(signal, 8000, settings=STFTSettings(n_fft=256, hop=64))
    engine = PlaybackEngine(document.audio.samples, 8000, device=NO_DEVICE)
    lock = threading.Lock()
    resynthesizer = Resynthesizer(document, engine, lock)

    def paint(frame0: int) -> Region:
        region = Region(10, 60, frame0, frame0 + 40, (0,))
        magnitude, phase = document.read(region)
        with lock:
            document.write(region, magnitude * 0.1, phase)
        return region

    try:
        first, second = paint(20), paint(200)
        resynthesizer.schedule(first, defer=True)  # pointer events of a stroke, nothing playing
        resynthesizer.schedule(second, defer=True)
        assert resynthesizer.wait_idle(5)  # held spans do not count as work to wait for
        time.sleep(0.2)
        assert resynthesizer.held and resynthesizer.spans_done == 0
        np.testing.assert_array_equal(engine.edited(), as_played(signal))
        resynthesizer.schedule(first.union(second))  # the stroke ended
        assert resynthesizer.wait_idle(30) and not resynthesizer.held
        np.testing.assert_allclose(engine.edited(), document.edited_samples().T, atol=1e-6)

        third = paint(400)
        resynthesizer.schedule(third, defer=True)
        resynthesizer.listen(True)  # playback started during the stroke
        assert resynthesizer.wait_idle(30) and not resynthesizer.held
        np.testing.assert_allclose(engine.edited(), document.edited_samples().T, atol=1e-6)
        fourth = paint(300)
        resynthesizer.schedule(fourth, defer=True)  # while playing: heard at once
        assert resynthesizer.wait_idle(30) and not resynthesizer.held
        np.testing.assert_allclose(engine.edited(), document.edited_samples().T, atol=1e-6)
        resynthesizer.listen(False)  # playback stopped: the next stroke waits for its end again
        resynthesizer.schedule(paint(100), defer=True)
        assert resynthesizer.wait_idle(5) and resynthesizer.held
    finally:
        resynthesizer.close()


def test_the_transport_resynthesises_a_stroke_when_it_ends_unless_playing(qapp):
    from spectropaint.app.playback.transport import Transport
    from spectropaint.app.session import Session
    from spectropaint.brushes.settings import BrushSettings
    from spectropaint.brushes.stroke import InputEvent

    signal = 0.2 * np.random.default_rng(5).standard_normal((1, 8000 * 4))
    document = Document.from_samples(signal, 8000, settings=STFTSettings(n_fft=256, hop=64))
    session = Session(document, settle=False)
    transport = Transport(session, NO_DEVICE)
    try:
        settings = BrushSettings(radius_frames=6, radius_bins=6)
        session.begin_stroke("gain", settings, {"gain_db": -30}, InputEvent(0.0, 50.0, 40.0))
        session.paint(InputEvent(0.1, 150.0, 40.0))
        assert transport.resynthesizer.held  # not playing: nothing to hear until the stroke ends
        session.end_stroke()
        assert transport.resynthesizer.wait_idle(30) and not transport.resynthesizer.held
        np.testing.assert_allclose(
            transport.engine.edited(), document.edited_samples().T, atol=1e-6
        )
    finally:
        transport.close()
        session.close()


def test_a_pointer_event_as_playback_starts_is_heard_not_held(qapp):
    """The race: Play let the held spans go, then a pointer event painted before the engine said
    it was playing, and its span (with the stroke's) was held again until the pen moved on. The
    event is delivered here inside ``engine.play``, exactly in that window."""
    from spectropaint.app.playback.transport import Transport
    from spectropaint.app.session import Session
    from spectropaint.brushes.settings import BrushSettings
    from spectropaint.brushes.stroke import InputEvent

    signal = 0.2 * np.random.default_rng(7).standard_normal((1, 8000 * 4))
    document = Document.from_samples(signal, 8000, settings=STFTSettings(n_fft=256, hop=64))
    session = Session(document, settle=False)
    transport = Transport(session, STEREO)
    engine = transport.engine

    def play(*, from_sample=None, until=None):  # no stream: the window of the race, then playing
        session.paint(InputEvent(0.2, 250.0, 40.0))
        engine._playing = True

    engine.play = play
    try:
        settings = BrushSettings(radius_frames=6, radius_bins=6)
        session.begin_stroke("gain", settings, {"gain_db": -30}, InputEvent(0.0, 50.0, 40.0))
        session.paint(InputEvent(0.1, 150.0, 40.0))
        assert transport.resynthesizer.held  # not playing yet
        transport.toggle()
        assert transport.playing
        assert transport.resynthesizer.wait_idle(30) and not transport.resynthesizer.held
        np.testing.assert_allclose(engine.edited(), document.edited_samples().T, atol=1e-6)
        engine._playing = False  # it reached the end
        transport._tick()
        session.paint(InputEvent(0.3, 350.0, 40.0))
        assert transport.resynthesizer.held  # nothing plays: the stroke's spans wait again
        session.end_stroke()
    finally:
        transport.close()
        session.close()


def test_a_stroke_beginning_pauses_a_long_resynthesis_between_chunks_until_it_ends():
    signal = 0.2 * np.random.default_rng(6).standard_normal((1, 8000 * 40))
    document = Document.from_samples(signal, 8000, settings=STFTSettings(n_fft=256, hop=64))
    engine = PlaybackEngine(document.audio.samples, 8000, device=NO_DEVICE)
    lock = threading.Lock()
    chunks = []
    long_edit = Region(10, 60, 20, 20 + (3 * RESYNTHESIS_PIECE) // 64, (0,))
    stroke = Region(10, 60, 4000, 4040, (0,))
    for region in (long_edit, stroke):
        magnitude, phase = document.read(region)
        document.write(region, magnitude * 0.1, phase)

    def on_span(start: int, stop: int) -> None:
        chunks.append((start, stop))
        if len(chunks) == 1:  # a stroke begins painting while the long edit is resynthesised
            resynthesizer.schedule(stroke, defer=True)

    resynthesizer = Resynthesizer(document, engine, lock, on_span=on_span)
    try:
        resynthesizer.schedule(long_edit)
        assert resynthesizer.wait_idle(30)
        assert len(chunks) == 1 and resynthesizer.held  # the rest waits for the stroke
        resynthesizer.schedule(stroke)  # it ended
        assert resynthesizer.wait_idle(30) and not resynthesizer.held
        np.testing.assert_allclose(engine.edited(), document.edited_samples().T, atol=1e-6)
        assert len(chunks) >= 4
    finally:
        resynthesizer.close()


def test_a_transport_closed_while_its_waveform_is_made_sends_nothing_after(qapp, monkeypatch):
    """The window may close (and delete) a transport before its waveform thread is done: closing
    does not wait for it, and no signal leaves a closed transport (Qt raised 'Signal source has
    been deleted' on that thread)."""
    from spectropaint.app.playback import transport as transport_module
    from spectropaint.app.session import Session

    gate, made = threading.Event(), threading.Event()
    real = transport_module.WaveformSummary

    def slow(samples):
        gate.wait(30)
        try:
            return real(samples)
        finally:
            made.set()

    monkeypatch.setattr(transport_module, "WaveformSummary", slow)
    document = Document.from_samples(np.zeros((1, 8000)), 8000, settings=STFTSettings(256, 64))
    session = Session(document, settle=False)
    transport = transport_module.Transport(session, NO_DEVICE)
    sent = []
    transport.waveform_changed.connect(lambda: sent.append(True))
    started = time.perf_counter()
    transport.close()
    assert time.perf_counter() - started < 5  # not held by the summary being made
    gate.set()
    assert made.wait(30)
    time.sleep(0.05)
    qapp.processEvents()
    assert not sent
    session.close()


def test_the_engine_is_made_without_waiting_for_its_copy_of_the_signal(monkeypatch):
    """A window opening a long file builds an engine on its own thread: the frames-major copy of
    the signal (hundreds of milliseconds for ten minutes) is made on a thread of the engine's, and
    what reads the signal waits for it."""
    from spectropaint.app.playback import engine as engine_module

    release = threading.Event()
    copy = engine_module._frames_major

    def slow_copy(samples):
        release.wait(5)
        return copy(samples)

    monkeypatch.setattr(engine_module, "_frames_major", slow_copy)
    samples = ramp(2, 1000)
    started = time.perf_counter()
    engine = PlaybackEngine(samples, 44100, device=NO_DEVICE)
    assert time.perf_counter() - started < 1.0  # not the 5 s the copy waits for
    assert (engine.n_samples, engine.n_channels) == (1000, 2)
    threading.Timer(0.2, release.set).start()
    np.testing.assert_array_equal(engine.edited(), samples.T.astype(np.float32))  # waited
    assert not engine._copying.is_alive()
