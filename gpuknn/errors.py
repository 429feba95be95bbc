"""One exception family for gpuknn.

Every error the library raises on purpose derives from :class:`GpuknnError`, and also from
the built-in class a caller would expect (``ValueError`` for bad values, ``FileNotFoundError``
for missing data), so ``except ValueError`` keeps working. Messages carry the shapes and
values that were wrong.
"""

from __future__ import annotations

from sklearn.exceptions import ConvergenceWarning as _SklearnConvergenceWarning
from sklearn.exceptions import NotFittedError as _SklearnNotFittedError

__all__ = [
    "GpuknnError",
    "InvalidInputError",
    "InvalidInputTypeError",
    "NotFittedError",
    "DataNotFoundError",
    "CorruptDataError",
    "DeviceUnavailableError",
    "ResamplingError",
    "ConvergenceWarning",
    "EmptyNeighborhoodWarning",
    "FewerClustersWarning",
    "RunDirError",
    "WorkingMemoryWarning",
]


class GpuknnError(Exception):
    """Base class of every error raised on purpose by gpuknn."""


class InvalidInputError(GpuknnError, ValueError):
    """An argument has a bad shape, dtype, value or option (NaN, k out of range, ...)."""


class InvalidInputTypeError(InvalidInputError, TypeError):
    """An input holds values of a type that cannot be used (a dict where numbers belong):
    both ``ValueError`` (as every bad input) and ``TypeError`` (as NumPy raises there)."""


class NotFittedError(GpuknnError, _SklearnNotFittedError):
    """An estimator was used before ``fit`` (also scikit-learn's ``NotFittedError``, hence a
    ``ValueError`` and an ``AttributeError``)."""


class DataNotFoundError(GpuknnError, FileNotFoundError):
    """A data set is not on disk; the message lists the paths tried and how to get it."""


class CorruptDataError(GpuknnError, ValueError):
    """A data file exists but cannot be trusted (bad magic number, shape, checksum, line)."""


class DeviceUnavailableError(GpuknnError, RuntimeError):
    """``device="gpu"`` was asked for but CuPy or a CUDA device is missing."""


class ResamplingError(GpuknnError, RuntimeError):
    """A sampler cannot resample this data with the estimator or settings given: no cluster
    of KMeans-SMOTE holds enough samples of a class, a clusterer fitted without
    ``cluster_centers_``. imbalanced-learn raises ``RuntimeError`` there, and this is one."""


class ConvergenceWarning(UserWarning):
    """An iterative solver stopped at ``max_iter`` before meeting its tolerance."""


class FewerClustersWarning(ConvergenceWarning, _SklearnConvergenceWarning):
    """:class:`~gpuknn.cluster.KMeans` found fewer distinct clusters than ``n_clusters``
    (duplicate points, most often). Both gpuknn's and scikit-learn's ``ConvergenceWarning``,
    as scikit-learn warns with the latter there."""


class EmptyNeighborhoodWarning(UserWarning):
    """A :class:`~gpuknn.RadiusNeighborsRegressor` query had no training row within
    the radius (or only neighbours of total weight 0) and was predicted as NaN, where
    scikit-learn warns with a plain ``UserWarning`` (this is one, so filters for that apply)."""


class RunDirError(GpuknnError, OSError):
    """A run directory or one of its files cannot be used: ``--out`` is a file or under one,
    not writable, locked by another run, or a write failed (disk full, read-only file system).

    ``path`` is the file or directory concerned, ``cause`` the underlying :class:`OSError`
    (or a sentence); ``errno``/``strerror``/``filename`` are those of an ``OSError``, and the
    message is one line: ``"PATH: reason"``.
    """

    def __init__(self, path, cause, message=None):
        import os  # noqa: PLC0415 - kept local: this class was appended to the module

        if isinstance(cause, OSError):
            code = cause.errno
            reason = os.strerror(code) if code else (str(cause) or type(cause).__name__)
        else:
            code, reason = None, str(cause)
        super().__init__(code, reason, os.fspath(path))
        self.path = os.fspath(path)
        self.cause = cause
        self.reason = reason
        self.message = message if message is not None else f"{self.path}: {reason}"

    def __str__(self) -> str:
        return self.message

    def __reduce__(self):
        return (type(self), (self.path, self.reason, self.message))


class WorkingMemoryWarning(UserWarning):
    """A ``working_memory`` budget (MiB) was too small for one row of tiles (one prepared
    query and reference row and a minimal score tile) and was raised to that minimum; a
    smaller budget would only make the search crawl tile by tile. Also issued when a budget
    splits a search into so many tiles that their overhead dominates. The message gives
    both budgets in MiB."""
