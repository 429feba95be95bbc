"""Distributed cross-validation (issue 19, point 3): ``cross_validate_k`` / ``cross_validate_kp``
/ ``run_sweep`` / ``gpuknn sweep`` with a Dask client give the single-process tables and
choices, stream results into the journal (resume works), and survive a killed worker."""

from __future__ import annotations

import json
import os
import signal
import time

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

from helpers import local_dask_cluster  # noqa: E402

from gpuknn.cli import dask_cluster, main  # noqa: E402
from gpuknn.datasets import make_fashion_mnist_like  # noqa: E402
from gpuknn.errors import InvalidInputError  # noqa: E402
from gpuknn.model_selection import (  # noqa: E402
    StratifiedKFold,  # noqa: E402
    cross_validate_k,
    cross_validate_kp,
)
from gpuknn.model_selection.journal import Journal  # noqa: E402
from gpuknn.model_selection.runner import LocalRunner, get_runner  # noqa: E402
from gpuknn.studies.knn_sweep import SweepConfig, config_dict, run_sweep  # noqa: E402

SMALL = dict(ks_raw=list(range(1, 13)), ks=[1, 2, 3, 5, 8], ps=[1, 2, 3, 5, 8, 13, 20], folds=3, seed=1)


@pytest.fixture(scope="module")
def client():
    with local_dask_cluster() as (c, _, _):
        yield c


@pytest.fixture(scope="module")
def data():
    return make_fashion_mnist_like(300, 90, n_features=48, class_sep=0.25, random_state=0)


def _strip(res, variance=None):
    """Everything but the timings, the explained variances checked apart against
    ``variance``: float32 GEMMs whose last bits may depend on the BLAS's thread partition
    (2 threads here, 1 per worker); every score must be equal."""
    res = json.loads(json.dumps(res))
    res.pop("seconds_compute", None)
    res["test"].pop("seconds", None)
    var = res.pop("variance")
    if variance is not None:
        for key, values in var.items():
            np.testing.assert_allclose(values, variance[key], rtol=1e-5, atol=1e-7)
    return res


def _two_workers(client):
    client.wait_for_workers(2, timeout=60)
    return client


def test_cross_validate_k_and_kp_equal_single_process(client, data):
    X, y = data[0], data[1]
    cv = StratifiedKFold(4, shuffle=True, random_state=3)
    opts = dict(cv=cv, weights=("uniform", "distance"), scoring=("accuracy", "macro_f1"))
    for metric in ("euclidean", "correlation"):
        local = cross_validate_k(X, y, [1, 2, 5, 9], metric=metric, **opts)
        dist = cross_validate_k(X, y, [1, 2, 5, 9], metric=metric, client=_two_workers(client), **opts)
        assert dist.rows == local.rows and dist.scorers == local.scorers
        assert dist.best() == local.best()
    local = cross_validate_kp(X, y, [1, 3, 7], [2, 5, 11], **opts)
    dist = cross_validate_kp(X, y, [1, 3, 7], [2, 5, 11], client=client, **opts)
    assert dist.rows == local.rows and dist.best() == local.best()
    assert [r["fold"] for r in dist.rows] == sorted(r["fold"] for r in dist.rows)  # fold order


def test_client_errors():
    with pytest.raises(InvalidInputError, match="client must be a dask.distributed Client"):
        get_runner("tcp://127.0.0.1:1")
    assert isinstance(get_runner(None), LocalRunner)


def test_sweep_equals_single_process_and_resumes(client, data, tmp_path):
    config = SweepConfig(**SMALL, metric=["euclidean", "correlation"])
    local = run_sweep(*data, config)
    steps = []
    dist = run_sweep(*data, config, client=_two_workers(client), callback=lambda e, i: steps.append((e, i)))
    assert _strip(dist, local["variance"]) == _strip(local)
    assert not [i for e, i in steps if e == "tile"]  # tile progress stays local

    # a single-process run interrupted after its (k, p) folds and one raw fold, resumed on the cluster
    path = tmp_path / "journal.jsonl"

    class Stop(Exception):
        pass

    def stop_at_raw(event, info):
        if event == "step" and info.get("task") == "raw":
            raise Stop

    with pytest.raises(Stop):
        run_sweep(*data, config, journal=Journal(path, config_dict(config)), callback=stop_at_raw)
    done_before = set(Journal(path, config_dict(config), resume=True).records)
    assert {k.split("/")[0] for k in done_before} == {"kp", "raw"}
    assert {k.split("fold=")[1] for k in done_before if k.startswith("raw/")} == {"0"}  # one raw fold
    jr = Journal(path, config_dict(config), resume=True)
    appended = []
    real_append = jr.append
    jr.append = lambda key, record: appended.append(key) or real_append(key, record)
    resumed = run_sweep(*data, config, journal=jr, client=client)
    assert _strip(resumed, local["variance"]) == _strip(local)
    assert not set(appended) & done_before  # finished parts were not recomputed
    assert {k.split("/")[0] for k in appended} == {"raw", "variance", "final"}
    # the journal written from completed tasks is complete and valid: a second resume
    # recomputes nothing
    jr2 = Journal(path, config_dict(config), resume=True)
    again = []
    real2 = jr2.append
    jr2.append = lambda key, record: again.append(key) or real2(key, record)
    assert _strip(run_sweep(*data, config, journal=jr2), local["variance"]) == _strip(local) and again == []


