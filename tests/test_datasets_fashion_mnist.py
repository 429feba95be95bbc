"""Fashion-MNIST loader: search path, validation, namespaces, and the real files."""

from __future__ import annotations

import time

import numpy as np
import pytest

import gpuknn.datasets.fashion_mnist as fm
from gpuknn._backend import array_namespace, to_numpy
from gpuknn.datasets import FASHION_MNIST_CLASSES, load_fashion_mnist, write_idx
from gpuknn.errors import CorruptDataError, DataNotFoundError, InvalidInputError

NAMES = {
    "train_x": "train-images-idx3-ubyte",
    "train_y": "train-labels-idx1-ubyte",
    "test_x": "t10k-images-idx3-ubyte",
    "test_y": "t10k-labels-idx1-ubyte",
}


def make_fake_dir(d, *, n_train=30, n_test=10, gz=True, seed=0, **override):
    """Small valid IDX directory; ``override`` replaces one array by key of NAMES."""
    rng = np.random.default_rng(seed)
    arrays = {
        "train_x": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
        "train_y": (np.arange(n_train) % 10).astype(np.uint8),
        "test_x": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
        "test_y": (np.arange(n_test) % 10).astype(np.uint8),
    }
    arrays.update(override)
    d.mkdir(parents=True, exist_ok=True)
    for key, arr in arrays.items():
        write_idx(d / (NAMES[key] + (".gz" if gz else "")), arr)
    return arrays


