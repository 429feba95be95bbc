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

import math
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
#: scikit-learn's ``svd_solver`` names; "auto", "full" and "covariance_eigh" run ``solver``,
#: "arpack" and "randomized" (truncated solvers) run "block" unless ``solver`` names another.
_SVD_SOLVERS = ("auto", "full", "covariance_eigh", "arpack", "randomized")
_NORMALIZERS = ("auto", "QR", "LU", "none")


def _assess_dimension(spectrum: np.ndarray, rank: int, n_samples: int) -> float:
    """Log-likelihood of a PCA model of ``rank`` for the descending covariance ``spectrum``
    (Minka, "Automatic choice of dimensionality for PCA", NIPS 2000: the Laplace
    approximation scikit-learn's ``n_components="mle"`` maximises)."""
    n_features = spectrum.shape[0]
    eps = 1e-15
    if spectrum[rank - 1] < eps:
        return -math.inf
    # log p(U): the volume of the Stiefel manifold
    pu = -rank * math.log(2.0) + sum(
        math.lgamma((n_features - i + 1) / 2.0) - math.log(math.pi) * (n_features - i + 1) / 2.0
        for i in range(1, rank + 1)
    )
    pl = -float(np.sum(np.log(spectrum[:rank]))) * n_samples / 2.0
    v = max(eps, float(np.sum(spectrum[rank:])) / (n_features - rank))  # the noise variance
    pv = -math.log(v) * n_samples * (n_features - rank) / 2.0
    m = n_features * rank - rank * (rank + 1.0) / 2.0
    pp = math.log(2.0 * math.pi) * (m + rank) / 2.0
    filled = spectrum.copy()
    filled[rank:] = v
    i, j = np.triu_indices(n_features, k=1)
    keep = i < rank
    i, j = i[keep], j[keep]
    with np.errstate(divide="ignore", invalid="ignore"):  # equal eigenvalues: log 0 = -inf, as Minka's
        pa = float(
            np.sum(np.log((spectrum[i] - spectrum[j]) * (1.0 / filled[j] - 1.0 / filled[i])) + math.log(n_samples))
        )
    return pu + pl + pv + pp - pa / 2.0 - rank * math.log(n_samples) / 2.0


def _infer_dimension(spectrum: np.ndarray, n_samples: int) -> int:
    """The rank in ``[1, n_features - 1]`` of largest :func:`_assess_dimension` (0 never)."""
    ll = [-math.inf] + [_assess_dimension(spectrum, r, n_samples) for r in range(1, spectrum.shape[0])]
    return int(np.argmax(ll))


class PCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Principal component analysis (scikit-learn compatible subset).

    Parameters
    ----------
    n_components : int, float, "mle" or None, default None
        ``int``: number of components ``1 <= p <= min(n_samples, n_features)`` (``svd_solver
        ="arpack"``: ``< min(n_samples, n_features)``, as scikit-learn).
        ``float`` in (0, 1): the smallest ``p`` whose cumulative explained-variance ratio
        is *greater* than this fraction (scikit-learn's rule); this needs the whole
        spectrum, computed by ``eigvalsh`` (cheap, no eigenvectors) before the solver runs.
        ``"mle"``: Minka's maximum-likelihood dimension from that spectrum (needs
        ``n_samples >= n_features``). ``None``: ``min(n_samples, n_features)`` (minus one
        with ``svd_solver="arpack"``).
    copy : bool, default True
        Accepted for scikit-learn compatibility: X is never modified.
    whiten : bool, default False
        :meth:`transform` divides each score by ``sqrt(explained_variance_)`` (unit
        variance); :meth:`inverse_transform` multiplies it back.
    svd_solver : {"auto", "full", "covariance_eigh", "arpack", "randomized"}, default "auto"
        scikit-learn's name of the solver. gpuknn always solves the covariance's
        eigenproblem: "auto", "full" and "covariance_eigh" run ``solver`` (default
        "eigh", exact); "arpack" and "randomized" run "block" subspace iteration (or the
        iterative ``solver`` named). The same components up to sign (here the largest
        loading is positive, as scikit-learn's ``svd_flip``) and variances up to rounding.
    solver : {"eigh", "deflation", "block"}, default "eigh"
        Eigen-solver for the covariance (see the module notes).
    tol : float, optional
        Solver tolerance; default (None or 0.0, scikit-learn's default) 1e-6 for
        "deflation" (``||v_t - v_{t-1}||_inf``, gives relative eigenvalue errors ~1e-7 on
        Fashion-MNIST) and, for "block", 1e-10 in float64 and 1e-6 in float32 (relative
        residual). Ignored by "eigh".
    iterated_power : int >= 0 or "auto", default "auto"
        scikit-learn's power iterations of "randomized": checked and accepted; "block"
        iterates to ``tol`` instead (at most ``max_iter``).
    n_oversamples : int >= 1, default 10
        scikit-learn's oversampling of "randomized": checked and accepted; "block" chooses
        its own block size.
    power_iteration_normalizer : {"auto", "QR", "LU", "none"}, default "auto"
        Checked and accepted; "block" orthonormalises with QR every iteration.
    max_iter : int, optional
        Iteration limit; default 100_000 per component ("deflation"), 1000 ("block").
    random_state : int, numpy Generator, numpy RandomState or None
        Seed of the iterative solvers' start vectors (a RandomState gives one draw).
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
    noise_variance_ : float
        The probabilistic-PCA noise variance: the mean of the covariance eigenvalues
        beyond ``n_components_`` among ``min(n_samples, n_features)`` (0 when none is
        left), as scikit-learn. Used by :meth:`get_covariance`, :meth:`score`.

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
        n_components: int | float | str | None = None,
        *,
        copy: bool = True,
        whiten: bool = False,
        svd_solver: str = "auto",
        solver: str = "eigh",
        tol: float | None = None,
        iterated_power: Any = "auto",
        n_oversamples: int = 10,
        power_iteration_normalizer: str = "auto",
        max_iter: int | None = None,
        random_state: Any = None,
        dtype: Any = None,
    ) -> None:
        self.n_components = n_components
        self.copy = copy
        self.whiten = whiten
        self.svd_solver = svd_solver
        self.iterated_power = iterated_power
        self.n_oversamples = n_oversamples
        self.power_iteration_normalizer = power_iteration_normalizer
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.dtype = dtype

    # ------------------------------------------------------------------ fitting
    def _n_components(self, n_samples: int, n_features: int) -> tuple[int, float | str | None]:
        """``(p, rule)``: p components, or 0 and the rule that picks p from the spectrum (a
        float fraction or ``"mle"``); scikit-learn's checks of ``n_components`` and
        ``svd_solver``."""
        limit = min(n_samples, n_features)
        nc = self.n_components
        svd = self._resolve_svd_solver(n_samples, n_features)
        # scikit-learn's private attribute (its tests read it): the solver "auto" stands for.
        # gpuknn computes with ``solver`` whatever the name (see ``svd_solver``).
        self._fit_svd_solver = svd
        truncated = svd in ("arpack", "randomized")
        if nc is None:
            return (limit - 1 if svd == "arpack" else limit), None
        if isinstance(nc, str):
            if nc != "mle":
                raise InvalidInputError(f"n_components must be None, an int, a float in (0, 1) or 'mle', got {nc!r}")
            if truncated:
                raise InvalidInputError(f"n_components={nc!r} cannot be a string with svd_solver={svd!r}")
            if n_samples < n_features:
                raise InvalidInputError("n_components='mle' is only supported if n_samples >= n_features")
            return 0, "mle"
        if isinstance(nc, Integral) and not isinstance(nc, bool):
            # scikit-learn's bounds and words: the full solvers allow 0 components (a model
            # of pure noise, which score() can compare), the truncated ones need 1
            low = 1 if truncated else 0
            if not low <= int(nc) <= limit:
                raise InvalidInputError(
                    f"n_components={int(nc)} must be between {low} and min(n_samples, n_features)={limit} "
                    f"with svd_solver={svd!r}"
                )
            if svd == "arpack" and int(nc) == limit:
                raise InvalidInputError(
                    f"n_components={int(nc)} must be strictly less than min(n_samples, n_features)={limit} "
                    "with svd_solver='arpack'"
                )
            return int(nc), None
        if isinstance(nc, Real) and not isinstance(nc, bool) and 0.0 < float(nc) < 1.0 and not truncated:
            return 0, float(nc)
        if truncated and isinstance(nc, Real) and not isinstance(nc, bool):  # scikit-learn's message
            raise InvalidInputError(
                f"n_components={nc!r} must be between 1 and min(n_samples, n_features)={limit} with svd_solver={svd!r}"
            )
        raise InvalidInputError(
            f"n_components must be None, an int in [1, {limit}], a float in (0, 1) or 'mle', got {nc!r}"
        )

    def _resolve_svd_solver(self, n_samples: int, n_features: int) -> str:
        """scikit-learn 1.9's choice for ``svd_solver="auto"`` by the data's shape and
        ``n_components`` (another name is returned as is)."""
        svd = self.svd_solver
        if svd != "auto":
            return svd
        nc = self.n_components
        limit = min(n_samples, n_features)
        if n_features <= 1_000 and n_samples >= 10 * n_features:  # tall and skinny
            return "covariance_eigh"
        if max(n_samples, n_features) <= 500 or nc == "mle":
            return "full"
        nc = limit if nc is None else nc
        if isinstance(nc, Real) and not isinstance(nc, bool) and 1 <= nc < 0.8 * limit:
            return "randomized"
        return "full"  # also a fraction of the variance

    def _check_options(self) -> None:
        """``tol``, ``max_iter``, ``random_state`` and ``dtype`` of any type: the right kind,
        or :class:`InvalidInputError` naming the parameter (never a TypeError from deep in
        a solver)."""
        tol = self.tol
        if tol is not None and (
            isinstance(tol, bool) or not isinstance(tol, Real) or not (float(tol) >= 0 and float(tol) < float("inf"))
        ):
            raise InvalidInputError(f"tol must be None or a number >= 0, got {tol!r}")
        if self.max_iter is not None:
            check_int(self.max_iter, name="max_iter", low=1)
        for name in ("copy", "whiten"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise InvalidInputError(f"{name} must be a bool, got {getattr(self, name)!r}")
        if not (isinstance(self.iterated_power, str) and self.iterated_power == "auto"):
            check_int(self.iterated_power, name="iterated_power", low=0)
        check_int(self.n_oversamples, name="n_oversamples", low=1)
        if self.power_iteration_normalizer not in _NORMALIZERS:
            raise InvalidInputError(
                f"power_iteration_normalizer must be one of {_NORMALIZERS}, got {self.power_iteration_normalizer!r}"
            )
        rs = self.random_state
        if isinstance(rs, np.random.RandomState):
            return
        try:
            if isinstance(rs, (bool, float, str, bytes)):
                raise TypeError
            np.random.default_rng(rs)
        except (TypeError, ValueError):
            raise InvalidInputError(
                f"random_state must be None, a non-negative int, a numpy Generator or RandomState, got {rs!r}"
            ) from None
        if self.dtype is not None:
            _dtype_from(self.dtype, np)  # the kind of dtype; the namespace's comes at fit

    def _check_solver_and_options(self) -> None:
        if not isinstance(self.solver, str) or self.solver not in _SOLVERS:
            raise InvalidInputError(f"solver must be one of {_SOLVERS}, got {self.solver!r}")
        if not isinstance(self.svd_solver, str) or self.svd_solver not in _SVD_SOLVERS:
            raise InvalidInputError(f"svd_solver must be one of {_SVD_SOLVERS}, got {self.svd_solver!r}")
        self._check_options()
        # scikit-learn's truncated solvers are iterative: gpuknn's "block" stands in for them
        truncated = self.svd_solver in ("arpack", "randomized") and self.solver == "eigh"
        self._fit_solver = "block" if truncated else self.solver
        self._stand_in = truncated
        rs = self.random_state
        # one draw of a RandomState (scikit-learn consumes it too) seeds the start vectors
        self._fit_random_state = (
            int(rs.randint(np.iinfo(np.int32).max)) if isinstance(rs, np.random.RandomState) else rs
        )

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
        p, rule = self._n_components(n_samples, n_features)
        total = float(xp.sum(xp.linalg.diagonal(C64)))
        if rule is not None:
            spectrum = np.clip(to_numpy(xp.flip(xp.linalg.eigvalsh(C64), axis=0)), 0, None)
            if rule == "mle":
                p = _infer_dimension(spectrum, n_samples)
            else:
                ratio = np.cumsum(spectrum) / total if total > 0 else np.ones(1)
                p = min(int(np.searchsorted(ratio, rule, side="right")) + 1, n_features, n_samples)
        # eigh runs in float64 (LAPACK's float32 error is relative to the largest eigenvalue);
        # the iterative solvers' products run in the covariance dtype, which limits them no
        # more than the covariance's own float32 error does (block: small problems in float64).
        if p == 0 and rule is None:  # n_components=0: no component, all variance is noise
            return self._fit_no_component(xp, mean, total, n_samples, n_features, dtype, device_of(C64))
        if p == 0:  # "mle" may choose no component (a spectrum of zeros)
            raise InvalidInputError("n_components='mle' found no component: the data have no variance")
        if self._fit_solver == "eigh":
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
        # Probabilistic PCA's noise: the mean of the min(n, d) - p eigenvalues left, from the
        # trace (every eigenvalue beyond min(n, d) is 0), as scikit-learn's solvers do.
        left = min(n_samples, n_features) - p
        self.noise_variance_ = max(total - float(xp.sum(lam)), 0.0) / left if left > 0 else 0.0
        self.n_iter_ = from_numpy(np.asarray(result.n_iter, dtype=np.int64), xp, device=device_of(C64))
        self.converged_ = bool(np.all(result.converged))
        return self

    def _fit_no_component(
        self, xp: Any, mean: Any, total: float, n_samples: int, n_features: int, dtype: Any, dev: Any
    ) -> PCA:
        """The fit of ``n_components=0`` (scikit-learn's): empty components, and the whole
        variance as the probabilistic model's isotropic noise."""
        self.mean_ = xp.astype(mean, dtype)
        self.components_ = xp.zeros((0, n_features), dtype=dtype, device=dev)
        self.explained_variance_ = xp.zeros((0,), dtype=dtype, device=dev)
        self.explained_variance_ratio_ = xp.zeros((0,), dtype=dtype, device=dev)
        self.singular_values_ = xp.zeros((0,), dtype=dtype, device=dev)
        self.n_components_ = 0
        self.n_features_in_ = n_features
        self.n_samples_ = n_samples
        self.noise_variance_ = max(total, 0.0) / min(n_samples, n_features)
        self.n_iter_ = xp.zeros((0,), dtype=xp.int64, device=dev)
        self.converged_ = True
        return self

    def _solve(self, C: Any, p: int):
        tol = None if self.tol is None or float(self.tol) == 0.0 else self.tol  # 0: the default
        if self._fit_solver == "eigh":
            return eigh(C, p)
        if self._fit_solver == "block":
            if tol is None and self._stand_in and C.dtype == array_namespace(C).float64:
                # Standing in for scikit-learn's truncated solvers (ARPACK's default tol=0 is
                # machine precision): near round-off, so the results agree with the full
                # solver's to ~1e-12 (1e-10 left whitened scores off by ~1e-10).
                tol = max(1e-13, 10.0 * int(C.shape[0]) * float(np.finfo(np.float64).eps))
            return block_eigh(
                C,
                p,
                tol=tol,
                max_iter=1000 if self.max_iter is None else self.max_iter,
                random_state=self._fit_random_state,
                psd=True,
            )
        return deflated_power_method(
            C,
            p,
            tol=1e-6 if tol is None else tol,
            max_iter=100_000 if self.max_iter is None else self.max_iter,
            random_state=self._fit_random_state,
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
        Z = xp.matmul(X - xp.astype(self.mean_, X.dtype), xp.matrix_transpose(W))
        return Z / self._whitening(X.dtype) if self.whiten else Z

    def _whitening(self, dtype: Any) -> Any:
        """``sqrt(explained_variance_)`` in ``dtype``, at least its machine epsilon (a
        variance of 0 on rank-deficient data would divide by zero; scikit-learn's clip)."""
        xp = array_namespace(self.explained_variance_)
        scale = xp.sqrt(xp.astype(self.explained_variance_, dtype))
        eps = float(xp.finfo(dtype).eps)
        return xp.where(scale < eps, xp.full_like(scale, eps), scale)

    def fit_transform(self, X: Any, y: Any = None) -> Any:
        """``fit(X)`` then ``transform(X)``."""
        return self.fit(X).transform(X)

    def inverse_transform(self, Z: Any) -> Any:
        """Map scores ``Z`` ``(n, n_components_)`` back to feature space ``(n, n_features)``."""
        Z, xp = self._check_X(Z, "n_components_", "Z")
        W = xp.astype(self.components_, Z.dtype)
        if self.whiten:  # scikit-learn's: the unclipped sqrt(explained_variance_) back
            W = xp.sqrt(xp.astype(self.explained_variance_, Z.dtype))[:, None] * W
        return xp.matmul(Z, W) + xp.astype(self.mean_, Z.dtype)

    # ------------------------------------------------ probabilistic PCA model
    def _model(self) -> tuple[Any, Any, Any, float]:
        """``(W, ev, max(ev - noise, 0), noise)`` in float64; W scaled by ``sqrt(ev)`` when
        whitening (scikit-learn's model of a whitened PCA)."""
        xp = array_namespace(self.components_)
        W = xp.astype(self.components_, xp.float64)
        ev = xp.astype(self.explained_variance_, xp.float64)
        if self.whiten:
            W = xp.sqrt(ev)[:, None] * W
        noise = float(self.noise_variance_)
        return W, ev, xp.where(ev > noise, ev - noise, xp.zeros_like(ev)), noise

    def get_covariance(self) -> Any:
        """The data covariance the fitted probabilistic PCA model implies (Tipping & Bishop):
        ``W^T diag(max(ev - noise, 0)) W + noise I``, (n_features, n_features), float64 in
        the fit's namespace and device (scikit-learn's ``get_covariance``)."""
        check_is_fitted(self, "components_")
        xp = array_namespace(self.components_)
        W, ev, diff, noise = self._model()
        cov = xp.matmul(xp.matrix_transpose(W) * diff[None, :], W)
        eye = xp.eye(int(W.shape[1]), dtype=xp.float64, device=device_of(W))
        return cov + noise * eye

    def get_precision(self) -> Any:
        """Inverse of :meth:`get_covariance`, (n_features, n_features) float64: by the
        matrix inversion lemma (a p x p inverse) when there is noise, as scikit-learn."""
        check_is_fitted(self, "components_")
        xp = array_namespace(self.components_)
        n_features = int(self.components_.shape[1])
        noise = float(self.noise_variance_)
        dev = device_of(self.components_)
        eye = xp.eye(n_features, dtype=xp.float64, device=dev)
        if noise == 0.0:
            return xp.linalg.inv(self.get_covariance())
        if int(self.components_.shape[0]) == 0:  # no component: isotropic noise alone
            return eye / noise
        W, ev, diff, noise = self._model()
        # (noise I + W^T D W)^-1 = I/noise - W^T (D^-1 + W W^T / noise)^-1 W / noise^2
        inner = xp.matmul(W, xp.matrix_transpose(W)) / noise
        inner = inner + xp.where(
            xp.eye(int(W.shape[0]), dtype=xp.bool, device=dev), (1.0 / diff)[None, :], xp.zeros_like(inner)
        )
        prec = -xp.matmul(xp.matmul(xp.matrix_transpose(W), xp.linalg.inv(inner)), W) / (noise * noise)
        return prec + eye / noise

    def score_samples(self, X: Any) -> Any:
        """Log-likelihood of each sample under the probabilistic PCA model, (n,) float64 in
        X's namespace (scikit-learn's ``score_samples``)."""
        X, xp = self._check_X(X, "n_features_in_", "X")
        Xr = xp.astype(X, xp.float64) - xp.astype(self.mean_, xp.float64)
        n_features = int(X.shape[1])
        precision = self.get_precision()
        sign, logdet = xp.linalg.slogdet(precision)
        logdet = float(logdet) if float(sign) > 0 else -math.inf
        quad = xp.sum(Xr * xp.matmul(Xr, precision), axis=1)
        return -0.5 * quad - 0.5 * (n_features * math.log(2.0 * math.pi) - logdet)

    def score(self, X: Any, y: Any = None) -> float:
        """Mean log-likelihood of the samples of X (:meth:`score_samples`)."""
        ll = self.score_samples(X)
        return float(array_namespace(ll).mean(ll))
