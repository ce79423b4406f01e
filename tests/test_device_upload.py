"""Host arrays uploaded together (:func:`~spectropaint.transforms.torch_device.to_device_together`):
a stroke's group uploads its weights, owner maps and index arrays in one copy, of mixed types, and
each must arrive whole, in its own type and shape, in a place of its own. The packing of their
bytes (:func:`~spectropaint.transforms.torch_device.packed_upload`, the GPU's path) is checked on
the CPU as well."""

import numpy as np
import pytest
import torch

from spectropaint.transforms.torch_device import packed_upload, to_device_together

DEVICES = ["cpu", *(["cuda"] if torch.cuda.is_available() else [])]
UPLOADS = [(device, to_device_together) for device in DEVICES] + [("cpu", packed_upload)]
"""Each device's upload, and the packing of bytes on the CPU (where the upload shares memory)."""


def arrays(seed: int) -> list[np.ndarray]:
    """Arrays of every type a group uploads, of sizes whose bytes are not whole multiples of 8."""
    rng = np.random.default_rng(seed)
    return [
        rng.random((3, 5), dtype=np.float32),
        rng.random(7) > 0.5,  # 7 bytes
        rng.normal(size=(2, 3)),
        rng.integers(-(2**40), 2**40, size=(2, 3, 3)),
        rng.integers(-9, 9, size=5, dtype=np.int32),  # 20 bytes
        rng.random((1, 4), dtype=np.float32),  # a second float32 array, after the others
        rng.random((2, 2)) > 0.5,
        rng.random((3, 5), dtype=np.float32),  # of the first's type and shape: stacked
    ]


@pytest.mark.parametrize(("device", "upload"), UPLOADS)
@pytest.mark.parametrize("pick", [[0], [0, 5], [0, 7], [1], list(range(8)), [3, 1, 4, 0]],
                         ids=["one", "one-type", "one-shape", "bool", "all-types", "mixed-order"])  # fmt: skip
def test_each_array_arrives_whole_in_its_type_and_shape(device, upload, pick):
    parts = [arrays(4)[index] for index in pick]
    uploaded = upload(parts, torch.device(device))
    assert len(uploaded) == len(parts)
    for part, tensor in zip(parts, uploaded, strict=True):
        assert tensor.device.type == device
        assert tensor.dtype == torch.from_numpy(part).dtype
        assert tuple(tensor.shape) == part.shape
        np.testing.assert_array_equal(tensor.cpu().numpy(), part)


@pytest.mark.parametrize(("device", "upload"), UPLOADS)
def test_the_arrays_do_not_overlap(device, upload):
    parts = arrays(5)
    expected = [part.copy() for part in parts]  # (on the CPU the tensors share the arrays' memory)
    uploaded = upload(parts, torch.device(device))
    for index, tensor in enumerate(uploaded):
        tensor.zero_()  # (False for the masks)
        for other, (part, kept) in enumerate(zip(expected, uploaded, strict=True)):
            if other > index:
                np.testing.assert_array_equal(kept.cpu().numpy(), part)


def test_a_type_given_converts_every_array():
    parts = arrays(6)[:3]
    uploaded = to_device_together(parts, torch.device("cpu"), np.float32)
    assert all(tensor.dtype == torch.float32 for tensor in uploaded)
    for part, tensor in zip(parts, uploaded, strict=True):
        np.testing.assert_array_equal(tensor.numpy(), part.astype(np.float32))
