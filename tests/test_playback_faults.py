"""An output device that goes away during playback: playback stops with a message naming the device
and the reason, nothing blocks on the dead stream, and the engine goes on as the edit buffer.

Most tests put a fake stream in place of ``sounddevice.OutputStream``: the test runs the engine's
callback itself, as PortAudio's thread would, and then breaks the stream the ways a lost device does
(inactive, callback no longer coming, PortAudio errors, calls that never return). One test kills a
real JACK server during playback, in a child process: after that PortAudio stays blocked in that
process, which must not be pytest's.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import sounddevice as sd

from spectropaint.app.playback import engine as playback
from spectropaint.app.playback.engine import (
    STUCK_REASON,
    OutputDevice,
    PlaybackEngine,
    find_output_device,
    portaudio_stuck,
)
from spectropaint.app.session import Session
from spectropaint.transforms.document import Document
from spectropaint.transforms.regions import Region
from spectropaint.transforms.stft import STFTSettings

DEVICE = OutputDevice(7, "test device", 2)
NO_DEVICE = OutputDevice(None, "", 0, "no audio output device (test)")
OK = type("Status", (), {"output_underflow": False})()
BLOCK = 64
HANG_LIMIT_S = 30.0
"""How long a fake call that 'never returns' really blocks (so a broken bound fails, not hangs)."""


class FakeStream:
    """Stands in for ``sounddevice.OutputStream``; ``pull`` plays blocks, the rest breaks it."""

    def __init__(self, *, device, channels, callback, finished_callback, **kwargs):
        self.device, self.channels = device, channels
        self.callback, self.finished_callback = callback, finished_callback
        self._active, self.stopped = False, True
        self.fault: str | None = None  # "query": .active raises; "start": start() raises
        self.blocked = threading.Event()  # set: stop() and close() do not return
        self.released = threading.Event()
        self.entered: list[str] = []
        self.close_calls = 0

    @property
    def active(self) -> bool:
        if self.fault == "query":
            raise sd.PortAudioError("Error querying stream state: Unanticipated host error", -9999)
        return self._active

    def start(self) -> None:
        if self.fault == "start":
            raise sd.PortAudioError("Error starting stream: Device unavailable", -9985)
        self._active, self.stopped = True, False

    def stop(self, ignore_errors=True) -> None:
        self._block("stop")
        self._active, self.stopped = False, True

    def close(self, ignore_errors=True) -> None:
        self.close_calls += 1
        self._block("close")
        self._active = False

    def _block(self, call: str) -> None:
        self.entered.append(call)
        if self.blocked.is_set():
            self.released.wait(HANG_LIMIT_S)

    def pull(self, blocks: int) -> np.ndarray:
        """Run the callback ``blocks`` times, as PortAudio's thread would; what it delivered."""
        out = []
        for _ in range(blocks):
            data = np.full((BLOCK, self.channels), np.nan, np.float32)
            self.callback(data, BLOCK, None, OK)
            out.append(data)
        return np.concatenate(out)

    def lose_device(self, *, finished: bool) -> None:
        """The device went away: the stream turns inactive (PortAudio may say so by callback)."""
        self._active = False
        if finished:
            self.finished_callback()


class Opened(list):
    """The fake streams opened, in order, and the exit handlers unregistered from ``atexit``."""

    exit_handlers_dropped: list


@pytest.fixture
def streams(monkeypatch) -> Opened:
    """Every stream the engines open in this test (fakes); short PortAudio time limits."""
    opened = Opened()

    def open_stream(**kwargs):
        opened.append(FakeStream(**kwargs))
        return opened[-1]

    opened.exit_handlers_dropped = []
    monkeypatch.setattr(sd, "OutputStream", open_stream)
    monkeypatch.setattr(playback, "PORTAUDIO_WAIT_S", 0.2)
    monkeypatch.setattr(playback.atexit, "unregister", opened.exit_handlers_dropped.append)
    yield opened
    for stream in opened:
        stream.released.set()
    assert not portaudio_stuck(wait=10), "a fake PortAudio call did not finish after release"


def ramp(n: int = 4000) -> np.ndarray:
    return (np.arange(n)[None, :] + 10000 * np.arange(2)[:, None]) / 1e5


