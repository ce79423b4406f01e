"""A GPU that is missing or fails: one clear message saying what failed and what to do, no traceback.

The lost device is real: ``device.destroy()`` puts a wgpu device in the state a driver reset or an
unplugged GPU leaves it in, and every later call fails with wgpu's own error. Errors a healthy
lavapipe never gives (out of memory) are injected into the device's queue. "No adapter at all" runs
in a child process with Vulkan's and EGL's driver lists pointed at nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import numpy as np
import pytest
import soundfile as sf
import wgpu
from test_render_reference import FakeDocument, sample_magnitudes

from spectropaint.gpu import upload_batch
from spectropaint.gpu.adapter import (
    NO_ADAPTER_HINT,
    check_adapter,
    describe_adapter,
    request_device,
    shared_device,
)
from spectropaint.gpu.errors import (
    GPUFailedError,
    GPUUnavailableError,
    ImageFileError,
    summarize_gpu_message,
)
from spectropaint.gpu.png_export import export_png
from spectropaint.gpu.renderer import TARGET_FORMAT, SpectrogramRenderer
from spectropaint.transforms.errors import SpectroPaintError
from spectropaint.transforms.regions import Region

pytestmark = pytest.mark.gpu

NO_ADAPTER_ENV = {
    "VK_ICD_FILENAMES": "/nonexistent/vulkan_icd.json",  # no Vulkan driver (lavapipe hidden)
    "__EGL_VENDOR_LIBRARY_FILENAMES": "/nonexistent/egl_vendor.json",  # no OpenGL fallback
}
ADVICE = r"try again; if it happens again, set SPECTROPAINT_ADAPTER=cpu to render in software"


@pytest.fixture
def document():
    return FakeDocument(sample_magnitudes(1, 33, 40, seed=2))


@pytest.fixture
def own_device():
    """A device of the test's own (not the shared one), which it may lose or break."""
    return request_device()


def target_texture(device, size=(32, 16)):
    return device.create_texture(
        size=(*size, 1),
        format=TARGET_FORMAT,
        usage=wgpu.TextureUsage.RENDER_ATTACHMENT | wgpu.TextureUsage.COPY_SRC,
    )


def test_wgpu_reports_become_one_line():
    message = "Validation Error\n\nCaused by:\n  In wgpuQueueSubmit\n    Parent device is lost\n"
    assert summarize_gpu_message(message) == "In wgpuQueueSubmit: Parent device is lost"
    assert summarize_gpu_message("GPU is out of memory.") == "GPU is out of memory."
    long = summarize_gpu_message("x" * 5000)
    assert len(long) <= 300 and long.endswith("…")


def test_an_upload_to_a_lost_device_says_what_failed_and_what_to_do(document, own_device):
    renderer = SpectrogramRenderer(own_device, document)
    document.changed.connect(renderer.mark_dirty)
    target = target_texture(own_device)
    renderer.render(target.create_view(), 32, 16)
    own_device.destroy()
    document.write(Region(0, 10, 0, 10, (0,)), np.zeros((1, 10, 10)))
    with pytest.raises(GPUFailedError) as caught:
        renderer.prepare(32, 16)
    error = caught.value
    assert isinstance(error, GPUUnavailableError) and isinstance(error, SpectroPaintError)
    assert error.operation == "uploading the spectrogram to the GPU"
    assert "Parent device is lost" in error.detail and "\n" not in str(error)
    assert str(error).startswith(
        "the GPU reported a validation error while uploading the spectrogram to the GPU ("
    )
    assert str(error).endswith(ADVICE + ", or update the GPU driver")
    assert isinstance(error.__cause__, wgpu.GPUValidationError)
    renderer.close()  # releasing what was on a lost device does not raise


def test_a_renderer_on_a_lost_device_names_the_textures_it_wanted(document, own_device):
    own_device.destroy()
    with pytest.raises(
        GPUFailedError,
        match=r"while creating the textures of a "
        r"spectrogram of 33 bins by 40 frames \(In wgpuDeviceCreateTexture.*lost",
    ):
        SpectrogramRenderer(own_device, document)


def test_an_injected_out_of_memory_error_while_uploading(document, own_device, monkeypatch):
    renderer = SpectrogramRenderer(own_device, document)

    def out_of_memory(*args, **kwargs):
        raise wgpu.GPUOutOfMemoryError("")

    monkeypatch.setattr(upload_batch, "write_texture", out_of_memory)
    with pytest.raises(
        GPUFailedError,
        match=r"^the GPU reported it is out of memory while uploading the spectrogram to the GPU "
        r"\(GPU is out of memory\.\); " + ADVICE,
    ):
        renderer.render(target_texture(own_device).create_view(), 32, 16)
    monkeypatch.undo()
    renderer.close()


