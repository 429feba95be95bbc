"""Full-FP32 screening whatever the user's TF32 setting (``_delegation.fp32_matmul``).

Under TF32 (``u = 2**-11``) the certified bound settles no row and every row would go to the
float64 second pass; the search runs its GEMMs in FP32 instead, reads its bound inside that
scope, and gives the user's setting back afterwards. Tested on torch CPU, whose mkldnn switch
can be set to ``"tf32"`` on any machine.
"""

import threading

import numpy as np
import pytest

import gpuknn
import gpuknn.ops.kneighbors as kn
from gpuknn._delegation import fp32_matmul, matmul_unit_roundoff

torch = pytest.importorskip("torch")
import array_api_compat.torch as tx  # noqa: E402

switch = torch.backends.mkldnn.matmul
if not hasattr(switch, "fp32_precision"):
    pytest.skip("this torch has no per-backend fp32_precision switch", allow_module_level=True)

CPU = torch.device("cpu")


@pytest.fixture
def tf32():
    before = switch.fp32_precision
    switch.fp32_precision = "tf32"
    yield
    switch.fp32_precision = before


def test_scope_sets_fp32_and_restores(tf32):
    assert matmul_unit_roundoff(tx.float32, tx, CPU)[0] == 2.0**-11
    with fp32_matmul(tx, CPU):
        assert switch.fp32_precision == "ieee"
        assert matmul_unit_roundoff(tx.float32, tx, CPU)[0] == 2.0**-24
        with fp32_matmul(tx, CPU):  # nested: the outer scope still holds it
            pass
        assert switch.fp32_precision == "ieee"
    assert switch.fp32_precision == "tf32"


def test_scope_restores_after_an_error(tf32):
    with pytest.raises(ZeroDivisionError), fp32_matmul(tx, CPU):
        1 / 0  # noqa: B018
    assert switch.fp32_precision == "tf32"


def test_overlapping_threads_restore_once_the_last_leaves(tf32):
    inside, release = threading.Event(), threading.Event()
    seen = []

    def other():
        with fp32_matmul(tx, CPU):
            inside.set()
            release.wait(10)
            seen.append(switch.fp32_precision)

    t = threading.Thread(target=other)
    t.start()
    inside.wait(10)
    with fp32_matmul(tx, CPU):
        pass  # leaves first: the other thread's GEMMs must stay FP32
    assert switch.fp32_precision == "ieee"
    release.set()
    t.join(10)
    assert seen == ["ieee"]
    assert switch.fp32_precision == "tf32"


def test_fp32_setting_is_left_alone():
    before = switch.fp32_precision
    with fp32_matmul(tx, CPU):
        pass
    assert switch.fp32_precision == before


def test_numpy_needs_no_switch():
    import array_api_compat.numpy as nx

    with fp32_matmul(nx):
        assert matmul_unit_roundoff(nx.float32, nx)[0] == 2.0**-24


def test_search_under_tf32_screens_in_fp32(tf32, monkeypatch):
    """The GEMMs run in FP32, every row certifies (no second pass), the user's TF32 is back
    afterwards, and the answer is the one without TF32."""
    rng = np.random.default_rng(0)
    R = torch.asarray(rng.uniform(0, 255, (3000, 64)).astype(np.float32))
    Q = torch.asarray(rng.uniform(0, 255, (200, 64)).astype(np.float32))
    second = []
    monkeypatch.setattr(kn, "_second_pass", lambda *a, **k: second.append(1) or (_ for _ in ()).throw(AssertionError))
    under = []  # the switch as each screening GEMM runs
    orig = torch.Tensor.__matmul__

    def mm(a, b):
        under.append(switch.fp32_precision)
        return orig(a, b)

    monkeypatch.setattr(torch.Tensor, "__matmul__", mm)
    got = gpuknn.kneighbors(Q, R, 10, metric="correlation")
    monkeypatch.setattr(torch.Tensor, "__matmul__", orig)
    assert under and set(under) == {"ieee"}
    assert second == []
    assert switch.fp32_precision == "tf32"
    switch.fp32_precision = "ieee"
    want = gpuknn.kneighbors(Q, R, 10, metric="correlation")
    assert torch.equal(got[1], want[1]) and torch.equal(got[0], want[0])


def test_p_sweep_under_tf32_screens_in_fp32(tf32, monkeypatch):
    """The p-sweep's Gram GEMMs run in FP32 too, and its lists are those without TF32."""
    import gpuknn.ops.psweep as psweep

    rng = np.random.default_rng(1)
    Z = torch.asarray(rng.normal(size=(400, 12)).astype(np.float32))
    Zq = torch.asarray(rng.normal(size=(50, 12)).astype(np.float32))
    under, real = [], psweep.gram_accumulate

    def spy(*a, **kw):
        under.append(switch.fp32_precision)
        return real(*a, **kw)

    monkeypatch.setattr(psweep, "gram_accumulate", spy)
    got = psweep.neighbors_for_p_sweep(Z, Zq, [2, 5, 12], 5, metric="correlation")
    assert under and set(under) == {"ieee"}
    assert switch.fp32_precision == "tf32"
    switch.fp32_precision = "ieee"
    want = psweep.neighbors_for_p_sweep(Z, Zq, [2, 5, 12], 5, metric="correlation")
    for p in (2, 5, 12):
        assert torch.equal(got[p][1], want[p][1])
