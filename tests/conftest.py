"""Shared fixtures: the ``xp`` fixture runs a test on every array backend."""

from __future__ import annotations

import os
from pathlib import Path

# scikit-learn's array-API dispatch (and its estimator checks on array-API input) needs
# SciPy's array-API mode, which is read once, when SciPy is first imported: set it here,
# before any test module imports SciPy.
os.environ.setdefault("SCIPY_ARRAY_API", "1")

import array_api_compat
import array_api_compat.numpy
import pytest


def _cuda_available() -> bool:
    try:
        import cupy

        return bool(cupy.is_available())
    except Exception:
        return False


@pytest.fixture
def xp(backend):
    """Array namespace under test (see ``backend``: every backend and device)."""
    return backend.xp


@pytest.fixture
def to_xp(backend):
    """Function moving host (NumPy) data into the backend under test, on its device."""
    return backend.asarray


def fashion_mnist_dir() -> Path | None:
    """Directory holding the real Fashion-MNIST IDX files, or None."""
    cands = [os.environ.get("GPUKNN_DATA"), "data/fashion-mnist", "/usr/share/datasets/fashion-mnist"]
    for c in cands:
        if (
            c
            and (Path(c) / "train-images-idx3-ubyte.gz").exists()
            or (c and (Path(c) / "train-images-idx3-ubyte").exists())
        ):
            return Path(c)
    return None


@pytest.fixture
def fashion_dir():
    d = fashion_mnist_dir()
    if d is None:
        pytest.skip("real Fashion-MNIST not found (apt-get install dataset-fashion-mnist, or set GPUKNN_DATA)")
    return d


# Backends of the "one answer everywhere" contract tests: NumPy, array_api_strict on its
# default device and on a second one, torch on the CPU (skipped where torch is absent;
# `scripts/test.sh` installs it when GPUKNN_TEST_TORCH=1, as `.ci/run` sets), and CuPy /
# torch on CUDA where a GPU is present.
_EVERY = ["numpy", "strict", "strict-device1", "torch", "cupy", "torch-cuda"]


@pytest.fixture(params=_EVERY)
def backend(request):
    """Every backend of the contract tests (a :class:`helpers.Backend`)."""
    import helpers
    from helpers import Backend

    name = request.param
    if name == "numpy":
        return Backend(name, array_api_compat.numpy)
    if name.startswith("strict"):
        strict = pytest.importorskip("array_api_strict")
        return Backend(name, strict, strict.Device("device1") if name.endswith("device1") else None)
    if name.startswith("torch"):
        torch = pytest.importorskip("torch")
        import array_api_compat.torch as tx

        if name == "torch-cuda":
            if os.environ.get("GPUKNN_REHEARSE_GPU") == "1":
                # scripts/gpu_check.sh --rehearse: torch on the CPU stands in for the GPU
                # backend, so the check's selection ("cupy or torch-cuda") runs its tests.
                return Backend(name, tx, torch.device("cpu"))
            if not torch.cuda.is_available():
                pytest.skip("torch backend: no CUDA device")
            return Backend(name, tx, helpers.torch_device("cuda"))
        return Backend(name, tx, helpers.torch_device("cpu"))
    if not _cuda_available():
        pytest.skip("cupy backend: no CUDA device")
    import cupy

    return Backend(name, array_api_compat.array_namespace(cupy.empty(1)))
