"""Opt-in download, against a file server on 127.0.0.1 (never the internet)."""

from __future__ import annotations

import functools
import gzip
import hashlib
import http.server
import socket
import struct
import threading
from pathlib import Path

import numpy as np
import pytest

import gpuknn.datasets.fashion_mnist as fm
from gpuknn.datasets import (
    FASHION_MNIST_FILES,
    FASHION_MNIST_MD5,
    FASHION_MNIST_RAW_SHA256,
    FASHION_MNIST_SHA256,
    download_fashion_mnist,
    load_fashion_mnist,
    write_idx,
)
from gpuknn.errors import CorruptDataError, DataNotFoundError, InvalidInputError


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    requests_seen: list[str] = []

    def log_message(self, *args):  # keep test output clean
        pass

    def do_GET(self):
        type(self).requests_seen.append(self.path)
        super().do_GET()


@pytest.fixture
def served(tmp_path):
    """Serve tmp_path/srv (four small valid .gz files) on 127.0.0.1; stopped after the test."""
    srv = tmp_path / "srv"
    srv.mkdir()
    rng = np.random.default_rng(1)
    write_idx(srv / "train-images-idx3-ubyte.gz", rng.integers(0, 256, (20, 28, 28), dtype=np.uint8))
    write_idx(srv / "train-labels-idx1-ubyte.gz", (np.arange(20) % 10).astype(np.uint8))
    write_idx(srv / "t10k-images-idx3-ubyte.gz", rng.integers(0, 256, (10, 28, 28), dtype=np.uint8))
    write_idx(srv / "t10k-labels-idx1-ubyte.gz", (np.arange(10) % 10).astype(np.uint8))
    sums = {n: hashlib.sha256((srv / n).read_bytes()).hexdigest() for n in FASHION_MNIST_FILES}
    handler = type("H", (_QuietHandler,), {"requests_seen": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(srv)))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield {"url": f"http://127.0.0.1:{server.server_address[1]}/", "dir": srv, "sha256": sums, "handler": handler}
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def leftovers(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir()) if d.exists() else []


def test_download_success_then_load(served, tmp_path):
    dest = tmp_path / "dest" / "nested"
    out = download_fashion_mnist(dest, base_url=served["url"], sha256=served["sha256"], timeout=5)
    assert out == dest
    assert leftovers(dest) == sorted(FASHION_MNIST_FILES)  # no *.part files
    for name in FASHION_MNIST_FILES:
        assert (dest / name).read_bytes() == (served["dir"] / name).read_bytes()
    Xtr, ytr, Xte, yte = load_fashion_mnist(data_dir=dest, expected_sizes=None)
    assert Xtr.shape == (20, 784) and yte.shape == (10,)


def test_verified_files_are_not_fetched_again(served, tmp_path):
    kw = dict(base_url=served["url"].rstrip("/"), sha256=served["sha256"], timeout=5)
    download_fashion_mnist(tmp_path / "d", **kw)
    assert len(served["handler"].requests_seen) == 4
    download_fashion_mnist(tmp_path / "d", **kw)
    assert len(served["handler"].requests_seen) == 4
    download_fashion_mnist(tmp_path / "d", force=True, **kw)
    assert len(served["handler"].requests_seen) == 8


def test_checksum_mismatch_raises_and_leaves_nothing(served, tmp_path):
    sums = dict(served["sha256"], **{"train-images-idx3-ubyte.gz": "0" * 64})
    dest = tmp_path / "dest"
    with pytest.raises(CorruptDataError, match=r"train-images-idx3-ubyte\.gz: SHA-256 [0-9a-f]{64} does not match"):
        download_fashion_mnist(dest, base_url=served["url"], sha256=sums, timeout=5)
    assert leftovers(dest) == []  # first file: nothing moved into place, temp file removed


def test_mismatch_on_a_later_file_keeps_only_verified_files(served, tmp_path):
    sums = dict(served["sha256"], **{"t10k-images-idx3-ubyte.gz": "f" * 64})
    dest = tmp_path / "dest"
    with pytest.raises(CorruptDataError):
        download_fashion_mnist(dest, base_url=served["url"], sha256=sums, timeout=5)
    assert leftovers(dest) == ["train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"]


