"""Power-method convergence study: how a shrinking eigenvalue gap slows the seed algorithm.

For every gap ``eps`` (log-spaced) and every draw, a 5 x 5 symmetric matrix with
eigenvalues ``10, 10 - eps, 5, 2, 1`` is built as ``Q diag(.) Q^T`` with a random
Householder reflection ``Q = I - 2 u u^T`` (``u`` a random unit vector), and all five
eigenpairs are computed by the power method with Hotelling deflation. Recorded per
eigenpair: the iterations to meet ``||v_t - v_{t-1}||_inf < tol`` and the residual
``||A v - lambda v||`` (plus the absolute eigenvalue error).

The whole grid (n_eps x n_draws matrices) is one stack iterated together by
:func:`gpuknn.linalg.deflated_power_method`; converged members leave the working set, so
the cost follows the slow members only. The theory: the top pair converges at rate
``(10 - eps) / 10`` per step, i.e. ~``10 / eps`` iterations, and the stopping test fires
when ``(eps / 10) * |c_2| < tol`` -- for tiny gaps long before the vector is accurate.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._backend import array_namespace, from_numpy, to_numpy
from ..errors import ConvergenceWarning, InvalidInputError
from ..linalg.deflation import deflated_power_method

__all__ = ["PowerStudyResult", "power_study", "householder_matrices"]


@dataclass
class PowerStudyResult:
    """Raw results of :func:`power_study` (host NumPy arrays).

    Attributes
    ----------
    eps : (n_eps,)
        Gaps ``lambda_1 - lambda_2``.
    true_eigenvalues : (n_eps, 5)
        ``10, 10 - eps, 5, 2, 1`` per gap.
    eigenvalues, iterations, residuals, eigenvalue_errors, converged : (n_eps, n_draws, 5)
        Per gap, draw and eigenpair (in the order deflation finds them).
    params : dict
        The arguments of the run.
    """

    eps: np.ndarray
    true_eigenvalues: np.ndarray
    eigenvalues: np.ndarray
    iterations: np.ndarray
    residuals: np.ndarray
    eigenvalue_errors: np.ndarray
    converged: np.ndarray
    params: dict = field(default_factory=dict)

    def summary(self) -> dict[str, np.ndarray]:
        """Per gap and eigenpair, (n_eps, 5) arrays: mean/std/min/max over the draws of
        iterations and residuals, plus the converged fraction."""
        out: dict[str, np.ndarray] = {}
        for name, arr in (
            ("iterations", self.iterations),
            ("residual", self.residuals),
            ("eigenvalue_error", self.eigenvalue_errors),
        ):
            a = arr.astype(np.float64)
            out[f"{name}_mean"] = a.mean(axis=1)
            out[f"{name}_std"] = a.std(axis=1)
            out[f"{name}_min"] = a.min(axis=1)
            out[f"{name}_max"] = a.max(axis=1)
        out["converged_fraction"] = self.converged.mean(axis=1)
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (lists) of the raw arrays, the summary and the parameters."""
        raw = {
            k: getattr(self, k).tolist()
            for k in (
                "eps",
                "true_eigenvalues",
                "eigenvalues",
                "iterations",
                "residuals",
                "eigenvalue_errors",
                "converged",
            )
        }
        return {"params": dict(self.params), **raw, "summary": {k: v.tolist() for k, v in self.summary().items()}}


