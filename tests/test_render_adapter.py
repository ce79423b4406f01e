"""Adapter choice: preference order, the environment override, and the error when there is none."""

from __future__ import annotations

import subprocess
import sys
from types import SimpleNamespace

import pytest

from spectropaint.gpu.adapter import ENV_VAR, choose_adapter, request_adapter, request_device
from spectropaint.gpu.errors import GPUUnavailableError


def fake(device: str, kind: str, backend: str = "Vulkan", vendor: str = ""):
    return SimpleNamespace(
        info={
            "device": device,
            "adapter_type": kind,
            "backend_type": backend,
            "vendor": vendor,
            "description": "",
        }
    )


LAVAPIPE = fake("llvmpipe (LLVM 15.0.6, 256 bits)", "CPU")
LAVAPIPE_GL = fake("llvmpipe (LLVM 15.0.6, 256 bits)", "CPU", "OpenGL")
INTEL = fake("Intel(R) UHD Graphics 770", "IntegratedGPU", vendor="intel")
NVIDIA_GL = fake("NVIDIA H200", "DiscreteGPU", "OpenGL", vendor="nvidia")
NVIDIA = fake("NVIDIA H200", "DiscreteGPU", vendor="nvidia")


def test_a_discrete_gpu_on_a_native_back_end_wins():
    assert choose_adapter([LAVAPIPE, INTEL, NVIDIA_GL, NVIDIA]) is NVIDIA
    assert choose_adapter([LAVAPIPE_GL, LAVAPIPE, INTEL]) is INTEL
    assert choose_adapter([LAVAPIPE_GL, LAVAPIPE]) is LAVAPIPE


def test_the_override_picks_cpu_or_a_name_part():
    adapters = [LAVAPIPE_GL, LAVAPIPE, INTEL, NVIDIA]
    assert choose_adapter(adapters, "cpu") is LAVAPIPE
    assert choose_adapter(adapters, "Intel") is INTEL
    assert choose_adapter(adapters, "opengl") is LAVAPIPE_GL


def test_an_override_that_matches_nothing_names_what_exists():
    with pytest.raises(GPUUnavailableError, match=r"SPECTROPAINT_ADAPTER='amd'.*Intel\(R\) UHD"):
        choose_adapter([LAVAPIPE, INTEL], "amd")


def test_no_adapter_at_all_is_a_clear_error():
    with pytest.raises(GPUUnavailableError, match="no wgpu adapter found.*mesa-vulkan-drivers"):
        choose_adapter([])


@pytest.mark.gpu
def test_the_environment_variable_forces_the_software_adapter(monkeypatch):
    monkeypatch.setenv(ENV_VAR, "cpu")
    adapter = request_adapter()
    assert adapter.info["adapter_type"] == "CPU"
    device = request_device(adapter)
    assert device.limits["max-texture-dimension-2d"] == adapter.limits["max-texture-dimension-2d"]


@pytest.mark.gpu
def test_triton_imported_after_the_adapter_does_not_crash_the_process():
    """Mesa's drivers load the system's LLVM; Triton's LLVM loaded after it crashed the process
    (a segmentation fault) until the adapter loaded Triton's library first."""
    pytest.importorskip("triton", reason="Triton is in the test extras (pyproject.toml)")
    script = (
        "from spectropaint.gpu.adapter import request_adapter\n"
        "request_adapter()\n"
        "import triton, torch._dynamo\n"
        "print('imported')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert "imported" in done.stdout