def test_wrong_existing_file_is_replaced(served, tmp_path):
    dest = tmp_path / "dest"
    dest.mkdir()
    (dest / "train-labels-idx1-ubyte.gz").write_bytes(b"stale")
    download_fashion_mnist(dest, base_url=served["url"], sha256=served["sha256"], timeout=5)
    assert (dest / "train-labels-idx1-ubyte.gz").read_bytes() == (
        served["dir"] / "train-labels-idx1-ubyte.gz"
    ).read_bytes()


def test_http_404_is_a_clear_error(served, tmp_path):
    (served["dir"] / "t10k-labels-idx1-ubyte.gz").unlink()
    dest = tmp_path / "dest"
    with pytest.raises(DataNotFoundError, match=r"t10k-labels-idx1-ubyte\.gz failed: HTTP 404"):
        download_fashion_mnist(dest, base_url=served["url"], sha256=served["sha256"], timeout=5)
    assert "t10k-labels-idx1-ubyte.gz" not in leftovers(dest)
    assert not any(n.endswith(".part") for n in leftovers(dest))


def test_connection_refused_is_a_clear_error(tmp_path):
    with socket.socket() as s:  # a port that nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DataNotFoundError, match=r"download of http://127\.0\.0\.1:\d+/train-images.* failed"):
        download_fashion_mnist(
            tmp_path / "d", base_url=f"http://127.0.0.1:{port}/", sha256=FASHION_MNIST_SHA256, timeout=2
        )
    assert leftovers(tmp_path / "d") == []


def test_bad_arguments(tmp_path):
    with pytest.raises(InvalidInputError, match="no checksum for"):
        download_fashion_mnist(tmp_path, sha256={"train-images-idx3-ubyte.gz": "0" * 64})
    with pytest.raises(InvalidInputError, match="timeout"):
        download_fashion_mnist(tmp_path, timeout=0)


def test_load_with_download_true_uses_first_search_dir(served, tmp_path, monkeypatch):
    monkeypatch.delenv("GPUKNN_DATA", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(fm, "SYSTEM_DATA_DIR", tmp_path / "no-system-dir")
    local = functools.partial(download_fashion_mnist, base_url=served["url"], sha256=served["sha256"], timeout=5)
    monkeypatch.setattr(fm, "download_fashion_mnist", local)
    with pytest.raises(DataNotFoundError):  # download=False never downloads
        load_fashion_mnist(expected_sizes=None)
    assert served["handler"].requests_seen == []
    Xtr, ytr, Xte, yte = load_fashion_mnist(download=True, expected_sizes=None)
    assert Xtr.shape == (20, 784)
    assert leftovers(tmp_path / "data" / "fashion-mnist") == sorted(FASHION_MNIST_FILES)


def test_official_constants_are_consistent(fashion_dir):
    """The Debian files are the official deflate streams with a normalised gzip header.

    Their payloads hash to FASHION_MNIST_RAW_SHA256; putting back the original header
    (FNAME set, file name, 2017 time stamp) of the two small label files rebuilds the
    official .gz bytes: MD5 = Zalando's published value, SHA-256 = FASHION_MNIST_SHA256.
    """
    for stem, sha in FASHION_MNIST_RAW_SHA256.items():
        path = fashion_dir / (stem + ".gz")
        if not path.exists():
            pytest.skip("raw (not gzipped) Fashion-MNIST files")
        assert hashlib.sha256(gzip.decompress(path.read_bytes())).hexdigest() == sha
    for name, mtime in (("t10k-labels-idx1-ubyte.gz", 1504176627), ("train-labels-idx1-ubyte.gz", 1504176606)):
        data = (fashion_dir / name).read_bytes()
        if data[3] != 0:  # already has the original header (official copy)
            rebuilt = data
        else:
            rebuilt = (
                b"\x1f\x8b\x08\x08" + struct.pack("<I", mtime) + b"\x00\x03" + name[:-3].encode() + b"\x00" + data[10:]
            )
        assert hashlib.md5(rebuilt).hexdigest() == FASHION_MNIST_MD5[name]
        assert hashlib.sha256(rebuilt).hexdigest() == FASHION_MNIST_SHA256[name]
