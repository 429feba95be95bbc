"""Test helpers: a backend under test and an assert that checks namespace and device too."""

from __future__ import annotations

import contextlib

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


def torch_device(kind, index=None):
    """The ``torch.device`` a tensor made on ``kind`` reports, index included.

    A tensor on CUDA reports ``cuda:0`` (the current device), and ``torch.device("cuda")``
    compares unequal to it; a backend must name the device its arrays will report, or every
    device check fails. CPU tensors report ``cpu``, without an index.
    """
    import torch

    if kind == "cpu":
        return torch.device("cpu")
    if index is None:
        index = torch.cuda.current_device()
    return torch.device(kind, index)


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


class HostSyncs:
    """Counts host syncs of torch code: ``.item()``/``bool()``/``int()``/``float()`` of a
    tensor (``aten._local_scalar_dense``), ops whose output size depends on the data
    (``nonzero``, ``unique``, ``masked_select``), and gpuknn's own ``to_numpy`` transfers
    (a CPU tensor's ``.numpy()`` dispatches nothing, so those are counted at the source).
    On a GPU each is a stall of the device queue; on torch CPU they can be counted.

    Use as a context manager; ``count`` is the total, ``by_kind`` the breakdown.
    """

    _DATA_DEPENDENT = {
        "_local_scalar_dense",
        "nonzero",
        "unique",
        "_unique",
        "_unique2",
        "unique_dim",
        "unique_consecutive",
        "masked_select",
    }

    def __init__(self):
        from collections import Counter

        self.by_kind = Counter()
        self._patched = []

    @property
    def count(self):
        return sum(self.by_kind.values())

    def __enter__(self):
        import sys

        from torch.utils._python_dispatch import TorchDispatchMode

        import gpuknn._backend as backend

        counter = self

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                name = func.overloadpacket.__name__
                if name in HostSyncs._DATA_DEPENDENT:
                    counter.by_kind[name] += 1
                return func(*args, **(kwargs or {}))

        original = backend.to_numpy

        def counted(x):
            if hasattr(x, "shape") and not isinstance(x, np.ndarray):
                counter.by_kind["to_numpy"] += 1
            return original(x)

        for mod in list(sys.modules.values()):
            if getattr(mod, "__name__", "").startswith("gpuknn") and getattr(mod, "to_numpy", None) is original:
                mod.to_numpy = counted
                self._patched.append(mod)
        self._original = original
        self._mode = Mode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        self._mode.__exit__(*exc)
        for mod in self._patched:
            mod.to_numpy = self._original
        return False


class Launches:
    """Counts the kernel launches of torch code: every aten op dispatched, except views
    (which launch nothing on a GPU). On a GPU each launch costs ~5-15 µs of host time, so
    the count, taken on torch CPU, is what the engine's host overhead on a GPU will be.

    Use as a context manager; ``count`` is the total, ``by_op`` the breakdown.
    """

    VIEWS = frozenset(
        "view slice select t transpose expand unsqueeze squeeze as_strided alias _unsafe_view detach "
        "permute reshape lift_fresh _reshape_alias unbind split split_with_sizes narrow diagonal".split()
    )

    def __init__(self):
        from collections import Counter

        self.by_op = Counter()

    @property
    def count(self):
        return sum(self.by_op.values())

    def __enter__(self):
        from torch.utils._python_dispatch import TorchDispatchMode

        counter = self

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                name = func.overloadpacket.__name__
                if name not in Launches.VIEWS:
                    counter.by_op[name] += 1
                return func(*args, **(kwargs or {}))

        self._mode = Mode()
        self._mode.__enter__()
        return self

    def __exit__(self, *exc):
        self._mode.__exit__(*exc)
        return False


class ReplayRandomState:
    """A ``numpy.random.default_rng`` stand-in that draws NumPy's legacy ``RandomState``
    numbers, as imbalanced-learn does: monkeypatched into a sampler module, it makes the
    sampler's random choices imbalanced-learn's, so their outputs can be compared exactly."""

    def __init__(self, seed):
        self.rs = np.random.RandomState(seed)

    def integers(self, low, high, size):
        return self.rs.randint(low, high, size=size)

    def random(self, size):
        return self.rs.random_sample(size)

    def uniform(self, low, high, size):
        return self.rs.uniform(low, high, size=size)

    def permutation(self, n):
        return self.rs.permutation(n)


def gaussian_classes(seed, n=(60, 25, 10), d=3, spread=1.2):
    """Overlapping Gaussian classes of sizes ``n``, shuffled (continuous values: no distance
    ties, so every exact-neighbour oracle agrees on the order)."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(i * spread, 1.0, (m, d)) for i, m in enumerate(n)])
    y = np.concatenate([np.full(m, i) for i, m in enumerate(n)])
    perm = rng.permutation(y.shape[0])
    return X[perm], y[perm]


def subsample_classes(X, y, sizes, seed):
    """Classes ``0..len(sizes)-1`` cut to ``sizes`` random rows each, original order kept."""
    rng = np.random.default_rng(seed)
    rows = np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c), m, replace=False) for c, m in enumerate(sizes)]))
    return X[rows], y[rows]


def assert_same_resample(backend, ours, ref, X, y):
    """``ours`` (gpuknn, on ``backend``) and ``ref`` (imbalanced-learn, on NumPy) resample
    ``(X, y)`` alike: y exactly, X to 1e-12, the same sampling strategy. Returns ref's output."""
    Xr, yr = ours.fit_resample(backend.asarray(X), backend.asarray(y))
    Xe, ye = ref.fit_resample(X, y)
    assert_xp(yr, ye, backend)
    assert_xp(Xr, Xe, backend, exact=False, rtol=1e-12, atol=1e-12)
    assert ours.sampling_strategy_ == {int(c): int(v) for c, v in ref.sampling_strategy_.items()}
    return Xe, ye


def process_env():
    """This process's environment, less the variable pytest itself updates per test phase."""
    import os

    return {k: v for k, v in os.environ.items() if k != "PYTEST_CURRENT_TEST"}


def restore_env(saved):
    """Put this process's environment back to ``saved`` (a :func:`process_env`)."""
    import os

    for k in set(process_env()) - set(saved):
        del os.environ[k]
    os.environ.update(saved)


@contextlib.contextmanager
def local_dask_cluster():
    """Context of a module-scoped fixture: ``(client, saved, changed)`` on a LocalCluster of
    2 worker processes × 1 thread on loopback. Starting one sets OMP/MKL/OPENBLAS_NUM_THREADS=1
    in this process's environment: ``changed`` says what it set, the environment is restored
    to ``saved`` at once and checked again at the end. ``processes=False`` with a host fails
    to start; ``dashboard_address=":0"``: 8787 may be taken by another cluster."""
    import pytest

    distributed = pytest.importorskip("distributed")
    saved = process_env()
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0", host="127.0.0.1"
    )
    changed = {v: process_env().get(v) for v in process_env() if process_env().get(v) != saved.get(v)}
    restore_env(saved)
    client = distributed.Client(cluster)
    try:
        yield client, saved, changed
    finally:
        client.close()
        cluster.close()
        restore_env(saved)
        assert process_env() == saved