class _KillOnce:
    """A scorer (accuracy) that kills the worker process running it, the first time only:
    the marker file says it happened; the test process itself is never killed."""

    def __init__(self, marker, parent):
        self.marker, self.parent = str(marker), parent

    def __call__(self, y_true, y_pred):
        if os.getpid() != self.parent and not os.path.exists(self.marker):
            with open(self.marker, "w") as fh:
                fh.write(str(os.getpid()))
            os._exit(1)  # the worker dies mid-task, as a crash or an OOM kill would
        return float(np.mean(np.asarray(y_true) == np.asarray(y_pred)))


def test_a_worker_killed_mid_fold_is_replaced_and_the_fold_rerun(client, data, tmp_path):
    X, y = data[0], data[1]
    marker = tmp_path / "killed"
    scorer = {"acc": _KillOnce(marker, os.getpid())}
    pids = set(_two_workers(client).run(os.getpid).values())
    dist = cross_validate_k(X, y, [1, 4, 8], cv=3, scoring=scorer, client=client)
    assert marker.exists() and int(marker.read_text()) in pids  # a worker did die
    local = cross_validate_k(X, y, [1, 4, 8], cv=3, scoring=scorer)
    assert dist.rows == local.rows
    assert int(marker.read_text()) not in set(_two_workers(client).run(os.getpid).values())


def test_a_worker_killed_mid_sweep(client, tmp_path):
    # heavier folds, so that tasks are running when the kill comes
    data = make_fashion_mnist_like(1500, 200, n_features=96, class_sep=0.3, random_state=2)
    config = SweepConfig(**{**SMALL, "ks_raw": list(range(1, 41)), "folds": 6})
    local = run_sweep(*data, config)
    pids = _two_workers(client).run(os.getpid)
    killed = []

    def kill_a_busy_worker(event, info):
        if event == "step" and not killed:
            busy = [w for w, keys in client.processing().items() if keys]
            if busy:
                killed.append(pids[busy[0]])
                os.kill(pids[busy[0]], signal.SIGKILL)

    dist = run_sweep(*data, config, client=client, callback=kill_a_busy_worker)
    assert killed, "no worker was busy after the first fold finished"
    assert _strip(dist, local["variance"]) == _strip(local)
    deadline = time.monotonic() + 60
    while killed[0] in _two_workers(client).run(os.getpid).values():  # pragma: no cover - timing
        assert time.monotonic() < deadline
        time.sleep(0.5)


def test_cli_workers_and_scheduler(client, tmp_path, capsys, monkeypatch):
    quick = ["sweep", "--data", "iris", "--quiet", "--folds", "3", "--k", "1-5", "--k-raw", "1-8", "--p", "1-4"]
    assert main(quick + ["--out", str(tmp_path / "local")]) == 0
    local = json.loads((tmp_path / "local" / "results.json").read_text())
    assert main(quick + ["--workers", "2", "--out", str(tmp_path / "workers")]) == 0
    workers = json.loads((tmp_path / "workers" / "results.json").read_text())
    address = _two_workers(client).scheduler.address
    assert main(quick + ["--scheduler", address, "--out", str(tmp_path / "sched")]) == 0
    sched = json.loads((tmp_path / "sched" / "results.json").read_text())
    for res in (workers, sched):
        for key in ("per_metric", "best", "k_best", "p_best", "test_accuracy"):
            assert res[key] == local[key]
        np.testing.assert_allclose(
            res["variance"]["explained_variance"], local["variance"]["explained_variance"], rtol=1e-5
        )
    assert workers["cluster"] == {"workers": 2, "scheduler": workers["cluster"]["scheduler"]}
    assert sched["cluster"]["scheduler"] == address and local["cluster"] is None
    # --workers started and closed its own cluster; the module's cluster is still there
    assert len(client.scheduler_info()["workers"]) == 2
    capsys.readouterr()
    # an unreachable scheduler is a bad argument: one line, exit 2, --out untouched
    monkeypatch.setattr(dask_cluster, "_CONNECT_TIMEOUT_S", 2)  # Dask retries until then
    out = tmp_path / "never"
    assert main(quick + ["--scheduler", "tcp://127.0.0.1:9", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--scheduler tcp://127.0.0.1:9: cannot connect" in err and not out.exists()
    with pytest.raises(SystemExit):
        main(quick + ["--scheduler", address, "--workers", "2"])
    assert "not allowed with argument" in capsys.readouterr().err


def test_tasks_get_a_working_memory_resolved_on_the_client(client, monkeypatch):
    from gpuknn.distributed.runner import DaskRunner
    from gpuknn.model_selection.runner import task_working_memory

    assert task_working_memory(LocalRunner(), None) is None  # one process: resolved where it runs
    runner = DaskRunner(_two_workers(client))
    assert task_working_memory(runner, 5) == 5  # MiB, as given
    assert task_working_memory(runner, None) == 256  # MiB: the host default
    monkeypatch.setenv("GPUKNN_WORKING_MEMORY", "3")
    assert task_working_memory(runner, None) == 3
