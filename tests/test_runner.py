"""Folds on threads (``n_jobs``): the local runner runs tasks at once and in completion
order, stops on the first error and on an early exit, gives each task its share of the
budget and one BLAS thread; the sweeps' answers do not depend on it."""

from __future__ import annotations

import json
import os
import threading
import time

import numpy as np
import pytest
from array_api_compat import numpy as np_xp
from threadpoolctl import threadpool_info

from gpuknn._delegation import one_blas_thread
from gpuknn.cli import main
from gpuknn.datasets import make_fashion_mnist_like
from gpuknn.decomposition import PCA
from gpuknn.errors import InvalidInputError
from gpuknn.model_selection import StratifiedKFold, cross_validate_k, cross_validate_kp
from gpuknn.model_selection.cv import fit_project
from gpuknn.model_selection.journal import Journal
from gpuknn.model_selection.runner import LocalRunner, check_n_jobs, get_runner, task_working_memory
from gpuknn.studies.knn_sweep import SweepConfig, config_dict, run_sweep

SMALL = dict(ks_raw=list(range(1, 13)), ks=[1, 2, 3, 5, 8], ps=[1, 2, 3, 5, 8, 13, 20], folds=3, seed=1)


def _blas_threads() -> list[int]:
    return [d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"]


_blas_threads_before = _blas_threads()


@pytest.fixture(scope="module")
def data():
    return make_fashion_mnist_like(300, 90, n_features=48, class_sep=0.25, random_state=0)


def test_tasks_run_at_once_and_every_result_comes_back():
    both = threading.Barrier(2, timeout=30)  # broken unless two tasks wait at the same time

    def task(base, i):
        both.wait()
        return base + i, threading.current_thread().name

    jobs = [(i, {"i": i}) for i in range(4)]
    out = dict(LocalRunner(n_jobs=2).run(task, jobs, {"base": 10}))
    assert sorted(out) == [0, 1, 2, 3]
    assert [out[i][0] for i in range(4)] == [10, 11, 12, 13]
    assert {name for _, name in out.values()} <= {"gpuknn-task-0", "gpuknn-task-1"}
    assert threading.main_thread().name not in {name for _, name in out.values()}


def test_one_job_at_a_time_runs_in_order_in_the_calling_thread():
    seen = []
    out = list(
        LocalRunner(n_jobs=1).run(
            lambda i: seen.append(threading.current_thread()) or i, [("a", {"i": 1}), ("b", {"i": 2})], {}
        )
    )
    assert out == [("a", 1), ("b", 2)] and seen == [threading.current_thread()] * 2


def test_an_error_stops_the_run_and_is_raised_here():
    started = []

    def task(i):
        started.append(i)
        if i == 0:
            raise ValueError("fold 0 failed")
        time.sleep(0.05)
        return i

    with pytest.raises(ValueError, match="fold 0 failed"):
        list(LocalRunner(n_jobs=2).run(task, [(i, {"i": i}) for i in range(20)], {}))
    n = len(started)
    time.sleep(0.2)
    assert len(started) == n < 20  # no task starts after the error is raised
    assert _blas_threads() == _blas_threads_before  # the BLAS threads are back


def test_an_early_exit_returns_at_once_and_starts_nothing_more():
    started, release = [], threading.Event()

    def task(i):
        started.append(i)
        if i > 0:
            release.wait(30)
        return i

    gen = LocalRunner(n_jobs=2).run(task, [(i, {"i": i}) for i in range(10)], {})
    t0 = time.perf_counter()
    first = next(gen)
    gen.close()  # as a KeyboardInterrupt or a break in the caller would
    assert time.perf_counter() - t0 < 10 and first == (0, 0)
    release.set()
    time.sleep(0.2)
    assert len(started) <= 3  # the two running then, at most one taken meanwhile
    assert _blas_threads() == _blas_threads_before


def test_tasks_on_threads_get_one_blas_thread_and_the_count_comes_back():
    out = dict(LocalRunner(n_jobs=2).run(lambda i: _blas_threads(), [(i, {"i": i}) for i in range(3)], {}))
    assert all(set(v) == {1} for v in out.values())
    assert _blas_threads() == _blas_threads_before


def test_one_blas_thread_is_the_main_threads_and_other_threads_leave_the_count_alone():
    # threadpoolctl is made for the main thread: a scope in another thread changes nothing,
    # inside the main thread's scope (the runner's pattern) it runs on the one thread held.
    seen = {}

    def task(name):
        with one_blas_thread():
            seen[name] = _blas_threads()

    t = threading.Thread(target=task, args=("alone",))
    t.start()
    t.join()
    with one_blas_thread():
        with one_blas_thread():  # nested: still one
            seen["nested"] = _blas_threads()
        t = threading.Thread(target=task, args=("inside the main thread's",))
        t.start()
        t.join()
        seen["after the inner scope left"] = _blas_threads()
    assert seen["alone"] == _blas_threads_before
    assert all(set(seen[k]) <= {1} for k in ("nested", "inside the main thread's", "after the inner scope left"))
    assert _blas_threads() == _blas_threads_before


def test_off_the_main_thread_tasks_run_one_at_a_time_in_the_calling_thread():
    out = {}

    def caller():
        runner = get_runner(None, n_jobs=2, xp=np_xp)
        out["n_jobs"] = runner.n_jobs
        seen = []
        jobs = [(i, {"i": i}) for i in range(3)]
        task = lambda i: seen.append(threading.current_thread()) or i  # noqa: E731
        out["results"] = list(LocalRunner(n_jobs=2).run(task, jobs, {}))
        out["threads"] = set(seen) == {threading.current_thread()}

    t = threading.Thread(target=caller)
    t.start()
    t.join()
    assert out == {"n_jobs": 1, "results": [(0, 0), (1, 1), (2, 2)], "threads": True}


def test_projections_on_threads_have_the_bits_of_one_at_a_time():
    # Shapes where OpenBLAS splits its GEMMs over threads: the projection's last bits
    # would follow the thread count (and what runs beside it) but for fit_project.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((3000, 96)).astype(np.float32)
    parts = [(X[:2400], X[2400:]), (X[600:], X[:600])]
    alone = [fit_project(PCA(80), a, b) for a, b in parts]
    on_threads = dict(
        LocalRunner(n_jobs=2).run(lambda f: fit_project(PCA(80), *parts[f]), [(f, {"f": f}) for f in range(2)], {})
    )
    for f, (Za, Zb) in enumerate(alone):
        assert np.array_equal(on_threads[f][0], Za) and np.array_equal(on_threads[f][1], Zb)


def test_n_jobs_is_read_as_scikit_learn_reads_it():
    assert check_n_jobs(None) == 1 and check_n_jobs(3) == 3 and check_n_jobs(np.int64(2)) == 2
    assert check_n_jobs(-1) == (os.cpu_count() or 1)
    assert check_n_jobs(-10_000) == 1
    for bad in (0, 1.5, True, "2"):
        with pytest.raises(InvalidInputError, match="n_jobs must be"):
            check_n_jobs(bad)


def test_threads_serve_numpy_arrays_only():
    import array_api_compat.numpy as npx

    assert get_runner(None, n_jobs=2, xp=npx).n_jobs == 2
    strict = pytest.importorskip("array_api_strict")
    assert get_runner(None, n_jobs=2, xp=strict).n_jobs == 1  # other namespaces: one at a time
    assert get_runner(None, n_jobs=None, xp=npx).n_jobs == 1


def test_tasks_on_threads_share_the_budget():
    two = LocalRunner(n_jobs=2)
    assert task_working_memory(two, None) == 128.0  # the 256 MiB default, halved
    assert task_working_memory(two, 100) == 50.0
    assert task_working_memory(LocalRunner(), None) is None  # resolved where it runs
    with pytest.raises(InvalidInputError, match="working_memory"):
        task_working_memory(two, "lots")


def test_bad_n_jobs_is_refused_before_any_work(data):
    X, y = data[0], data[1]
    with pytest.raises(InvalidInputError, match="n_jobs"):
        cross_validate_k(X, y, [1, 3], n_jobs=0)
    with pytest.raises(InvalidInputError, match="n_jobs"):
        run_sweep(*data, SweepConfig(**SMALL), n_jobs=2.5)


def test_cross_validate_on_threads_equals_one_fold_at_a_time(backend, data):
    X, y = backend.asarray(data[0]), backend.asarray(data[1])
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    one = cross_validate_k(X, y, [1, 2, 5], cv=cv, metric="correlation", weights=("uniform", "distance"))
    two = cross_validate_k(X, y, [1, 2, 5], cv=cv, metric="correlation", weights=("uniform", "distance"), n_jobs=2)
    assert two.rows == one.rows  # the kNN answer is exact: any tiling, any order
    # the (k, p) sweep too: its projections run on one BLAS thread either way (fit_project)
    kw = dict(cv=cv, metric="correlation", weights=("uniform", "distance"), random_state=0)
    one_kp = cross_validate_kp(X, y, [1, 3], [2, 5, 9], **kw)
    two_kp = cross_validate_kp(X, y, [1, 3], [2, 5, 9], n_jobs=2, **kw)
    assert two_kp.rows == one_kp.rows


def _strip(res):
    res = json.loads(json.dumps(res))
    res.pop("seconds_compute", None)
    res["test"].pop("seconds", None)
    return res


def test_sweep_on_threads_is_one_answer_and_resumes(data, tmp_path):
    config = SweepConfig(**SMALL)
    alone = _strip(run_sweep(*data, config))
    steps = []
    threaded = run_sweep(*data, config, n_jobs=2, callback=lambda e, i: steps.append(e))
    assert _strip(threaded) == alone
    assert _strip(run_sweep(*data, config, n_jobs=-1)) == alone
    assert "tile" not in steps  # tile progress is for one task at a time only

    # stopped after the first (k, p) fold is journalled, resumed on threads: the same answer
    path = tmp_path / "journal.jsonl"

    def stop_at_kp(event, info):
        if event == "step" and info.get("task") == "kp":
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sweep(*data, config, journal=Journal(path, config_dict(config)), callback=stop_at_kp, n_jobs=2)
    jr = Journal(path, config_dict(config), resume=True)
    kp_done = {key.split("/")[2] for key in jr.records if key.startswith("kp/")}
    assert len(kp_done) == 1  # one fold's record made it before the interrupt
    events = []
    assert _strip(run_sweep(*data, config, journal=jr, n_jobs=2, callback=lambda e, i: events.append((e, i)))) == alone
    # the progress of the resumed run counts the journalled task from the start
    assert events[:2] == [
        ("stage", {"name": "cross-validation", "total": 2 * config.folds + 1}),
        ("step", {"stage": "cross-validation", "done": 1}),
    ]


def test_float_data_give_the_same_study_on_threads_and_alone():
    # Standard-scaled rows: the covariance's and projections' GEMMs round by the BLAS
    # thread count here (unlike integer pixels, whose covariance is exact), so this fails
    # unless every PCA of the study (folds, explained variance, final) runs on one thread.
    rng = np.random.default_rng(3)
    y = rng.permutation(np.repeat(np.arange(4), 300))
    X = (rng.normal(size=(1200, 64)) + y[:, None] * rng.normal(size=64)).astype(np.float32)
    config = SweepConfig(ks=[1, 3, 5], ps=[2, 8, 32], folds=3, seed=1, scale="standard", skip_raw=True)
    data = (X[:1000], y[:1000], X[1000:], y[1000:])
    assert _strip(run_sweep(*data, config, n_jobs=2)) == _strip(run_sweep(*data, config))


def test_tasks_that_finish_beside_a_failing_one_are_yielded_before_the_error():
    def task(i):
        if i == 1:
            raise ValueError("task 1 failed")
        time.sleep(0.3)  # still running when task 1 fails
        return i

    got = []
    with pytest.raises(ValueError, match="task 1 failed"):
        for key, value in LocalRunner(n_jobs=2).run(task, [(i, {"i": i}) for i in range(2)], {}):
            got.append((key, value))
    assert got == [(0, 0)]  # the caller journals it: a resume does not redo it
    assert _blas_threads() == _blas_threads_before


def test_cli_n_jobs(tmp_path):
    base = ["sweep", "--synthetic", "300", "--folds", "3", "--k-raw", "1-6", "--k", "1-4", "--p", "1-6"]
    base += ["--quiet", "--device", "cpu"]
    with pytest.raises(SystemExit) as exc:
        main([*base, "--out", str(tmp_path / "bad"), "--n-jobs", "0"])
    assert exc.value.code == 2
    assert main([*base, "--out", str(tmp_path / "two"), "--n-jobs", "2"]) == 0
    res = json.loads((tmp_path / "two" / "results.json").read_text())
    assert res["settings"]["n_jobs"] == 2
    # n_jobs does not change results: a resume with another n_jobs is accepted
    assert main([*base, "--out", str(tmp_path / "two"), "--n-jobs", "1", "--resume"]) == 0