def playing_engine(streams, samples=None) -> tuple[PlaybackEngine, FakeStream]:
    engine = PlaybackEngine(ramp() if samples is None else samples, 8000, device=DEVICE)
    engine.play()
    assert engine.playing and streams[-1].active
    return engine, streams[-1]


def wait_until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(0.005)


# ------------------------------------------------------------------------------------ engine
@pytest.mark.parametrize(
    ("finished", "detail"), [(True, "PortAudio ended the stream"), (False, "the stream stopped")]
)
def test_a_stream_turning_inactive_stops_playback_and_says_which_device(streams, finished, detail):
    engine, stream = playing_engine(streams)
    stream.pull(3)
    stream.lose_device(finished=finished)

    assert engine.check()
    assert not engine.playing and not engine.available
    assert engine.failure == f"the output device 'test device' went away ({detail})"
    assert engine.reason == engine.failure
    assert engine.position == 3 * BLOCK  # the playhead stays where the sound stopped
    assert not engine.check() and engine.failures == 1  # reported once
    assert not portaudio_stuck(wait=5) and stream.close_calls == 1  # released
    assert streams.exit_handlers_dropped == [sd._exit_handler]


def test_the_engine_stays_a_working_buffer_after_a_loss(streams):
    engine, stream = playing_engine(streams)
    stream.pull(2)
    stream.lose_device(finished=False)
    engine.check()
    new = -ramp()[:, 1000:1100]
    engine.update_span(1000, new)
    np.testing.assert_array_equal(engine.edited()[1000:1100], new.T.astype(np.float32))
    engine.seek(50)
    assert engine.position == 50


def test_a_callback_that_stops_coming_is_a_lost_device(streams, monkeypatch):
    monkeypatch.setattr(playback, "STALL_S", 0.05)
    engine, stream = playing_engine(streams)
    for _ in range(8):  # blocks keep coming, checks in between: no fault, however long it takes
        time.sleep(0.02)
        stream.pull(1)
        assert not engine.check()
    wait_until(engine.check)  # then no callback any more, while the stream says it is active
    assert engine.failure.startswith("the output device 'test device' went away (no sound was")
    assert engine.position == 8 * BLOCK


def test_a_portaudio_error_while_playing_is_the_reason(streams):
    engine, stream = playing_engine(streams)
    stream.fault = "query"
    assert engine.check()
    assert engine.failure == (
        "the output device 'test device' went away "
        "(Error querying stream state: Unanticipated host error [PaErrorCode -9999])"
    )


def test_a_device_gone_before_play_fails_at_start_with_the_reason(streams):
    engine = PlaybackEngine(ramp(), 8000, device=DEVICE)
    engine.play()
    engine.pause()
    streams[-1].fault = "start"
    with pytest.raises(RuntimeError, match=r"starting failed: Error starting stream: Device un"):
        engine.play()
    assert not engine.playing and engine.failures == 1
    assert "'test device'" in engine.failure


def test_reaching_the_end_is_not_a_fault(streams):
    engine, stream = playing_engine(streams, samples=ramp(200))
    stream.pull(4)
    assert not engine.playing
    stream.lose_device(finished=False)
    assert not engine.check() and engine.failure == "" and engine.available


def test_a_close_that_blocks_does_not_block_the_loss_report(streams):
    """JACK's way: the stream turns inactive, and closing it never returns."""
    engine, stream = playing_engine(streams)
    stream.blocked.set()
    stream.lose_device(finished=False)
    assert engine.check()  # returns while the close is still blocked on its helper thread
    wait_until(lambda: stream.entered == ["close"])
    assert portaudio_stuck() and not stream.released.is_set()
    stream.released.set()
    assert not portaudio_stuck(wait=5)


