"""Principal component analysis from the covariance matrix, with a choice of eigen-solver.

Fit = one covariance GEMM (:func:`gpuknn.linalg.covariance`: ``X^T X - n mu mu^T`` when the
column offsets are small against their spread, centred row chunks otherwise) + the ``p``
leading eigenpairs of the covariance; transform = one GEMM. The covariance is
``n_features x n_features``, so the eigen-solver never touches the samples: its cost is
independent of ``n_samples``.

Solvers (all return the same conventions):

* ``"eigh"``: dense direct solver, O(n_features^3), exact; the reference and the right
  choice for small ``n_features`` or ``p`` close to ``n_features``.
* ``"block"``: subspace iteration with Rayleigh-Ritz (:func:`gpuknn.linalg.block_eigh`),
  shifted by about half of the first unwanted eigenvalue (a covariance is positive
  semi-definite); GEMM-bound, for ``p`` well below ``n_features`` and on GPUs.
* ``"deflation"``: the seed algorithm, power method + Hotelling deflation, warm-started
  (:func:`gpuknn.linalg.deflated_power_method`); p sequential chains of matrix-vector
  products, slow when eigenvalues cluster; kept for teaching and comparison.

Sign convention: each component's largest-magnitude loading is positive (first index on
ties), so NumPy and CuPy fits agree without a data-dependent flip.
"""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any

import numpy as np
from array_api_compat import is_dask_array  # checks sys.modules: never imports Dask
from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin

from ._backend import (
    _dtype_from,
    array_namespace,
    check_int,
    device_of,
    from_numpy,
    max_abs,
    to_numpy,
    validate_matrix,
)
from .base import BaseEstimator, check_is_fitted, validate_data
from .errors import InvalidInputError
from .linalg.block import block_eigh
from .linalg.covariance import covariance_and_mean
from .linalg.deflation import deflated_power_method
from .linalg.eigh import eigh
from .ops.limits import underflow_scale

#: Float64 moments below this lost their precision to underflow (2**54 times the smallest
#: normal): the Dask fit then rescales its data.
_MOMENT_UNDERFLOW = 2.0**-968

__all__ = ["PCA"]

_SOLVERS = ("eigh", "deflation", "block")


class PCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Principal component analysis (scikit-learn compatible subset).

    Parameters
    ----------
    n_components : int, float or None, default None
        ``int``: number of components ``1 <= p <= min(n_samples, n_features)``.
        ``float`` in (0, 1): the smallest ``p`` whose cumulative explained-variance ratio
        is *greater* than this fraction (scikit-learn's rule); this needs the whole
        spectrum, computed by ``eigvalsh`` (cheap, no eigenvectors) before the solver runs.
        ``None``: ``min(n_samples, n_features)``.
    solver : {"eigh", "deflation", "block"}, default "eigh"
        Eigen-solver for the covariance (see the module notes).
    tol : float, optional
        Solver tolerance; default 1e-6 for "deflation" (``||v_t - v_{t-1}||_inf``, gives
        relative eigenvalue errors ~1e-7 on Fashion-MNIST) and, for "block", 1e-10 in
        float64 and 1e-6 in float32 (relative residual). Ignored by "eigh".
    max_iter : int, optional
        Iteration limit; default 100_000 per component ("deflation"), 1000 ("block").
    random_state : int, numpy Generator or None
        Seed of the iterative solvers' start vectors.
    dtype : {None, "float32", "float64"}, default None
        Precision of the centring and covariance GEMM; None keeps the input's floating
        dtype (float32 data: ~1e-6 relative error in the covariance; "float64" makes it
        ~1e-9 at about 2x the GEMM time on a CPU). "eigh" always works in float64 (the
        covariance is only ``n_features^2``); the iterative solvers multiply in the
        covariance dtype. Fitted attributes are stored in the covariance dtype.

    Attributes
    ----------
    components_ : array, shape ``(n_components_, n_features)``
        Principal axes, unit rows, descending variance.
    explained_variance_ : array, shape ``(n_components_,)``
        Covariance eigenvalues (divisor ``n_samples - 1``), negatives clipped to 0.
    explained_variance_ratio_ : array, shape ``(n_components_,)``
        ``explained_variance_ / trace(covariance)``: fraction of the *total* variance.
    singular_values_ : array, shape ``(n_components_,)``
        ``sqrt(explained_variance_ * (n_samples - 1))``.
    mean_ : array, shape (n_features,)
        Per-feature training mean.
    n_components_, n_features_in_, n_samples_ : int
    n_iter_ : array of int64, shape ``(n_components_,)``, in X's namespace and on its device
        Iterations per component ("deflation"), the block's iteration count repeated
        ("block"), zeros ("eigh").
    converged_ : bool
        Whether the iterative solver met its tolerance (always True for "eigh").

    Notes
    -----
    Fit cost O(n_samples n_features^2) for the covariance plus the solver's; memory
    O(n_features^2), plus one centred 16 MiB chunk of X when columns have large offsets.
    Transform never refits: it centres with the training mean.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(50, 4))
    >>> pca = PCA(2, solver="block", random_state=0).fit(X)
    >>> pca.transform(X).shape
    (50, 2)
    """

    def __init__(
        self,
        n_components: int | float | None = None,
        *,
        solver: str = "eigh",
        tol: float | None = None,
        max_iter: int | None = None,
        random_state: Any = None,
        dtype: Any = None,
    ) -> None:
        self.n_components = n_components
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.dtype = dtype

    # ------------------------------------------------------------------ fitting
    def _n_components(self, n_samples: int, n_features: int) -> tuple[int, float | None]:
        limit = min(n_samples, n_features)
        nc = self.n_components
        if nc is None:
            return limit, None
        if isinstance(nc, Integral) and not isinstance(nc, bool):
            if not 1 <= int(nc) <= limit:
                raise InvalidInputError(f"n_components={int(nc)} must be in [1, min(n_samples, n_features)={limit}]")
            return int(nc), None
        if isinstance(nc, Real) and not isinstance(nc, bool) and 0.0 < float(nc) < 1.0:
            return 0, float(nc)
        raise InvalidInputError(f"n_components must be None, an int in [1, {limit}] or a float in (0, 1), got {nc!r}")

    def _check_options(self) -> None:
        """``tol``, ``max_iter``, ``random_state`` and ``dtype`` of any type: the right kind,
        or :class:`InvalidInputError` naming the parameter (never a TypeError from deep in
        a solver)."""
        tol = self.tol
        if tol is not None and (
            isinstance(tol, bool) or not isinstance(tol, Real) or not (float(tol) > 0 and float(tol) < float("inf"))
        ):
            raise InvalidInputError(f"tol must be None or a positive number, got {tol!r}")
        if self.max_iter is not None:
            check_int(self.max_iter, name="max_iter", low=1)
        rs = self.random_state
        try:
            if isinstance(rs, (bool, float, str, bytes)):
                raise TypeError
            np.random.default_rng(rs)
        except (TypeError, ValueError):
            raise InvalidInputError(
                f"random_state must be None, a non-negative int or a numpy Generator, got {rs!r}"
            ) from None
        if self.dtype is not None:
            _dtype_from(self.dtype, np)  # the kind of dtype; the namespace's comes at fit

    def _check_solver_and_options(self) -> None:
        if not isinstance(self.solver, str) or self.solver not in _SOLVERS:
            raise InvalidInputError(f"solver must be one of {_SOLVERS}, got {self.solver!r}")
        self._check_options()

    def fit(self, X: Any, y: Any = None) -> PCA:
        """Fit on ``X`` (n_samples, n_features); ``y`` is ignored. Returns ``self``.

        A dask array is fitted from its chunks' moments (:func:`gpuknn.distributed.pca_moments`).
        """
        self._check_solver_and_options()
        if is_dask_array(X):
            from .distributed.pca import pca_moments  # noqa: PLC0415 - Dask only when given its arrays

            if hasattr(self, "feature_names_in_"):  # a dask array has no column names
                del self.feature_names_in_
            moments = pca_moments(X, dtype=self.dtype)
            C64 = moments[0]
            cxp = array_namespace(C64)
            scale = 1.0
            # The float64 moments of tiny data underflow (float32 data cannot: their products
            # are formed in float64). Only then one more pass, for max |X|, and the moments of
            # X times a power of two.
            if float(cxp.max(cxp.abs(C64))) < _MOMENT_UNDERFLOW:
                scale = underflow_scale(float(abs(X).max().compute()), np.float64, np)
                if scale != 1.0:
                    moments = pca_moments(X * scale, dtype=self.dtype)
            self._fit_covariance(*moments)
            self._unscale(scale)
            return self
        xp = array_namespace(X)
        # the finite check comes with the covariance's column sums and Gram diagonal
        X = validate_data(self, X, reset=True, xp=xp, dtype=self.dtype, check_finite=False)
        n_samples, n_features = X.shape
        if n_samples < 2:
            raise InvalidInputError(
                f"PCA needs at least 2 samples, got n_samples = {n_samples} (X of shape {tuple(X.shape)})"
            )
        # Tiny data: the covariance's products underflow (X * 1e-170 gave unit axes and
        # ratios of 0, issue 32). X times a power of two (exact) brings them into range;
        # the scale-free results (components, ratios) stay, the others are scaled back.
        scale = underflow_scale(max_abs(X, xp), X.dtype, xp)
        C64, mean = covariance_and_mean(X if scale == 1.0 else X * scale)
        self._fit_covariance(C64, mean, n_samples, n_features, X.dtype)
        self._unscale(scale)
        return self

    def _unscale(self, scale: float) -> None:
        """Attributes of a fit on X times ``scale`` back in X's units (components and
        ratios are scale free)."""
        if scale != 1.0:
            self.mean_ = self.mean_ / scale
            # in two steps: scale**2 may overflow; a variance below the dtype's range is 0
            self.explained_variance_ = self.explained_variance_ / scale / scale
            self.singular_values_ = self.singular_values_ / scale

    def _fit_covariance(self, C64: Any, mean: Any, n_samples: int, n_features: int, dtype: Any) -> PCA:
        """The fit from the float64 covariance and mean (shared with the Dask fit)."""
        xp = array_namespace(C64)
        p, fraction = self._n_components(n_samples, n_features)
        total = float(xp.sum(xp.linalg.diagonal(C64)))
        if fraction is not None:
            spectrum = to_numpy(xp.flip(xp.linalg.eigvalsh(C64), axis=0))
            ratio = np.cumsum(np.clip(spectrum, 0, None)) / total if total > 0 else np.ones(1)
            p = min(int(np.searchsorted(ratio, fraction, side="right")) + 1, n_features, n_samples)
        # eigh runs in float64 (LAPACK's float32 error is relative to the largest eigenvalue);
        # the iterative solvers' products run in the covariance dtype, which limits them no
        # more than the covariance's own float32 error does (block: small problems in float64).
        if self.solver == "eigh":
            result = self._solve(C64, p)
            lam = result.eigenvalues
        else:
            # Iterate on C scaled to max |entry| 1: the iterations are scale-invariant, and
            # float32 data of tiny (or huge) scale would otherwise underflow in the products.
            scale = float(xp.max(xp.abs(C64)))
            scale = scale if scale > 0 else 1.0
            result = self._solve(xp.astype(C64 / scale, dtype), p)
            lam = xp.astype(result.eigenvalues, xp.float64) * scale
        lam = xp.where(lam < 0, xp.zeros_like(lam), lam)
        self.mean_ = xp.astype(mean, dtype)
        self.components_ = xp.astype(xp.matrix_transpose(result.eigenvectors), dtype)
        self.explained_variance_ = xp.astype(lam, dtype)
        ratio = lam / total if total > 0 else xp.zeros_like(lam)
        self.explained_variance_ratio_ = xp.astype(ratio, dtype)
        self.singular_values_ = xp.astype(xp.sqrt(lam * (n_samples - 1)), dtype)
        self.n_components_ = p
        self.n_features_in_ = n_features
        self.n_samples_ = n_samples
        self.n_iter_ = from_numpy(np.asarray(result.n_iter, dtype=np.int64), xp, device=device_of(C64))
        self.converged_ = bool(np.all(result.converged))
        return self

    def _solve(self, C: Any, p: int):
        if self.solver == "eigh":
            return eigh(C, p)
        if self.solver == "block":
            return block_eigh(
                C,
                p,
                tol=self.tol,
                max_iter=1000 if self.max_iter is None else self.max_iter,
                random_state=self.random_state,
                psd=True,
            )
        return deflated_power_method(
            C,
            p,
            tol=1e-6 if self.tol is None else self.tol,
            max_iter=100_000 if self.max_iter is None else self.max_iter,
            random_state=self.random_state,
            warm_start=True,
        )

    @property
    def _n_features_out(self) -> int:
        """Output width for ``get_feature_names_out`` (``pca0``, ``pca1``, ...)."""
        return self.n_components_

    # --------------------------------------------------------------- projecting
    def _check_X(self, X: Any, attr: str, name: str) -> tuple[Any, Any]:
        check_is_fitted(self, "components_")
        n_cols = getattr(self, attr)
        xp = array_namespace(self.components_)
        if attr == "n_features_in_":
            return validate_data(self, X, reset=False, xp=xp, device=device_of(self.components_)), xp
        X = validate_matrix(X, xp, name=name, device=device_of(self.components_))
        if X.shape[1] != n_cols:
            raise InvalidInputError(f"{name} has {X.shape[1]} columns, expected {n_cols}")
        return X, xp

    def transform(self, X: Any) -> Any:
        """Project ``X`` (n, n_features) onto the components: ``(n, n_components_)``.

        Centres with the *training* mean; output in X's floating dtype. A dask array gives a
        lazy dask array (:func:`gpuknn.distributed.project`).
        """
        if is_dask_array(X):
            from .distributed.pca import project  # noqa: PLC0415 - Dask only when given its arrays

            check_is_fitted(self, "components_")
            return project(X, self.components_, self.mean_)
        X, xp = self._check_X(X, "n_features_in_", "X")
        W = xp.astype(self.components_, X.dtype)
        return xp.matmul(X - xp.astype(self.mean_, X.dtype), xp.matrix_transpose(W))

    def fit_transform(self, X: Any, y: Any = None) -> Any:
        """``fit(X)`` then ``transform(X)``."""
        return self.fit(X).transform(X)

    def inverse_transform(self, Z: Any) -> Any:
        """Map scores ``Z`` ``(n, n_components_)`` back to feature space ``(n, n_features)``."""
        Z, xp = self._check_X(Z, "n_components_", "Z")
        W = xp.astype(self.components_, Z.dtype)
        return xp.matmul(Z, W) + xp.astype(self.mean_, Z.dtype)
