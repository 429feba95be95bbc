import subprocess
import sys

import numpy as np
import pytest

import gpuknn
from gpuknn import DeviceUnavailableError, InvalidInputError
from gpuknn._backend import array_namespace, from_numpy, resolve_device, to_numpy, validate_matrix
from gpuknn._memory import default_working_memory, is_out_of_memory


def test_import_does_not_load_cupy_or_matplotlib():
    code = "import sys, gpuknn; print('cupy' in sys.modules, 'matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_public_names_resolve():
    for name in gpuknn.__all__:
        assert getattr(gpuknn, name) is not None


def test_resolve_device(monkeypatch):
    monkeypatch.delenv("GPUKNN_DEVICE", raising=False)
    assert "numpy" in resolve_device("cpu").__name__
    with pytest.raises(InvalidInputError, match="device"):
        resolve_device("tpu")
    monkeypatch.setattr("gpuknn._backend._import_cupy", lambda: None)
    assert "numpy" in resolve_device("auto").__name__
    with pytest.raises(DeviceUnavailableError, match="CuPy"):
        resolve_device("gpu")
    monkeypatch.setenv("GPUKNN_DEVICE", "cpu")
    assert "numpy" in resolve_device("gpu").__name__  # the environment overrides
    monkeypatch.setenv("GPUKNN_DEVICE", " ")
    with pytest.raises(DeviceUnavailableError, match="CuPy"):
        resolve_device("gpu")  # ... only when set to something: an explicit "gpu" stays


def test_mixed_inputs_name_both_namespaces_and_the_cure():
    strict = pytest.importorskip("array_api_strict")
    with pytest.raises(InvalidInputError, match=r"different namespaces.*array_api_strict.*numpy.*convert"):
        array_namespace(np.zeros(2), strict.zeros(2))
    with pytest.raises(InvalidInputError, match=r"different devices.*device1.*move"):
        array_namespace(strict.zeros(2), strict.zeros(2, device=strict.Device("device1")))


def test_namespace_round_trip(xp, to_xp):
    a = to_xp(np.arange(6.0).reshape(2, 3))
    assert array_namespace(a) is not None
    np.testing.assert_array_equal(to_numpy(a), np.arange(6.0).reshape(2, 3))
    b = from_numpy(np.ones(3), array_namespace(a))
    assert type(b) is type(a)
    assert "numpy" in array_namespace([1, 2], None).__name__


def test_validate_matrix(xp, to_xp):
    ns = array_namespace(to_xp(np.zeros(1)))
    X = validate_matrix(to_xp(np.arange(6).reshape(2, 3)), ns)
    assert X.dtype == ns.float64
    X32 = validate_matrix(to_xp(np.zeros((2, 2), dtype=np.float32)), ns)
    assert X32.dtype == ns.float32
    with pytest.raises(InvalidInputError, match="2-D"):
        validate_matrix(to_xp(np.zeros(3)), ns)
    with pytest.raises(InvalidInputError, match="empty"):
        validate_matrix(to_xp(np.zeros((0, 3))), ns)
    bad = np.zeros((12, 2))
    bad[[1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0], 0] = np.nan
    with pytest.raises(InvalidInputError, match=r"11 row\(s\): 0, 1, 3.*\.\.\."):
        validate_matrix(to_xp(bad), ns, name="X")


def test_working_memory_and_oom_detection(monkeypatch):
    # the variable is in MiB, as the working_memory argument (fractions of a MiB allowed)
    monkeypatch.setenv("GPUKNN_WORKING_MEMORY", "100")
    assert default_working_memory(array_namespace(np.zeros(1))) == 100 << 20
    monkeypatch.setenv("GPUKNN_WORKING_MEMORY", "0.5")
    assert default_working_memory(array_namespace(np.zeros(1))) == 1 << 19
    for bad in ("0", "-3", "nan", "inf", "lots"):
        monkeypatch.setenv("GPUKNN_WORKING_MEMORY", bad)
        with pytest.raises(InvalidInputError, match="GPUKNN_WORKING_MEMORY must be a positive number of MiB"):
            default_working_memory(array_namespace(np.zeros(1)))
    monkeypatch.delenv("GPUKNN_WORKING_MEMORY")
    assert default_working_memory(array_namespace(np.zeros(1))) == 256 << 20

    class OutOfMemoryError(Exception):
        pass

    assert is_out_of_memory(MemoryError()) and is_out_of_memory(OutOfMemoryError("x"))
    assert not is_out_of_memory(ValueError("bad"))


