"""A value read for the window (the level under the pointer) comes to the host without the window's
thread waiting for the GPU: on CUDA it arrives after the work queued before it, and says whether it
did (:class:`~spectropaint.transforms.torch_device.HostRead`)."""

import numpy as np
import pytest
import torch

from spectropaint.transforms.torch_device import HostRead


def test_on_the_cpu_the_values_are_there_at_once():
    tensor = torch.tensor([1.5, -2.0, 3.25])
    read = HostRead(tensor)
    assert read.ready()
    np.testing.assert_array_equal(read.values(), [1.5, -2.0, 3.25])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_on_cuda_the_values_come_after_the_work_queued_before_them():
    tensor = torch.zeros(4, device="cuda")
    torch.cuda.synchronize()
    # the second round is the one asked of: in the first, CUDA loads the sleep's kernel and the
    # read's pinned memory is allocated (on the H200 the first read was ready at once)
    for expected in (7.0, 14.0):
        torch.cuda._sleep(200_000_000)  # the stream busy for about 0.1 s
        tensor += 7.0  # queued behind it: the read must see it
        read = HostRead(tensor)
        if expected == 14.0:
            assert not read.ready()  # asking does not wait
        np.testing.assert_array_equal(read.values(), [expected] * 4)  # waits, then has the edit
        assert read.ready()