@pytest.fixture
def isolated(tmp_path, monkeypatch):
    """No GPUKNN_DATA, cwd without ./data, and no system directory: only what a test writes."""
    monkeypatch.delenv("GPUKNN_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(fm, "SYSTEM_DATA_DIR", tmp_path / "no-system-dir")
    return tmp_path


def load_small(d, **kw):
    return load_fashion_mnist(data_dir=d, expected_sizes=None, **kw)


def test_classes():
    assert len(FASHION_MNIST_CLASSES) == 10
    assert FASHION_MNIST_CLASSES[0] == "T-shirt/top" and FASHION_MNIST_CLASSES[9] == "Ankle boot"


@pytest.mark.parametrize("gz", [True, False])
def test_fake_dir_round_trip(isolated, gz):
    arrays = make_fake_dir(isolated / "fm", gz=gz)
    Xtr, ytr, Xte, yte = load_small(isolated / "fm")
    assert Xtr.shape == (30, 784) and Xte.shape == (10, 784)
    assert Xtr.dtype == np.float32 and ytr.dtype == np.int64
    np.testing.assert_array_equal(Xtr, arrays["train_x"].reshape(30, 784).astype(np.float32))
    np.testing.assert_array_equal(yte, arrays["test_y"])
    assert Xtr.flags.writeable  # a copy, not a view of the read-only file buffer


def test_dtype_and_subset(isolated):
    make_fake_dir(isolated / "fm")
    Xtr, ytr, Xte, yte = load_small(isolated / "fm", dtype="float64", subset=(7, 3))
    assert Xtr.dtype == np.float64 and Xtr.shape == (7, 784) and Xte.shape == (3, 784)
    Xtr, ytr, Xte, yte = load_small(isolated / "fm", dtype="uint8", subset=20)
    assert Xtr.dtype == np.uint8 and Xtr.shape == (20, 784) and Xte.shape == (10, 784)  # capped
    with pytest.raises(InvalidInputError, match="subset"):
        load_small(isolated / "fm", subset=0)
    with pytest.raises(InvalidInputError, match="dtype"):
        load_small(isolated / "fm", dtype="int64")


def test_returns_requested_namespace(isolated, xp):
    make_fake_dir(isolated / "fm")
    Xtr, ytr, Xte, yte = load_small(isolated / "fm", xp=xp)
    for a in (Xtr, ytr, Xte, yte):
        assert array_namespace(a).__name__ == xp.__name__
    assert Xtr.dtype == xp.float32 and ytr.dtype == xp.int64
    assert tuple(Xte.shape) == (10, 784)
    assert float(xp.max(Xtr)) <= 255.0


def test_search_order_env_then_local(isolated, monkeypatch):
    make_fake_dir(isolated / "data" / "fashion-mnist", n_train=20)
    assert load_small(None)[0].shape[0] == 20  # ./data/fashion-mnist
    make_fake_dir(isolated / "env", n_train=25)
    monkeypatch.setenv("GPUKNN_DATA", str(isolated / "env"))
    assert load_small(None)[0].shape[0] == 25  # $GPUKNN_DATA before ./data
    make_fake_dir(isolated / "explicit", n_train=12)
    assert load_small(isolated / "explicit")[0].shape[0] == 12  # data_dir first
    assert fm.find_fashion_mnist(isolated / "explicit") == isolated / "explicit"


def test_missing_lists_every_path_and_remedies(isolated, monkeypatch):
    partial = isolated / "partial"
    make_fake_dir(partial)
    (partial / "t10k-labels-idx1-ubyte.gz").unlink()
    monkeypatch.setenv("GPUKNN_DATA", str(isolated / "envdir"))
    with pytest.raises(DataNotFoundError) as info:
        load_fashion_mnist(data_dir=partial)
    msg = str(info.value)
    assert str(partial) in msg and "missing t10k-labels-idx1-ubyte" in msg
    assert str(isolated / "envdir") in msg and "directory does not exist" in msg
    assert str(isolated / "data" / "fashion-mnist") in msg
    assert str(isolated / "no-system-dir") in msg
    assert "apt-get install dataset-fashion-mnist" in msg
    assert "GPUKNN_DATA" in msg and "download=True" in msg
    assert isinstance(info.value, FileNotFoundError)


def test_label_out_of_range(isolated):
    bad = (np.arange(10) % 10).astype(np.uint8)
    bad[4] = 12
    make_fake_dir(isolated / "fm", test_y=bad)
    with pytest.raises(
        CorruptDataError,
        match=r"t10k-labels-idx1-ubyte\.gz: 1 label\(s\) outside 0\.\.9, first at index 4 \(value 12\)",
    ):
        load_small(isolated / "fm")


def test_count_mismatch(isolated):
    make_fake_dir(isolated / "fm", train_y=np.zeros(29, dtype=np.uint8))
    with pytest.raises(CorruptDataError, match=r"train-images.*30 images but .*train-labels.*29 labels"):
        load_small(isolated / "fm")


def test_expected_sizes_enforced_by_default(isolated):
    make_fake_dir(isolated / "fm")
    with pytest.raises(
        CorruptDataError, match=r"train-images-idx3-ubyte\.gz: 30 images, the train split of Fashion-MNIST has 60000"
    ):
        load_fashion_mnist(data_dir=isolated / "fm")


def test_wrong_image_side(isolated):
    make_fake_dir(isolated / "fm", test_x=np.zeros((10, 27, 29), dtype=np.uint8))
    with pytest.raises(CorruptDataError, match=r"t10k-images-idx3-ubyte\.gz: images are 27x29"):
        load_small(isolated / "fm")


def test_bad_magic_and_truncation_name_the_file(isolated):
    make_fake_dir(isolated / "fm", gz=False)
    lab = isolated / "fm" / "train-labels-idx1-ubyte"
    img = isolated / "fm" / "train-images-idx3-ubyte"
    # swap the two files: images where labels belong -> bad magic number
    lab_bytes, img_bytes = lab.read_bytes(), img.read_bytes()
    lab.write_bytes(img_bytes)
    with pytest.raises(CorruptDataError, match=r"train-labels-idx1-ubyte: bad magic number 2051"):
        load_small(isolated / "fm")
    lab.write_bytes(lab_bytes)
    img.write_bytes(img_bytes[:-5])
    with pytest.raises(CorruptDataError, match=r"train-images-idx3-ubyte: file truncated"):
        load_small(isolated / "fm")


def test_corrupt_data_is_not_silently_replaced_by_another_copy(isolated):
    make_fake_dir(isolated / "data" / "fashion-mnist")
    make_fake_dir(isolated / "fm")
    (isolated / "fm" / "t10k-images-idx3-ubyte.gz").write_bytes(b"\x1f\x8bgarbage")
    with pytest.raises(CorruptDataError, match=r"t10k-images-idx3-ubyte\.gz: invalid or truncated gzip"):
        load_small(isolated / "fm")


def test_real_fashion_mnist(fashion_dir):
    t0 = time.perf_counter()
    Xtr, ytr, Xte, yte = load_fashion_mnist(data_dir=fashion_dir)
    elapsed = time.perf_counter() - t0
    assert Xtr.shape == (60000, 784) and Xte.shape == (10000, 784)
    assert Xtr.dtype == np.float32 and ytr.dtype == np.int64 and yte.dtype == np.int64
    np.testing.assert_array_equal(np.bincount(ytr, minlength=10), np.full(10, 6000))
    np.testing.assert_array_equal(np.bincount(yte, minlength=10), np.full(10, 1000))
    assert float(Xtr.min()) == 0.0 and float(Xtr.max()) == 255.0  # not rescaled
    assert np.array_equal(Xtr, np.round(Xtr))
    assert elapsed < 5.0, f"loading took {elapsed:.2f} s"  # ~0.7 s here; slack for slow CI


def test_real_fashion_mnist_subset_in_namespace(fashion_dir, xp):
    Xtr, ytr, Xte, yte = load_fashion_mnist(data_dir=fashion_dir, subset=(100, 50), xp=xp)
    assert tuple(Xtr.shape) == (100, 784) and tuple(yte.shape) == (50,)
    assert array_namespace(Xtr).__name__ == xp.__name__
    full = load_fashion_mnist(data_dir=fashion_dir, subset=(100, 50))
    np.testing.assert_array_equal(to_numpy(ytr), full[1])
