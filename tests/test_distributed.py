"""gpuknn.distributed: exact kNN, covariance and PCA of dask arrays equal the single-process
answers (indices exactly, with ties across chunk edges), on the synchronous scheduler and on
a 2-process LocalCluster."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")

from helpers import local_dask_cluster, process_env, restore_env  # noqa: E402

import gpuknn  # noqa: E402
import gpuknn.distributed as gd  # noqa: E402
from gpuknn.errors import InvalidInputError  # noqa: E402


@pytest.fixture
def sync():
    with dask.config.set(scheduler="synchronous"):
        yield


def _data(seed=0, n_ref=40, n_q=17, d=3):
    """Small integer data: many exact duplicates and equal distances, some of them across
    chunk edges; the queries include copies of references."""
    rng = np.random.default_rng(seed)
    R = rng.integers(1, 4, (n_ref, d)).astype(np.float64)
    R[n_ref // 2] = R[n_ref // 2 - 1]  # a duplicate pair astride the middle edge
    Q = np.concatenate([rng.integers(1, 4, (n_q - 3, d)).astype(np.float64), R[[0, n_ref // 2, -1]]])
    return Q, R


def _check(Q, R, k, metric, q_chunks, r_chunks, split_every=None):
    D0, ind0 = gpuknn.kneighbors(Q, R, k, metric=metric)
    Qd = da.from_array(Q, chunks=(q_chunks, -1))
    Rd = da.from_array(R, chunks=(r_chunks, -1))
    D, ind = gd.kneighbors(Qd, Rd, k, metric=metric, split_every=split_every)
    rows = tuple(c for c in Qd.chunks[0] if c)  # empty query chunks leave no output chunk
    assert D.chunks[0] == rows and ind.chunks == (rows, (k,))
    D, ind = dask.compute(D, ind)
    assert ind.dtype == np.int64 and D.dtype == D0.dtype
    np.testing.assert_array_equal(ind, ind0)
    np.testing.assert_allclose(D, D0, rtol=1e-6 if D0.dtype == np.float32 else 1e-12, atol=1e-7)


CHUNKINGS = [
    (40, 40),  # one reference chunk
    ((9, 8), (20, 20)),  # 2 shards
    (5, (8, 8, 8, 8, 8)),  # 5 shards
    (4, 3),  # every reference chunk smaller than k
    ((1, 6, 0, 10), (1, 7, 0, 13, 19)),  # uneven, empty chunks, single rows
]


@pytest.mark.parametrize("metric", ["euclidean", "cosine", "correlation"])
@pytest.mark.parametrize("chunks", CHUNKINGS)
def test_kneighbors_equals_single_process(sync, metric, chunks):
    Q, R = _data()
    for k in (1, 7):
        _check(Q, R, k, metric, *chunks)


@pytest.mark.parametrize("k", [12, 40])
def test_k_larger_than_chunks_and_tree_shapes(sync, k):
    Q, R = _data(1)
    for split_every in (2, 3, None):
        _check(Q, R, k, "euclidean", 6, 5, split_every)


def test_float32_and_mixed_inputs(sync):
    rng = np.random.default_rng(2)
    R = rng.normal(size=(60, 5)).astype(np.float32)
    R[30] = R[29]
    Q = np.concatenate([rng.normal(size=(9, 5)), R[[29, 3]]]).astype(np.float32)
    _check(Q, R, 6, "euclidean", 4, 7)
    _check(Q, R, 6, "sqeuclidean", 4, (30, 30))
    # integer queries and a NumPy reference straight in (wrapped into chunks)
    Qi = rng.integers(-2, 3, (8, 5))
    ind = gd.kneighbors(da.from_array(Qi, chunks=3), R.astype(np.float64), 4, return_distance=False)
    np.testing.assert_array_equal(ind.compute(), gpuknn.kneighbors(Qi, R.astype(np.float64), 4)[1])


def test_working_memory_is_passed_to_every_task(sync, monkeypatch):
    import gpuknn.distributed.neighbors as dn

    seen = []
    real = dn.kneighbors_partial

    def spy(*args, **kwargs):
        seen.append(kwargs["working_memory"])
        return real(*args, **kwargs)

    monkeypatch.setattr(dn, "kneighbors_partial", spy)
    Q, R = _data()
    Qd, Rd = da.from_array(Q, chunks=9), da.from_array(R, chunks=10)
    ind = gd.kneighbors(Qd, Rd, 3, working_memory=1, return_distance=False)  # MiB
    monkeypatch.setenv("GPUKNN_WORKING_MEMORY", "3")  # MiB too
    ind2 = gd.kneighbors(Qd, Rd, 3, return_distance=False)  # the default is read now, on the client
    monkeypatch.delenv("GPUKNN_WORKING_MEMORY")
    dask.compute(ind, ind2)
    assert sorted(set(seen)) == [1, 3] and len(seen) == 2 * 2 * 4  # MiB, as the tasks' engine takes it


def test_errors(sync):
    Q, R = _data()
    Rd = da.from_array(R, chunks=10)
    with pytest.raises(InvalidInputError, match="k=41"):
        gd.kneighbors(Q, Rd, 41)
    with pytest.raises(InvalidInputError, match="features"):
        gd.kneighbors(Q[:, :2], Rd, 3)
    with pytest.raises(InvalidInputError, match="split_every"):
        gd.kneighbors(Q, Rd, 3, split_every=1)
    with pytest.raises(InvalidInputError, match="working_memory must be a positive number of MiB"):
        gd.kneighbors(Q, Rd, 3, working_memory=-1)
    with pytest.raises(InvalidInputError, match="metric"):
        gd.kneighbors(Q, Rd, 3, metric="manhattan")
    with pytest.raises(InvalidInputError, match="compute_chunk_sizes"):
        gd.kneighbors(Q, Rd[Rd[:, 0] > 1], 3)
    with pytest.raises(InvalidInputError, match="at least one row"):
        gd.kneighbors(da.from_array(Q, chunks=5)[:0], Rd, 3)
    with pytest.raises(InvalidInputError, match="2-D"):
        gd.kneighbors(Q, da.from_array(R[:, 0], chunks=10), 3)
    bad = R.copy()
    bad[25, 1] = np.nan
    # raised by a task, at compute time, with the row numbers of the whole array
    with pytest.raises(InvalidInputError, match=r"R contains NaN or infinity in 1 row\(s\) of this chunk: 25$"):
        gd.kneighbors(Q, da.from_array(bad, chunks=10), 3)[1].compute()
    badq = Q.copy()
    badq[[11, 13]] = np.inf
    with pytest.raises(InvalidInputError, match=r"Q contains NaN or infinity in 2 row\(s\) of this chunk: 11, 13$"):
        gd.kneighbors(da.from_array(badq, chunks=(10, 3)), R, 3)[1].compute()


def test_column_chunks_are_merged(sync):
    Q, R = _data()
    Rd = da.from_array(R, chunks=(10, 1))
    ind = gd.kneighbors(Q, Rd, 5, return_distance=False)
    np.testing.assert_array_equal(ind.compute(), gpuknn.kneighbors(Q, R, 5)[1])


def _pca_data(offset):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(230, 7)) * np.array([5.0, 3, 2, 1.5, 1, 0.5, 0.1]) + offset
    return X


@pytest.mark.parametrize("offset", [0.0, 1e5])
@pytest.mark.parametrize("n_components", [3, 0.9, None])
def test_pca_on_dask_equals_numpy(sync, offset, n_components):
    X = _pca_data(offset)
    ref = gpuknn.PCA(n_components).fit(X)
    pca = gpuknn.PCA(n_components).fit(da.from_array(X, chunks=(41, 3)))
    assert pca.n_components_ == ref.n_components_ and pca.n_features_in_ == 7 and pca.n_samples_ == 230
    signs = np.sign(np.sum(pca.components_ * ref.components_, axis=1))
    np.testing.assert_allclose(pca.components_ * signs[:, None], ref.components_, atol=1e-9)
    np.testing.assert_allclose(pca.explained_variance_, ref.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(pca.explained_variance_ratio_, ref.explained_variance_ratio_, rtol=1e-10)
    np.testing.assert_allclose(pca.mean_, ref.mean_, rtol=1e-13)
    Z = pca.transform(da.from_array(X, chunks=50))
    assert Z.chunks == ((50, 50, 50, 50, 30), (ref.n_components_,))
    np.testing.assert_allclose(Z.compute(), ref.transform(X), atol=1e-8 * (1 + offset))


def test_covariance_and_moments(sync):
    X = _pca_data(1e5).astype(np.float32)
    Xd = da.from_array(X, chunks=37)
    C = gd.covariance(Xd)
    assert C.dtype == np.float32
    oracle = np.cov(X.astype(np.float64), rowvar=False)
    np.testing.assert_allclose(C, oracle, rtol=2e-5, atol=2e-5 * np.abs(oracle).max())
    m = gd.moments(Xd, split_every=2).compute()
    assert m.n == 230 and m.gram.dtype == np.float64
    C64, mean = gd.covariance_and_mean(da.from_array(X.astype(np.float64), chunks=37), correction=0)
    np.testing.assert_allclose(C64, np.cov(X.astype(np.float64), rowvar=False, ddof=0), rtol=1e-11, atol=1e-11)
    with pytest.raises(InvalidInputError, match="PCA needs at least 2 samples"):
        gpuknn.PCA().fit(Xd[:1])
    with pytest.raises(InvalidInputError, match="features"):
        gpuknn.PCA(2).fit(X).transform(Xd[:, :3])


@pytest.mark.gpu
def test_cupy_chunks(sync):
    cupy = pytest.importorskip("cupy")
    if not cupy.is_available():
        pytest.skip("no CUDA device")
    Q, R = _data(4, n_ref=90)
    D0, ind0 = gpuknn.kneighbors(Q, R, 8)
    Qd = da.from_array(cupy.asarray(Q), chunks=(6, -1))
    Rd = da.from_array(cupy.asarray(R), chunks=(7, -1))
    D, ind = dask.compute(*gd.kneighbors(Qd, Rd, 8, working_memory=64))
    assert isinstance(ind, cupy.ndarray) and isinstance(D, cupy.ndarray)
    np.testing.assert_array_equal(ind.get(), ind0)
    np.testing.assert_allclose(D.get(), D0, rtol=1e-12, atol=1e-14)
    X = _pca_data(1e5)
    pca = gpuknn.PCA(3).fit(da.from_array(cupy.asarray(X), chunks=40))
    assert isinstance(pca.components_, cupy.ndarray)
    np.testing.assert_allclose(pca.explained_variance_.get(), gpuknn.PCA(3).fit(X).explained_variance_, rtol=1e-10)
    Z = pca.transform(da.from_array(cupy.asarray(X), chunks=50)).compute()
    assert isinstance(Z, cupy.ndarray)


def test_import_gpuknn_does_not_import_dask():
    code = "import sys, gpuknn, gpuknn.distributed; assert not [m for m in sys.modules if m.startswith('dask')]"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=os.path.dirname(os.path.dirname(gpuknn.__file__)))


_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


@pytest.fixture(scope="module")
def client():
    with local_dask_cluster() as c:
        yield c


@pytest.mark.parametrize("metric", ["euclidean", "cosine", "correlation"])
def test_kneighbors_on_the_local_cluster_equals_single_process(client, metric):
    """The grid of the synchronous tests, on 2 worker processes: shard counts 1, 2, 5, shards
    smaller than k, uneven and empty chunks, duplicates astride chunk edges, and a
    working_memory whose tiles (2 query rows) do not match the chunks."""
    Q, R = _data()
    for chunks in CHUNKINGS:
        for k in (1, 7):
            _check(Q, R, k, metric, *chunks)
    D0, ind0 = gpuknn.kneighbors(Q, R, 7, metric=metric)
    D, ind = dask.compute(
        *gd.kneighbors(
            da.from_array(Q, chunks=6), da.from_array(R, chunks=(13, 27)), 7, metric=metric, working_memory=1 / 2**20
        )
    )
    np.testing.assert_array_equal(ind, ind0)


def test_on_a_local_cluster(client):
    client, saved, changed = client
    # the cluster's start set the BLAS thread counts in this process's environment (the
    # fixture undid it): whatever it changed is back to the saved values
    assert process_env() == saved
    assert all(os.environ.get(v) == saved.get(v) for v in changed)
    assert len(client.scheduler_info()["workers"]) == 2
    Q, R = _data(3, n_ref=300, n_q=40, d=4)
    # a NumPy reference straight in is scattered, not put in the graph: no "Sending large graph"
    with dask.config.set({"distributed.admin.large-graph-warning-threshold": "8kB"}):
        D0, ind0 = gpuknn.kneighbors(Q, R, 9, metric="cosine")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            D, ind = dask.compute(*gd.kneighbors(da.from_array(Q, chunks=15), R, 9, metric="cosine"))
        np.testing.assert_array_equal(ind, ind0)
        np.testing.assert_allclose(D, D0, rtol=1e-12, atol=1e-14)
        # scattered chunks stay alive while the lazy result exists (not only while R does)
        ind = gd.kneighbors(Q, R.copy(), 9, metric="cosine", return_distance=False)
        gc.collect()
        np.testing.assert_array_equal(ind.compute(), ind0)
        C, mean = gd.covariance_and_mean(_pca_data(1e5))  # NumPy X, the centred second pass
        np.testing.assert_allclose(C, np.cov(_pca_data(1e5), rowvar=False), rtol=1e-10, atol=1e-10)
        # the control: the same array inside the graph does warn
        with pytest.warns(UserWarning, match="Sending large graph"):
            da.from_array(R, chunks=(300, 4)).sum().compute()
    for metric in ("euclidean", "correlation"):
        D0, ind0 = gpuknn.kneighbors(Q, R, 12, metric=metric)
        Dd, Id = gd.kneighbors(da.from_array(Q, chunks=(7, 4)), da.from_array(R, chunks=(11, 2)), 12, metric=metric)
        np.testing.assert_array_equal(Id.compute(), ind0)  # indices alone: the (D, ind) pair gathers fine
        np.testing.assert_allclose(Dd.persist().compute(), D0, rtol=1e-12, atol=1e-14)
    X = _pca_data(1e5)
    ref = gpuknn.PCA(4).fit(X)
    pca = gpuknn.PCA(4).fit(da.from_array(X, chunks=40))
    np.testing.assert_allclose(pca.explained_variance_, ref.explained_variance_, rtol=1e-10)
    np.testing.assert_allclose(np.abs(np.sum(pca.components_ * ref.components_, axis=1)), 1.0, rtol=1e-10)
    np.testing.assert_allclose(pca.transform(da.from_array(X, chunks=60)).compute(), ref.transform(X), atol=1e-3)


@pytest.mark.gpu
def test_local_cuda_cluster_with_cupy_chunks():
    """Multi-GPU: one worker per GPU (dask_cuda.LocalCUDACluster), CuPy chunks, the same code
    as the CPU path: kneighbors, PCA and a distributed CV equal the single-process NumPy ones."""
    cupy = pytest.importorskip("cupy")
    dask_cuda = pytest.importorskip("dask_cuda")
    distributed = pytest.importorskip("distributed")
    if not cupy.is_available():
        pytest.skip("no CUDA device")
    from gpuknn.model_selection import cross_validate_k

    saved = process_env()
    cluster = dask_cuda.LocalCUDACluster(dashboard_address=":0", host="127.0.0.1")
    restore_env(saved)
    try:
        with distributed.Client(cluster) as c:
            n_gpus = len(c.scheduler_info()["workers"])
            Q, R = _data(6, n_ref=400, n_q=60, d=5)
            D0, ind0 = gpuknn.kneighbors(Q, R, 9)
            Rd = da.from_array(cupy.asarray(R), chunks=(400 // max(2, n_gpus), -1)).persist()
            D, ind = dask.compute(*gd.kneighbors(cupy.asarray(Q), Rd, 9, working_memory=64))
            assert isinstance(ind, cupy.ndarray)
            np.testing.assert_array_equal(ind.get(), ind0)
            np.testing.assert_allclose(D.get(), D0, rtol=1e-12, atol=1e-14)
            X = _pca_data(1e5)
            pca = gpuknn.PCA(3).fit(da.from_array(cupy.asarray(X), chunks=60).persist())
            np.testing.assert_allclose(
                pca.explained_variance_.get(), gpuknn.PCA(3).fit(X).explained_variance_, rtol=1e-10
            )
            y = (R[:, 0] > 2).astype(int)
            local = cross_validate_k(R, y, [1, 3, 5], cv=3, working_memory=64)
            dist = cross_validate_k(cupy.asarray(R), y, [1, 3, 5], cv=3, working_memory=64, client=c)
            assert dist.rows == local.rows
    finally:
        cluster.close()
        restore_env(saved)
