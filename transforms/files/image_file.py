"""Images read as brightness, for importing a picture as sound (Pillow: PNG, JPEG and the rest).

:func:`load_image` gives the luminance of every pixel, 0 (black) to 1 (white), row 0 at the top;
any failure is an :class:`~spectropaint.transforms.errors.ImageFileError` naming the file and why.
"""

from __future__ import annotations

import os

import numpy as np

from spectropaint.transforms.errors import ImageFileError

MAX_PIXELS = 64 * 2**20
"""Larger images are refused (a picture this big holds far more detail than a spectrogram)."""


def load_image(path: str | os.PathLike) -> np.ndarray:
    """The image's luminance: float32 ``[height, width]`` in 0..1, row 0 at the top.

    Transparent pixels count as black (silence).
    """
    from PIL import Image, UnidentifiedImageError

    name = os.fspath(path)
    try:
        with Image.open(name) as image:
            width, height = image.size
            if width * height > MAX_PIXELS:
                raise ImageFileError(
                    name, f"{width}x{height} pixels is more than {MAX_PIXELS // 2**20} Mpixels"
                )
            if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
                rgba = image.convert("RGBA")
                black = Image.new("RGBA", rgba.size, (0, 0, 0, 255))
                image = Image.alpha_composite(black, rgba)
            pixels = np.asarray(image.convert("L"), dtype=np.float32) / 255.0
    except FileNotFoundError:
        raise ImageFileError(name, "no such file") from None
    except IsADirectoryError:
        raise ImageFileError(name, "it is a folder") from None
    except PermissionError:
        raise ImageFileError(name, "permission denied") from None
    except UnidentifiedImageError:
        raise ImageFileError(name, "not an image Pillow can read (PNG, JPEG, ...)") from None
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise ImageFileError(name, f"damaged or unreadable ({exc})") from None
    if pixels.size == 0:
        raise ImageFileError(name, "the image has no pixels")
    return pixels
