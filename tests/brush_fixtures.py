"""The small noise document the brush tests paint on (16 kHz, n_fft 256, hop 64)."""

import numpy as np

from spectropaint.transforms.document import Document
from spectropaint.transforms.stft import STFTSettings

RATE = 16000


def small_document(seconds=1.0, channels=2, seed=0, device="cpu"):
    samples = 0.1 * np.random.default_rng(seed).standard_normal((channels, int(RATE * seconds)))
    return Document.from_samples(
        samples, RATE, settings=STFTSettings(n_fft=256, hop=64), device=device
    )