def test_a_stop_that_never_returns_is_abandoned_and_portaudio_left_alone(streams, monkeypatch):
    engine, stream = playing_engine(streams)
    stream.blocked.set()
    engine.pause()  # waits PORTAUDIO_WAIT_S (0.2 s here), not for ever
    assert engine.failure == (
        "the output device 'test device' went away "
        "(stopping failed: PortAudio did not answer within 0.2 s)"
    )
    assert portaudio_stuck() and stream.entered == ["stop"]
    engine.close()
    assert stream.close_calls == 0  # a stream stuck in a call is not called again

    def must_not_terminate():
        raise AssertionError("PortAudio was re-initialised while a call into it was blocked")

    monkeypatch.setattr(sd, "_terminate", must_not_terminate)
    assert find_output_device(refresh=True).reason == STUCK_REASON
    other = PlaybackEngine(ramp(), 8000, device=DEVICE)
    with pytest.raises(RuntimeError, match="restart SpectroPaint"):
        other.play()
    assert len(streams) == 1
    stream.released.set()
    assert not portaudio_stuck(wait=5)


# --------------------------------------------------------------------------------- transport
@pytest.fixture
def transport(qtbot, streams):
    from spectropaint.app.playback.transport import Transport

    rng = np.random.default_rng(4)
    document = Document.from_samples(
        0.2 * rng.standard_normal((2, 8000)), 8000, settings=STFTSettings(n_fft=256, hop=64)
    )
    transport = Transport(Session(document), DEVICE)
    transport.document = document
    transport.messages = []
    transport.failed.connect(transport.messages.append)
    yield transport
    transport.close()


def test_transport_reports_a_lost_device_once_and_editing_goes_on(transport, qtbot, streams):
    transport.toggle()
    stream = streams[-1]
    stream.pull(5)
    with qtbot.waitSignals([transport.state_changed, transport.failed], timeout=5000):
        stream.lose_device(finished=True)  # the playhead timer finds it
    assert transport.messages == [
        "Playback stopped: the output device 'test device' went away (PortAudio ended the stream)"
    ]
    assert not transport.playing and not transport.timer.isActive()
    assert not transport.available and "went away" in transport.reason
    assert transport.playhead_seconds == 5 * BLOCK / 8000
    transport._tick()
    assert len(transport.messages) == 1

    document = transport.document
    region = Region(5, 40, 10, 60, (0, 1))
    transport.session.apply("tenth", region, lambda magnitude, phase: (0.1 * magnitude, phase))
    transport.session.wait_settled()  # the operation's settle is resynthesised too
    assert transport.resynthesizer.wait_idle(30) and transport.resynthesizer.error is None
    edited = document.edited_samples().T
    np.testing.assert_allclose(transport.engine.edited(), edited, atol=1e-6)
    assert np.abs(edited - document.audio.samples.T).max() > 0.01


def test_play_after_a_loss_looks_for_a_device_again(transport, qtbot, streams, monkeypatch):
    from spectropaint.app.playback import transport as transport_module

    transport.toggle()
    stream = streams[-1]
    stream.pull(5)
    stream.lose_device(finished=False)
    qtbot.waitUntil(lambda: len(transport.messages) == 1, timeout=5000)

    monkeypatch.setattr(transport_module, "find_output_device", lambda refresh: NO_DEVICE)
    with pytest.raises(RuntimeError, match=r"unavailable: no audio output device \(test\)"):
        transport.toggle()
    assert transport.reason == NO_DEVICE.reason

    back = OutputDevice(3, "USB interface", 2)
    monkeypatch.setattr(transport_module, "find_output_device", lambda refresh: back)
    transport.toggle()
    assert transport.playing and transport.available
    assert streams[-1].device == 3 and streams[-1] is not stream
    played = streams[-1].pull(2)  # on from where the sound stopped
    np.testing.assert_array_equal(played, transport.engine.edited()[5 * BLOCK : 7 * BLOCK])
    assert len(transport.messages) == 1


def test_a_device_failing_as_play_starts_is_reported_not_raised(transport, qtbot, streams):
    transport.toggle()
    transport.toggle()
    streams[-1].fault = "start"
    with qtbot.waitSignal(transport.failed, timeout=1000):
        transport.toggle()
    assert not transport.playing
    assert transport.messages[0].startswith(
        "Playback stopped: the output device 'test device' went away (starting failed: "
    )


# ------------------------------------------------------------------------------- real JACK
JACK_CHILD_TIMEOUT_S = 120


