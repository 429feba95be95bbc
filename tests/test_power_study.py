"""Power-method convergence study, its plots and the ``gpuknn power-study`` CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from matplotlib.figure import Figure

from gpuknn.errors import InvalidInputError
from gpuknn.plots.pca import plot_component_variance, plot_cumulative_variance, plot_power_study
from gpuknn.studies.power_study import householder_matrices, power_study

SMALL = dict(n_eps=5, eps_min=1e-2, eps_max=1.0, n_draws=4, max_iter=50_000, tol=1e-7)


@pytest.fixture(scope="module")
def small_numpy():
    return power_study(**SMALL, random_state=0)


def test_householder_matrices_have_the_eigenvalues():
    lam = np.array([[10.0, 9.5, 5.0, 2.0, 1.0], [3.0, 2.0, 1.0, 0.5, 0.1]])
    A = householder_matrices(lam, np.random.default_rng(0))
    assert A.shape == (2, 5, 5) and np.array_equal(A, np.swapaxes(A, 1, 2))
    for i in range(2):
        np.testing.assert_allclose(np.linalg.eigvalsh(A[i])[::-1], lam[i], rtol=1e-12)


def test_iterations_grow_as_gap_shrinks(small_numpy):
    r = small_numpy
    assert r.iterations.shape == (5, 4, 5) and r.converged.all()
    top = r.summary()["iterations_mean"][:, 0]  # eps ascending
    assert np.all(np.diff(top) < 0), top
    # theory: ~ (10 / eps) * log(...) iterations; at eps = 0.01 that is thousands
    assert top[0] > 20 * top[-1]
    # the well separated eigenpairs 5, 2, 1 do not feel eps
    later = r.summary()["iterations_mean"][:, 2:]
    assert later.max() < 100


def test_errors_bounded_when_converged(small_numpy):
    r = small_numpy
    assert np.all(r.residuals[r.converged] < 1e-4)
    assert np.all(r.eigenvalue_errors[r.converged] < 1e-6)
    np.testing.assert_allclose(
        np.sort(r.eigenvalues, axis=-1)[..., ::-1],
        np.broadcast_to(r.true_eigenvalues[:, None, :], r.eigenvalues.shape),
        atol=1e-6,
    )


def test_same_result_on_every_backend(xp, small_numpy):
    r = power_study(**SMALL, random_state=0, xp=xp)
    np.testing.assert_array_equal(r.iterations, small_numpy.iterations)
    np.testing.assert_allclose(r.residuals, small_numpy.residuals, rtol=1e-6, atol=1e-12)


def test_max_iter_recorded_not_raised():
    r = power_study(n_eps=2, eps_min=1e-3, eps_max=1e-2, n_draws=2, max_iter=200, tol=1e-7)
    assert not r.converged[:, :, 0].any()
    assert np.all(r.iterations[:, :, 0] == 200)
    assert r.summary()["converged_fraction"][0, 0] == 0.0


def test_summary_and_json(small_numpy):
    s = small_numpy.summary()
    for key in ("iterations_mean", "iterations_std", "residual_min", "residual_max", "converged_fraction"):
        assert s[key].shape == (5, 5)
    d = json.loads(json.dumps(small_numpy.to_dict()))
    assert d["params"]["n_draws"] == 4 and len(d["eps"]) == 5


def test_bad_arguments():
    with pytest.raises(InvalidInputError):
        power_study(n_eps=0)
    with pytest.raises(InvalidInputError):
        power_study(eps_min=0.0)
    with pytest.raises(InvalidInputError):
        power_study(eps_min=1.0, eps_max=6.0)


def test_plots(small_numpy):
    s = small_numpy.summary()
    for q in ("residual", "iterations", "eigenvalue_error"):
        fig = plot_power_study(small_numpy.eps, s, quantity=q)
        assert isinstance(fig, Figure) and len(fig.axes[0].get_lines()) == 5
    ratio = np.array([0.5, 0.3, 0.1, 0.05, 0.05])
    fig = plot_cumulative_variance(ratio)
    np.testing.assert_allclose(fig.axes[0].get_lines()[0].get_ydata(), np.cumsum(ratio))
    fig = plot_component_variance(np.array([5.0, 2.0, 1.0, 0.0]), zoom=2)
    assert len(fig.axes) == 2
    assert len(fig.axes[1].get_lines()[0].get_xdata()) == 2


def test_cli_writes_files(tmp_path, capsys):
    from gpuknn.cli import main

    out = tmp_path / "ps"
    rc = main(
        [
            "power-study",
            "--out",
            str(out),
            "--device",
            "cpu",
            "--n-eps",
            "3",
            "--eps-min",
            "0.1",
            "--draws",
            "2",
            "--max-iter",
            "20000",
            "--seed",
            "1",
        ]
    )
    assert rc == 0
    for name in ("power_study.json", "power_study.csv", "power_error.png", "power_iterations.png"):
        assert (out / name).stat().st_size > 0
    d = json.loads((out / "power_study.json").read_text())
    assert d["params"]["n_eps"] == 3 and np.asarray(d["iterations"]).shape == (3, 2, 5)
    lines = (out / "power_study.csv").read_text().splitlines()
    assert len(lines) == 1 + 3 * 5
    assert "power-study" not in capsys.readouterr().out  # progress and messages go to stderr


def test_cli_quiet_and_bad_option(tmp_path, capsys):
    from gpuknn.cli import main

    rc = main(
        [
            "power-study",
            "--out",
            str(tmp_path),
            "--device",
            "cpu",
            "--n-eps",
            "2",
            "--eps-min",
            "0.5",
            "--draws",
            "1",
            "--max-iter",
            "1000",
            "--quiet",
        ]
    )
    assert rc == 0 and capsys.readouterr().err == ""
    assert main(["power-study", "--out", str(tmp_path), "--device", "cpu", "--n-eps", "0", "--quiet"]) == 2