def test_working_memory_variable_caps_the_gpu_default(monkeypatch):
    # Four test workers on one GPU each planned with half of what was free: the variable
    # (set by scripts/gpu_check.sh) caps the device default, and never raises it.
    import gpuknn._memory as memory

    xp = array_namespace(np.zeros(1))
    monkeypatch.setattr(memory, "free_device_memory", lambda xp, device=None: 40 << 30)
    monkeypatch.delenv("GPUKNN_WORKING_MEMORY", raising=False)
    assert default_working_memory(xp) == 20 << 30
    monkeypatch.setenv("GPUKNN_WORKING_MEMORY", str(4 << 10))  # MiB
    assert default_working_memory(xp) == 4 << 30
    monkeypatch.setenv("GPUKNN_WORKING_MEMORY", str(64 << 10))
    assert default_working_memory(xp) == 20 << 30


def test_check_int_refuses_bools_and_floats():
    """Issue 18: True is no count, nor is 2.0 (k grids, n_neighbors, ...)."""
    from gpuknn._backend import check_int

    assert check_int(np.int64(3), name="k") == 3
    for bad in (True, np.True_, 2.0, "2", None):
        with pytest.raises(InvalidInputError, match="k must be an integer"):
            check_int(bad, name="k")


def test_host_inputs_are_converted_or_refused_with_a_clear_message():
    # issue 18: np.matrix, masked arrays, sparse, complex, object and ragged input gave raw
    # TypeErrors or silent wrong answers; each is now converted or refused by name
    import scipy.sparse

    from gpuknn._backend import array_namespace, validate_matrix
    from gpuknn.errors import InvalidInputError, InvalidInputTypeError

    xp = array_namespace(np.ones(1))
    with pytest.warns(PendingDeprecationWarning):  # NumPy's own, on creating a matrix
        mat = np.matrix([[1, 2], [3, 4]])
    m = validate_matrix(mat, xp)
    assert type(m) is np.ndarray and m.dtype == np.float64  # np.matrix's * would be a product
    ok = validate_matrix(np.ma.masked_array([[1.0, 2.0]], mask=[[0, 0]]), xp)
    assert type(ok) is np.ndarray
    np.testing.assert_array_equal(validate_matrix(np.array([[1, "2"]], dtype=object), xp), [[1.0, 2.0]])
    cases = [
        (np.ma.masked_array([[1.0, 2.0]], mask=[[0, 1]]), InvalidInputError, "masked array with 1 masked"),
        (scipy.sparse.csr_matrix(np.eye(2)), InvalidInputError, "sparse input is not supported"),
        (np.array([[1 + 2j]]), InvalidInputError, "Complex data not supported"),
        (np.array([[{"a": 1}]], dtype=object), InvalidInputTypeError, "not numbers"),
        ([[1.0, 2.0], [3.0]], InvalidInputError, "cannot be read as an array"),
        (np.ones(3), InvalidInputError, "Reshape your data"),
        (np.ones((3, 0)), InvalidInputError, r"0 feature\(s\)"),
    ]
    for X, exc, msg in cases:
        with pytest.raises(exc, match=msg):
            validate_matrix(X, xp, name="X")


def test_dataframes_are_host_data():
    pd = pytest.importorskip("pandas")
    from gpuknn._backend import array_namespace, validate_matrix

    df = pd.DataFrame({"a": [1, 2], "b": [3.5, 4.5]})
    xp = array_namespace(df)
    np.testing.assert_array_equal(validate_matrix(df, xp), [[1.0, 3.5], [2.0, 4.5]])


def test_torch_cuda_default_reads_the_devices_free_memory(monkeypatch):
    """torch on a CUDA device plans with half that device's free memory (plus what torch's
    allocator holds unused), as CuPy does; torch CPU keeps the host default."""
    torch = pytest.importorskip("torch")
    import array_api_compat.torch as tx

    from gpuknn import _memory as memory

    monkeypatch.delenv("GPUKNN_WORKING_MEMORY", raising=False)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (30 << 30, 80 << 30))
    monkeypatch.setattr(torch.cuda, "memory_reserved", lambda device=None: 6 << 30)
    monkeypatch.setattr(torch.cuda, "memory_allocated", lambda device=None: 4 << 30)
    assert memory.default_working_memory(tx, torch.device("cuda", 0)) == 16 << 30
    assert memory.default_working_memory(tx, torch.device("cpu")) == 256 << 20
    assert memory.default_working_memory(tx) == 256 << 20