def test_killing_the_jack_server_during_playback_is_reported_and_nothing_blocks(tmp_path):
    if shutil.which("jackd") is None:
        pytest.fail("jackd is not installed (apt-get install jackd2): this test needs it")
    env = dict(os.environ, SPECTROPAINT_TEST_LOG=str(tmp_path / "jackd.log"))
    child = subprocess.run(
        [sys.executable, __file__],
        capture_output=True,
        text=True,
        timeout=JACK_CHILD_TIMEOUT_S,
        env=env,
    )
    assert child.returncode == 0, child.stdout + child.stderr
    result = json.loads(child.stdout.strip().splitlines()[-1])
    assert result["played"] > 0
    assert len(result["messages"]) == 1, result
    assert result["messages"][0].startswith(
        "Playback stopped: the output device 'system' went away"
    )
    assert result["position_after"] == result["position_at_failure"]
    assert result["edit_applied"]
    assert not result["replay_possible"]  # the server is gone: Play finds nothing to play on


def _jack_loss_child() -> dict:
    """Play on a private JACK dummy server, stop the server, and report what the Transport saw."""
    name = f"spectropaint-loss-{os.getpid()}"
    os.environ.update(JACK_DEFAULT_SERVER=name, JACK_NO_START_SERVER="1")
    with open(os.environ["SPECTROPAINT_TEST_LOG"], "w") as log:
        server = subprocess.Popen(
            ["jackd", "--no-realtime", "-n", name, "-d", "dummy", "-r", "44100", "-p", "256"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        transport, played, seconds_to_report = _play_and_stop_the_server(server)
    finally:
        if server.poll() is None:  # the child failed before it stopped the server
            server.terminate()
            server.wait(10)
    document = transport.resynthesizer.document
    position_at_failure = transport.engine.position

    region = Region(5, 40, 10, 60, (0, 1))
    transport.session.apply("tenth", region, lambda magnitude, phase: (0.1 * magnitude, phase))
    transport.session.wait_settled()  # the operation's settle is resynthesised too
    idle = transport.resynthesizer.wait_idle(30)
    edit_applied = bool(
        idle and np.allclose(transport.engine.edited(), document.edited_samples().T, atol=1e-6)
    )
    replay_possible = transport.reprobe()
    transport.close()
    for leftover in glob.glob(f"/dev/shm/jack*{name}*"):  # what our abandoned client left behind
        os.remove(leftover)
    return {
        "played": played,
        "messages": transport.messages,
        "position_at_failure": position_at_failure,
        "position_after": transport.engine.position,
        "edit_applied": edit_applied,
        "replay_possible": replay_possible,
        "reason": transport.reason,
        "seconds_to_report": round(seconds_to_report, 3),  # for people reading it; not asserted
    }


def _play_and_stop_the_server(server: subprocess.Popen):
    """A Transport playing on the server; then the server is stopped and the loss awaited."""
    from PySide6.QtCore import QCoreApplication, QTimer

    from spectropaint.app.playback.transport import Transport

    deadline = time.monotonic() + 10
    device = find_output_device(refresh=True)
    while not device.available and time.monotonic() < deadline and server.poll() is None:
        time.sleep(0.05)
        device = find_output_device(refresh=True)
    assert device.available, f"JACK dummy server did not come up: {device.reason}"
    app = QCoreApplication([])
    rng = np.random.default_rng(6)
    document = Document.from_samples(
        0.1 * rng.standard_normal((2, 44100)), 44100, settings=STFTSettings(n_fft=256, hop=64)
    )
    transport = Transport(Session(document), device)
    transport.app = app  # kept alive as long as the transport
    transport.set_looping(True)
    transport.messages = []
    transport.failed.connect(transport.messages.append)
    transport.failed.connect(app.quit)
    transport.toggle()
    deadline = time.monotonic() + 10
    while transport.engine.position < 4410 and time.monotonic() < deadline:
        app.processEvents()
    played = transport.engine.position
    server.terminate()  # SIGTERM: the server unregisters (SIGKILL would use up one of JACK's slots)
    server.wait()
    stopped = time.monotonic()
    QTimer.singleShot(10_000, app.quit)  # the loss must be seen well before this
    app.exec()
    return transport, played, time.monotonic() - stopped


if __name__ == "__main__":
    print(json.dumps(_jack_loss_child()))