def householder_matrices(eigenvalues: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``Q diag(lambda) Q^T`` for each row of ``eigenvalues`` (m, n), ``Q = I - 2 u u^T``.

    Returns a host array (m, n, n), exactly symmetric.
    """
    m, n = eigenvalues.shape
    u = rng.standard_normal((m, n))
    u /= np.linalg.norm(u, axis=1, keepdims=True)
    Q = np.eye(n) - 2.0 * u[:, :, None] * u[:, None, :]
    A = (Q * eigenvalues[:, None, :]) @ np.swapaxes(Q, 1, 2)
    return (A + np.swapaxes(A, 1, 2)) / 2


def power_study(
    *,
    n_eps: int = 50,
    eps_min: float = 1e-4,
    eps_max: float = 1.0,
    n_draws: int = 20,
    max_iter: int = 500_000,
    tol: float = 1e-7,
    random_state: Any = 0,
    check_every: int = 512,
    xp: Any = None,
    callback: Callable[[dict], None] | None = None,
) -> PowerStudyResult:
    """Run the power-method convergence study.

    Parameters
    ----------
    n_eps : int, default 50
        Number of gaps, log-spaced from ``eps_min`` to ``eps_max``.
    eps_min, eps_max : float
        Range of gaps, ``0 < eps_min <= eps_max < 5`` (so 10 - eps stays second).
    n_draws : int, default 20
        Random matrices per gap.
    max_iter : int, default 500_000
        Iteration limit per eigenpair.
    tol : float, default 1e-7
        Stopping tolerance of the power method.
    random_state : int, numpy Generator or None, default 0
        Seeds the matrices and the start vectors (host generator: same on every backend).
    check_every : int, default 512
        Most iterations per device block (see :mod:`gpuknn.linalg.power`; the first block
        has 8, later ones end where the slowest member is predicted to converge).
    xp : namespace, optional
        Array namespace to compute in (default NumPy).
    callback : callable, optional
        Progress: called per block with ``{"component", "iteration", "n_active"}``.

    Returns
    -------
    PowerStudyResult

    Notes
    -----
    Members that reach ``max_iter`` are recorded with ``converged=False`` (no warning:
    the flag is the result). The default grid takes ~10 s on a 2-core CPU.

    Examples
    --------
    >>> r = power_study(n_eps=3, eps_min=0.1, n_draws=2, max_iter=10_000)
    >>> r.iterations.shape
    (3, 2, 5)
    """
    if not (isinstance(n_eps, int) and n_eps >= 1 and isinstance(n_draws, int) and n_draws >= 1):
        raise InvalidInputError(f"n_eps and n_draws must be positive ints, got {n_eps!r}, {n_draws!r}")
    if not 0 < eps_min <= eps_max < 5:
        raise InvalidInputError(f"need 0 < eps_min <= eps_max < 5, got eps_min={eps_min!r}, eps_max={eps_max!r}")
    xp = array_namespace() if xp is None else xp
    rng = np.random.default_rng(random_state)
    eps = np.geomspace(eps_min, eps_max, n_eps)
    true = np.stack(
        [np.full(n_eps, 10.0), 10.0 - eps, np.full(n_eps, 5.0), np.full(n_eps, 2.0), np.full(n_eps, 1.0)], axis=1
    )
    lam_all = np.repeat(true, n_draws, axis=0)  # (n_eps * n_draws, 5), gap-major
    A_np = householder_matrices(lam_all, rng)
    A = from_numpy(A_np, xp)
    with warnings.catch_warnings():
        # non-convergence at max_iter is a measured outcome here, kept in `converged`
        warnings.simplefilter("ignore", ConvergenceWarning)
        res = deflated_power_method(
            A,
            5,
            max_iter=max_iter,
            tol=tol,
            random_state=rng,
            check_every=check_every,
            strategy="powers",
            callback=callback,
        )
    shape = (n_eps, n_draws, 5)
    lam = to_numpy(res.eigenvalues).reshape(shape)
    return PowerStudyResult(
        eps=eps,
        true_eigenvalues=true,
        eigenvalues=lam,
        iterations=np.asarray(res.n_iter).reshape(shape),
        residuals=to_numpy(res.residuals).reshape(shape),
        eigenvalue_errors=np.abs(lam - true[:, None, :]),
        converged=np.asarray(res.converged).reshape(shape),
        params=dict(
            n_eps=n_eps,
            eps_min=eps_min,
            eps_max=eps_max,
            n_draws=n_draws,
            max_iter=max_iter,
            tol=tol,
            random_state=random_state if isinstance(random_state, (int, type(None))) else repr(random_state),
            check_every=check_every,
        ),
    )
