"""Audio output of the edited signal through a PortAudio stream (sounddevice).

The stream callback runs on PortAudio's thread. It only copies from preallocated float32 buffers
``[N, C]`` into the block PortAudio hands it and advances an integer position: no array allocation,
no locks, no Qt. Everything the GUI changes (play, pause, seek, loop range, bypass) is published as a
single attribute assignment, which is atomic under the GIL; the GUI polls :attr:`PlaybackEngine.position`
to draw the playhead.

Updating samples while they play (:meth:`PlaybackEngine.update_span`) must never let the callback hand
out a block that mixes old and new samples. The choice here is a **published patch**:

1. the writer publishes ``(start, new_samples)`` as the pending patch,
2. copies the new samples into the buffer (one numpy copy, which may run while the callback copies),
3. waits until every callback that entered before the copy finished has left, then clears the patch.

The callback copies a segment from the buffer and *then* reads the pending patch; where the segment
overlaps it, the patch's samples overwrite what was copied. A segment copy that overlapped step 2 in
time necessarily reads the patch (published before step 2, cleared only after that callback left), so
it hands out new samples only; a segment copied before step 1 or after step 3 reads a buffer that is
wholly old or wholly new. Writers are serialised by a lock that the callback never touches; a writer
waits at most one callback period. The bypass (A/B) buffer holds the original; the edited buffer is
shared with it until the first update (copy on first write, on the writer's thread).

**A device that goes away** (a USB interface unplugged, the JACK server killed, a PulseAudio sink
removed) shows in one of three ways, and :meth:`PlaybackEngine.check`, polled by the GUI while
playing, looks for all of them: the stream turns inactive (PortAudio may call its finished callback),
the callback stops coming (a stall), or PortAudio raises. Playback then stops, the stream is released and
:attr:`PlaybackEngine.failure` says what happened; the buffers stay, so edits and resynthesis go on.
PortAudio calls into a dead device can block for good (stopping or closing a stream whose JACK server
died never returns), so every start, stop and close runs on a helper thread that the caller waits for
a bounded time (:func:`_bounded`); a call that never returns is abandoned, and PortAudio is left alone
from then on (:func:`portaudio_stuck`), exit included.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

WRITER_WAIT_S = 0.5
"""Longest a writer waits for a callback in flight to finish (a stalled stream must not hang it)."""
PORTAUDIO_WAIT_S = 2.0
"""Longest the caller waits for PortAudio to open, start, stop or close a stream."""
RESCAN_WAIT_S = 5.0
"""Longest the caller waits for PortAudio to re-initialise and list the devices again."""
STALL_S = 1.0
"""A playing stream whose callback has not run for this long has lost its device (callback periods
of high-latency sinks reach a few tenths of a second: this leaves room)."""
NO_DEVICE_REASON = "no audio output device was found. Connect one and press Play to look again"
"""Why playback is off when PortAudio lists no output device (its own words go to the log)."""
NO_PORTAUDIO_REASON = "the PortAudio library is not installed, so no sound can be played"
STUCK_REASON = (
    "PortAudio stopped answering after an output device went away; restart SpectroPaint to play "
    "sound again"
)

T = TypeVar("T")
log = logging.getLogger(__name__)
_calls_lock = threading.Lock()
_calls: list[threading.Thread] = []
"""Helper threads of PortAudio calls still running (or blocked for good)."""


class _NoAnswer(Exception):
    """A PortAudio call did not return within its time limit."""


def portaudio_stuck(*, wait: float = 0.0) -> bool:
    """Whether a PortAudio call made here is still running after waiting up to ``wait`` seconds."""
    deadline = time.monotonic() + wait
    with _calls_lock:
        running = list(_calls)
    for thread in running:
        thread.join(max(0.0, deadline - time.monotonic()))
    with _calls_lock:
        _calls[:] = [thread for thread in _calls if thread.is_alive()]
        return bool(_calls)


def _start_call(call: Callable[[], T]) -> tuple[threading.Thread, list]:
    """Run ``call()`` on a helper thread; the list receives ``(returned, value or exception)``."""
    outcome: list = []

    def run() -> None:
        try:
            outcome.append((True, call()))
        except BaseException as exc:  # handed to whoever waits for the outcome
            outcome.append((False, exc))

    thread = threading.Thread(target=run, name="portaudio call", daemon=True)
    with _calls_lock:
        _calls[:] = [running for running in _calls if running.is_alive()] + [thread]
    thread.start()
    return thread, outcome


def _bounded(call: Callable[[], T], seconds: float) -> T:
    """``call()`` on a helper thread, waiting at most ``seconds``; re-raises what it raised.

    Raises
    ------
    _NoAnswer
        It is still running: it is abandoned to its thread, and PortAudio is not terminated at
        exit (:func:`_leave_portaudio_at_exit`).
    """
    thread, outcome = _start_call(call)
    thread.join(seconds)
    if not outcome:
        _leave_portaudio_at_exit()
        raise _NoAnswer(f"PortAudio did not answer within {seconds:g} s")
    returned, value = outcome[0]
    if not returned:
        raise value
    return value


def _leave_portaudio_at_exit() -> None:
    """Keep sounddevice from terminating PortAudio at exit.

    With a stream of a dead device still open, terminating blocks the exit for good (JACK) or
    aborts the process; the operating system releases what is left anyway.
    """
    import sounddevice as sd

    atexit.unregister(sd._exit_handler)


def _close(stream) -> None:
    """Close ``stream``, waiting a bounded time; a close that blocks is left to its thread."""
    import sounddevice as sd

    with contextlib.suppress(sd.PortAudioError, _NoAnswer):
        _bounded(stream.close, PORTAUDIO_WAIT_S)


@dataclass(frozen=True)
class OutputDevice:
    """The output device a stream would open, or why there is none (``index`` is None then)."""

    index: int | None
    name: str
    max_channels: int
    reason: str = ""

    @property
    def available(self) -> bool:
        return self.index is not None


def _rescan() -> None:
    """Re-initialise PortAudio (it lists devices only when it starts)."""
    import sounddevice as sd

    sd._terminate()
    sd._initialize()


def find_output_device(*, refresh: bool = False) -> OutputDevice:
    """The default output device, or an unavailable one whose ``reason`` says why.

    ``refresh`` re-initialises PortAudio so that devices which appeared after sounddevice was first
    imported (a JACK server started later, a USB interface plugged back in) are seen; PortAudio only
    enumerates devices when it starts. That closes every open stream, and waits at most
    :data:`RESCAN_WAIT_S`. While PortAudio is stuck (:func:`portaudio_stuck`) it is not asked.
    """
    try:
        import sounddevice as sd
    except OSError as exc:  # the PortAudio library itself is missing
        log.warning("sounddevice cannot load PortAudio: %s", exc)
        return OutputDevice(None, "", 0, NO_PORTAUDIO_REASON)
    if portaudio_stuck(wait=PORTAUDIO_WAIT_S if refresh else 0.0):
        return OutputDevice(None, "", 0, STUCK_REASON)
    try:
        if refresh:
            _bounded(_rescan, RESCAN_WAIT_S)
        info = sd.query_devices(kind="output")
    except _NoAnswer:
        return OutputDevice(None, "", 0, STUCK_REASON)
    except (sd.PortAudioError, ValueError) as exc:
        log.warning("PortAudio lists no default output device: %s", exc)
        return OutputDevice(None, "", 0, NO_DEVICE_REASON)
    if int(info["max_output_channels"]) < 1:
        return OutputDevice(None, "", 0, f"device {info['name']!r} has no output channels")
    return OutputDevice(int(info["index"]), str(info["name"]), int(info["max_output_channels"]))


def _frames_major(samples: np.ndarray) -> np.ndarray:
    """``[C, n]`` samples as a new C-contiguous float32 ``[n, C]`` array.

    Written a channel at a time: ten minutes of stereo take 40 ms here, against 130 to 420 ms for
    ``np.ascontiguousarray`` of the transpose (the window builds this when a document opens)."""
    samples = np.atleast_2d(samples)
    frames = np.empty((samples.shape[1], samples.shape[0]), dtype=np.float32)
    for channel, values in enumerate(samples):
        frames[:, channel] = values
    return frames


class PlaybackEngine:
    """Play, pause, seek, loop and A/B-compare a multichannel signal.

    Parameters
    ----------
    samples : np.ndarray [shape=(C, N)]
        The signal to play (the original; the edited signal starts equal to it), float in [-1, 1].
    sample_rate : int
        Samples per second; the stream is opened at this rate.
    device : OutputDevice, optional
        Where to play; by default :func:`find_output_device`. When it is unavailable the engine still
        works as a buffer (updates, seeks) and :attr:`reason` says why transport is off.
    blocksize : int
        Frames per callback (0 lets PortAudio choose).
    """

    def __init__(
        self,
        samples: np.ndarray,
        sample_rate: int,
        *,
        device: OutputDevice | None = None,
        blocksize: int = 0,
    ):
        self.sample_rate = int(sample_rate)
        samples = np.atleast_2d(samples)
        self.n_channels, self.n_samples = samples.shape
        self._frames: np.ndarray | None = None
        self._frames_error: BaseException | None = None
        self._edited_frames: np.ndarray | None = None
        # the frames-major copy of a long file takes a few hundred milliseconds (page faults on a
        # new buffer as large as the sound): it is made on a thread of its own (numpy's copy lets
        # the interpreter go), so that a window opening a document does not wait for it
        self._copying = threading.Thread(
            target=self._copy_frames, args=(samples,), name="playback buffer", daemon=True
        )
        self._copying.start()
        self.device = device if device is not None else find_output_device()
        self._blocksize = blocksize
        self._stream = None
        self._open_error = ""
        self._failure = ""
        self.failures = 0
        """How many times playback failed (a device lost); observers compare it to their count."""
        self._finished = False
        self._progress = (0, 0.0)
        self._playing = False
        self._bypass = False
        self._position = 0
        self._seek_request: tuple[int, int] = (0, 0)
        self._seek_served = 0
        self._loop: tuple[int, int] | None = None
        self._end: int | None = None
        """Without a loop, playing stops here (play selection), else at the signal's end."""
        self._patch: tuple[int, np.ndarray] | None = None
        self._entered = 0
        self._left = 0
        self._write_lock = threading.Lock()
        self.underflows = 0

    def _copy_frames(self, samples: np.ndarray) -> None:
        try:
            self._frames = _frames_major(samples)
        except BaseException as exc:  # noqa: BLE001 - out of memory: raised where it is read
            self._frames_error = exc

    @property
    def _original(self) -> np.ndarray:
        """The original signal ``[N, C]`` float32 (waits for its copy the first time)."""
        if self._frames is None:
            self._copying.join()
            if self._frames_error is not None:
                raise self._frames_error
        return self._frames

    @property
    def _edited(self) -> np.ndarray:
        """The edited signal ``[N, C]``: the original until the first update."""
        return self._original if self._edited_frames is None else self._edited_frames

    @_edited.setter
    def _edited(self, frames: np.ndarray) -> None:
        self._edited_frames = frames

    # ---------------------------------------------------------------------------------- state
    @property
    def available(self) -> bool:
        """Whether there is an output device, a stream could be opened on it, and it did not fail."""
        return self.device.available and not self._open_error and not self._failure

    @property
    def reason(self) -> str:
        """Why transport is off ('' when it is available)."""
        return self.device.reason or self._open_error or self._failure

    @property
    def failure(self) -> str:
        """Why playback stopped on its own: the device went away ('' when it did not)."""
        return self._failure

    @property
    def playing(self) -> bool:
        return self._playing

    @property
    def position(self) -> int:
        """The next sample to be played (the playhead), published by the callback."""
        request = self._seek_request
        return request[1] if request[0] != self._seek_served else self._position

    @property
    def bypass(self) -> bool:
        return self._bypass

    @bypass.setter
    def bypass(self, value: bool) -> None:
        """True plays the original (B), False the edited signal (A)."""
        self._bypass = bool(value)

    @property
    def loop(self) -> tuple[int, int] | None:
        return self._loop

    def set_loop(self, span: tuple[int, int] | None) -> None:
        """Loop samples ``[start, stop)`` (None: play to the end and stop)."""
        if span is None:
            self._loop = None
            return
        start, stop = max(0, int(span[0])), min(self.n_samples, int(span[1]))
        if stop <= start:
            raise ValueError(f"empty loop range {span}")
        self._loop = (start, stop)

    def seek(self, sample: int) -> None:
        """Move the playhead to ``sample`` (clipped to the signal)."""
        sample = min(max(0, int(sample)), self.n_samples)
        self._seek_request = (self._seek_request[0] + 1, sample)

    def edited(self) -> np.ndarray:
        """A read-only view of the edited buffer ``[N, C]`` float32."""
        view = self._edited.view()
        view.flags.writeable = False
        return view

    def heard(self) -> np.ndarray:
        """A read-only view of the buffer that plays now ``[N, C]``: the original with bypass on."""
        view = (self._original if self._bypass else self._edited).view()
        view.flags.writeable = False
        return view

    def use_device(self, device: OutputDevice) -> None:
        """Play on ``device`` from now on (after looking for devices again); forgets a failure."""
        self.close()
        self.device = device
        self._open_error = self._failure = ""

    # ------------------------------------------------------------------------------- transport
    def play(self, *, from_sample: int | None = None, until: int | None = None) -> None:
        """Start playing (from ``from_sample`` when given), up to sample ``until`` when given
        (else to the end), unless a loop is set.

        Raises RuntimeError when playback is unavailable, or when starting fails; a start that
        fails records :attr:`failure` first.
        """
        import sounddevice as sd

        if from_sample is not None:
            self.seek(from_sample)
        self._end = None if until is None else min(max(0, int(until)), self.n_samples)
        position, loop = self.position, self._loop
        if loop is not None and not loop[0] <= position < loop[1]:
            self.seek(loop[0])
        elif loop is None and position >= (self.n_samples if self._end is None else self._end):
            self.seek(0)
        stream = self._ensure_stream()
        self._finished = False
        self._progress = (self._left, time.monotonic())
        self._playing = True
        try:
            if not stream.active:
                _bounded(lambda: self._restart(stream), PORTAUDIO_WAIT_S)
        except (sd.PortAudioError, _NoAnswer) as exc:
            self._fail(f"starting failed: {exc}", abandon=isinstance(exc, _NoAnswer))
            raise RuntimeError(f"playback stopped: {self._failure}") from exc

    @staticmethod
    def _restart(stream) -> None:
        if not stream.stopped:  # it ended by itself (inactive but not stopped)
            stream.stop()
        stream.start()

    def pause(self) -> None:
        """Stop sound at once; the playhead stays where it is."""
        import sounddevice as sd

        self._playing = False
        stream = self._stream
        if stream is None:
            return
        try:
            if stream.active:
                _bounded(stream.stop, PORTAUDIO_WAIT_S)
        except (sd.PortAudioError, _NoAnswer) as exc:
            self._fail(f"stopping failed: {exc}", abandon=isinstance(exc, _NoAnswer))

    def close(self) -> None:
        """Stop and release the stream (the engine can play again later)."""
        self._playing = False
        stream, self._stream = self._stream, None
        if stream is not None:
            _close(stream)

    def check(self) -> bool:
        """While playing, look for signs that the device went away; True when it just failed.

        Call it often from one thread (the GUI polls it with the playhead). The signs: the stream
        turned inactive (PortAudio may have called its finished callback), its callback has not run
        for :data:`STALL_S`, or PortAudio raised. On any of them playback stops, the stream is released
        and :attr:`failure` says why; the playhead stays where the sound stopped.
        """
        import sounddevice as sd

        stream = self._stream
        if not self._playing or stream is None:
            return False
        left, now = self._left, time.monotonic()
        if left != self._progress[0]:
            self._progress = (left, now)
        try:
            active = stream.active
        except sd.PortAudioError as exc:
            detail = str(exc)
        else:
            if not active:  # the finished callback only tells how it ended
                detail = "PortAudio ended the stream" if self._finished else "the stream stopped"
            elif now - self._progress[1] > STALL_S:
                detail = f"no sound was asked for in {now - self._progress[1]:.1f} s"
            else:
                return False
        if not self._playing:  # it reached the end while we looked: no fault
            return False
        self._fail(detail)
        return True

    def _fail(self, detail: str, *, abandon: bool = False) -> None:
        """Playback stopped because the device failed: record why and let go of the stream.

        The stream is closed on a helper thread without waiting (closing a stream whose device died
        can block, and so can terminating PortAudio at exit, which is skipped from now on); with
        ``abandon`` (a call into it never returned) it is not touched again.
        """
        self._playing = False
        self._failure = f"the output device {self.device.name!r} went away ({detail})"
        self.failures += 1
        _leave_portaudio_at_exit()
        stream, self._stream = self._stream, None
        if stream is not None and not abandon:
            _start_call(lambda: _close(stream))

    def _stream_finished(self) -> None:
        """PortAudio's finished callback (its thread): the stream became inactive."""
        self._finished = True

    def _ensure_stream(self):
        if not self.available:
            raise RuntimeError(f"Playback is unavailable: {self.reason}")
        if self._stream is None:
            import sounddevice as sd

            if portaudio_stuck(wait=PORTAUDIO_WAIT_S):
                self._open_error = STUCK_REASON
                raise RuntimeError(f"Playback is unavailable: {self.reason}")
            try:
                self._stream = _bounded(
                    lambda: sd.OutputStream(
                        samplerate=self.sample_rate,
                        blocksize=self._blocksize,
                        device=self.device.index,
                        channels=min(self.n_channels, self.device.max_channels),
                        dtype="float32",
                        callback=self._fill,
                        finished_callback=self._stream_finished,
                    ),
                    PORTAUDIO_WAIT_S,
                )
            except (sd.PortAudioError, _NoAnswer) as exc:
                log.warning(
                    "PortAudio cannot open %r at %s Hz: %s", self.device.name, self.sample_rate, exc
                )
                self._open_error = (
                    f"the output device {self.device.name!r} cannot play sound at "
                    f"{self.sample_rate} Hz. Choose another one as the system's default output "
                    "and press Play to look again"
                )
                raise RuntimeError(f"Playback is unavailable: {self.reason}") from exc
        return self._stream

    # ---------------------------------------------------------------------------------- writer
    def update_span(self, start_sample: int, samples: np.ndarray) -> None:
        """Replace the edited signal's samples ``[start, start + n)`` with ``samples [C, n]``.

        Safe to call from any thread except the audio callback's, while playing: see the module
        docstring for why no block handed to the device mixes old and new samples.
        """
        new = _frames_major(samples)
        if new.shape[1] != self.n_channels:
            raise ValueError(f"expected {self.n_channels} channels, got {new.shape[1]}")
        start = int(start_sample)
        if start < 0 or start + len(new) > self.n_samples:
            raise ValueError(f"span [{start}, {start + len(new)}) is outside [0, {self.n_samples})")
        with self._write_lock:
            if self._edited is self._original:
                self._edited = self._original.copy()
            self._patch = (start, new)
            self._edited[start : start + len(new)] = new
            entered, deadline = self._entered, time.monotonic() + WRITER_WAIT_S
            while self._left < entered and time.monotonic() < deadline:
                time.sleep(0.0005)
            self._patch = None

    # -------------------------------------------------------------------------- audio callback
    def _fill(self, outdata: np.ndarray, frames: int, time_info, status) -> None:
        """PortAudio's callback: copy ``frames`` samples from the current buffer and advance."""
        self._entered += 1
        try:
            if status.output_underflow:
                self.underflows += 1
            request = self._seek_request
            if request[0] != self._seek_served:
                self._seek_served = request[0]
                self._position = request[1]
            if not self._playing:
                outdata.fill(0)
                return
            bypass = self._bypass
            source = self._original if bypass else self._edited
            channels = outdata.shape[1]
            position, loop, written = self._position, self._loop, 0
            stop = self.n_samples if self._end is None else self._end
            while written < frames:
                end = loop[1] if loop is not None else stop
                if position >= end:
                    if loop is None:
                        outdata[written:].fill(0)
                        self._playing = False
                        break
                    position = loop[0]
                    continue
                count = min(frames - written, end - position)
                outdata[written : written + count] = source[position : position + count, :channels]
                patch = None if bypass else self._patch
                if patch is not None:
                    lo = max(position, patch[0])
                    hi = min(position + count, patch[0] + len(patch[1]))
                    if lo < hi:
                        out0 = written + lo - position
                        outdata[out0 : out0 + hi - lo] = patch[1][
                            lo - patch[0] : hi - patch[0], :channels
                        ]
                position += count
                written += count
            self._position = position
        finally:
            self._left += 1
