"""Errors of the GPU side: no usable adapter, a GPU that fails while in use, a document the adapter
cannot hold, an image file; and :func:`gpu_errors`, which turns wgpu's errors into ours."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import wgpu

from spectropaint.transforms.errors import FileError, SpectroPaintError

GPU_ADVICE = (
    "try again; if it happens again, set SPECTROPAINT_ADAPTER=cpu to render in software, "
    "or update the GPU driver"
)
_ERROR_KINDS = (
    (wgpu.GPUOutOfMemoryError, "it is out of memory"),
    (wgpu.GPUValidationError, "a validation error"),
    (wgpu.GPUInternalError, "an internal error"),
    (wgpu.GPUError, "an error"),
)
_DETAIL_LIMIT = 300


class GPUUnavailableError(SpectroPaintError):
    """No wgpu adapter (or none matching ``SPECTROPAINT_ADAPTER``), or one too small for the work."""


class GPUFailedError(GPUUnavailableError):
    """The GPU reported an error while it was used: a validation error, no memory left, a lost device.

    The message says what was being done (``operation``), what the GPU said (``detail``, one line)
    and what to try.
    """

    def __init__(self, operation: str, error: wgpu.GPUError):
        self.operation = operation
        self.detail = summarize_gpu_message(str(error))
        kind = next(kind for cls, kind in _ERROR_KINDS if isinstance(error, cls))
        super().__init__(f"the GPU reported {kind} while {operation} ({self.detail}); {GPU_ADVICE}")


class ImageFileError(FileError):
    """An image file could not be written; the message names the file and the reason."""

    default_action = "write"


def summarize_gpu_message(message: str) -> str:
    """wgpu's multi-line report on one line: what follows "Caused by:", joined with ': '.

    ``"Validation Error\\n\\nCaused by:\\n  In wgpuQueueWriteTexture\\n    Parent device is lost"``
    becomes ``"In wgpuQueueWriteTexture: Parent device is lost"``.
    """
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if "Caused by:" in lines:
        lines = lines[lines.index("Caused by:") + 1 :]
    text = ": ".join(lines) or "no details"
    return text if len(text) <= _DETAIL_LIMIT else text[: _DETAIL_LIMIT - 1] + "…"


@contextlib.contextmanager
def gpu_errors(operation: str) -> Iterator[None]:
    """Turn a wgpu error raised in the block into a :class:`GPUFailedError` naming ``operation``.

    ``operation`` follows "while" in the message, e.g. ``"drawing the spectrogram"``.
    """
    try:
        yield
    except wgpu.GPUError as exc:
        raise GPUFailedError(operation, exc) from exc
