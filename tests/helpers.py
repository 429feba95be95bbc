"""Test helpers: a backend under test and an assert that checks namespace and device too."""

from __future__ import annotations

import array_api_compat
import numpy as np


class Backend:
    """An array namespace and the device a test's arrays are put on."""

    def __init__(self, name, xp, device=None):
        self.name, self.xp, self.device = name, xp, device

    def asarray(self, a):
        a = np.ascontiguousarray(a)  # torch refuses NumPy views with negative strides
        if self.name.startswith("torch"):
            import torch

            return torch.asarray(a, device=self.device)
        if self.device is None:
            return self.xp.asarray(a)
        return self.xp.asarray(a, device=self.device)

    def __repr__(self):
        return self.name


def host(a):
    """Host NumPy copy of an array of any backend or device (strict's second device too)."""
    from gpuknn._backend import to_numpy

    if array_api_compat.is_array_api_strict_namespace(array_api_compat.array_namespace(a)):
        import array_api_strict as xs

        return np.asarray(xs.asarray(a, device=xs.Device("CPU_DEVICE")))
    return to_numpy(a)


def assert_xp(actual, expected, backend, *, dtype=None, exact=True, rtol=0.0, atol=0.0):
    """``actual`` is an array of ``backend``'s namespace, on its device, of ``expected``'s
    shape (and ``dtype`` when given), equal to it (or close, with ``exact=False``)."""
    from gpuknn._backend import device_of

    want = array_api_compat.array_namespace(backend.asarray(np.zeros(1)))
    assert array_api_compat.array_namespace(actual) is want, f"{type(actual)} is not of {backend}"
    if backend.device is not None:
        assert device_of(actual) == backend.device, f"device {device_of(actual)} is not {backend.device}"
    assert tuple(actual.shape) == tuple(np.shape(expected)), f"shape {tuple(actual.shape)} != {np.shape(expected)}"
    if dtype is not None:
        assert actual.dtype == dtype, f"dtype {actual.dtype} is not {dtype}"
    if exact:
        np.testing.assert_array_equal(host(actual), expected)
    else:
        np.testing.assert_allclose(host(actual), expected, rtol=rtol, atol=atol)