def test_an_injected_validation_error_while_drawing(document, own_device):
    renderer = SpectrogramRenderer(own_device, document)
    view = target_texture(own_device).create_view()
    renderer.render(view, 32, 16)

    def invalid(*args, **kwargs):
        raise wgpu.GPUValidationError("Validation Error\n\nCaused by:\n  In wgpuQueueSubmit\n")

    own_device.queue.submit = invalid
    with pytest.raises(
        GPUFailedError,
        match=r"validation error while drawing the spectrogram "
        r"\(In wgpuQueueSubmit\)",
    ):
        renderer.render(view, 32, 16)
    del own_device.queue.submit
    renderer.render(view, 32, 16)  # the renderer itself is intact
    renderer.close()


def test_a_png_export_on_a_failing_gpu_names_the_file_and_leaves_the_old_one(
    document, own_device, tmp_path
):
    path = tmp_path / "picture.png"
    path.write_bytes(b"the previous picture")
    renderer = SpectrogramRenderer(own_device, document)
    renderer.prepare(1, 1)
    own_device.destroy()
    with pytest.raises(ImageFileError) as caught:
        export_png(document, path, renderer=renderer)
    message = str(caught.value)
    assert message.startswith(f"cannot render '{path}': the GPU reported a validation error while")
    assert "Parent device is lost" in message and ADVICE.split(";")[1].strip() in message
    assert isinstance(caught.value.__cause__, GPUFailedError)
    assert path.read_bytes() == b"the previous picture"
    assert sorted(os.listdir(tmp_path)) == ["picture.png"]  # no temporary file left
    renderer.close()


def test_a_device_the_adapter_will_not_open_is_a_clear_error():
    def refuse(**kwargs):
        raise RuntimeError("Request device failed (2): limits exceeded")

    adapter = SimpleNamespace(
        info={"device": "Old GPU", "adapter_type": "IntegratedGPU", "backend_type": "Vulkan"},
        limits={"max-texture-dimension-2d": 8192, "max-texture-array-layers": 256},
        request_device_sync=refuse,
    )
    with pytest.raises(GPUUnavailableError) as caught:
        request_device(adapter)
    assert str(caught.value) == (
        "the GPU adapter Old GPU (IntegratedGPU) via Vulkan would not open a device "
        "(Request device failed (2): limits exceeded); choose another adapter with "
        "SPECTROPAINT_ADAPTER (cpu for software rendering) or update the GPU driver"
    )


def test_the_start_up_check_describes_the_adapter_in_use():
    assert check_adapter() == describe_adapter(shared_device().adapter)
    assert " via " in check_adapter()


# ---------------------------------------------------------------------- no adapter at all
def run_child(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
    )


def test_the_start_up_check_without_an_adapter_raises_the_hint():
    child = run_child(
        [
            "-c",
            "from spectropaint.gpu.adapter import check_adapter\n"
            "from spectropaint.gpu.errors import GPUUnavailableError\n"
            "try:\n    check_adapter()\n"
            "except GPUUnavailableError as exc:\n    print('raised:', exc)\n",
        ],
        NO_ADAPTER_ENV,
    )
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip() == f"raised: {NO_ADAPTER_HINT}"


@pytest.mark.parametrize(
    ("env", "reason"),
    [
        (NO_ADAPTER_ENV, NO_ADAPTER_HINT),
        ({"SPECTROPAINT_ADAPTER": "nomatch"}, "SPECTROPAINT_ADAPTER='nomatch' matches no wgpu "),
    ],
    ids=["no-adapter", "no-match"],
)
def test_render_png_without_a_usable_adapter_prints_one_line_and_exits_1(tmp_path, env, reason):
    source, out = tmp_path / "in.wav", tmp_path / "out.png"
    rng = np.random.default_rng(8)
    sf.write(source, 0.1 * rng.standard_normal(4000), 8000)
    child = run_child(["-m", "spectropaint", "render", str(source), "--png", str(out)], env)
    assert child.returncode == 1, child.stdout + child.stderr
    assert "Traceback" not in child.stderr and child.stdout == ""
    ours = [line for line in child.stderr.splitlines() if line.startswith("spectropaint")]
    assert len(ours) == 1 and ours[0].startswith(f"spectropaint: cannot render '{out}': {reason}")
    assert not out.exists()


def test_render_png_on_a_gpu_that_fails_prints_one_line_and_exits_1(
    tmp_path, own_device, monkeypatch, capsys
):
    from spectropaint.app.cli import main
    from spectropaint.gpu import png_export

    source, out = tmp_path / "in.wav", tmp_path / "out.png"
    sf.write(source, 0.1 * np.random.default_rng(9).standard_normal(4000), 8000)
    own_device.destroy()
    monkeypatch.setattr(png_export, "shared_device", lambda: own_device)
    assert main(["render", str(source), "--png", str(out)]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    ours = [line for line in captured.err.splitlines() if line.startswith("spectropaint")]
    assert len(ours) == 1
    assert ours[0].startswith(
        f"spectropaint: cannot render '{out}': the GPU reported a validation error while "
        "creating the textures of a spectrogram"
    )
    assert "Parent device is lost" in ours[0] and "SPECTROPAINT_ADAPTER=cpu" in ours[0]
    assert not out.exists()
