"""IDX reader/writer: round trips and every kind of damage."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from gpuknn.datasets.idx import idx_magic, read_idx, write_idx
from gpuknn.errors import CorruptDataError, InvalidInputError


@pytest.mark.parametrize("suffix", ["", ".gz"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64])
def test_round_trip(tmp_path, suffix, dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((3, 4, 5)) * 50).astype(dtype)
    p = tmp_path / f"a-idx3{suffix}"
    write_idx(p, a)
    back = read_idx(p)
    assert back.dtype == np.dtype(dtype).newbyteorder("=")
    assert back.dtype.isnative
    np.testing.assert_array_equal(back, a)


def test_gzip_detected_from_content_not_name(tmp_path):
    a = np.arange(10, dtype=np.uint8)
    gz = tmp_path / "labels.gz"
    write_idx(gz, a)
    renamed = tmp_path / "labels-without-suffix"
    renamed.write_bytes(gz.read_bytes())
    np.testing.assert_array_equal(read_idx(renamed, magic=2049), a)
    raw_named_gz = tmp_path / "raw.gz"
    raw_named_gz.write_bytes(gzip.decompress(gz.read_bytes()))
    np.testing.assert_array_equal(read_idx(raw_named_gz, magic=2049), a)


def test_header_layout_matches_the_spec(tmp_path):
    p = tmp_path / "x"
    write_idx(p, np.zeros((2, 28, 28), dtype=np.uint8))
    raw = p.read_bytes()
    assert int.from_bytes(raw[:4], "big") == 2051 == idx_magic(0x08, 3)
    assert [int.from_bytes(raw[i : i + 4], "big") for i in (4, 8, 12)] == [2, 28, 28]
    assert len(raw) == 16 + 2 * 28 * 28


def test_bad_magic_names_file_and_numbers(tmp_path):
    p = tmp_path / "labels-idx1-ubyte"
    write_idx(p, np.zeros(5, dtype=np.uint8))
    with pytest.raises(CorruptDataError, match=r"labels-idx1-ubyte.*bad magic number 2049.*expected 2051"):
        read_idx(p, magic=2051)


def test_nonzero_leading_bytes(tmp_path):
    p = tmp_path / "junk.bin"
    p.write_bytes(b"PK\x03\x04" + bytes(20))
    with pytest.raises(CorruptDataError, match=r"junk\.bin: not an IDX file"):
        read_idx(p)


def test_wrong_dtype_byte(tmp_path):
    p = tmp_path / "img-idx3-ubyte"
    write_idx(p, np.zeros((2, 3, 3), dtype=np.int16))  # type 0x0B instead of 0x08
    with pytest.raises(CorruptDataError, match=r"img-idx3-ubyte.*element type 0x0b.*expected type 0x08"):
        read_idx(p, magic=2051)


def test_unknown_dtype_byte(tmp_path):
    p = tmp_path / "odd"
    p.write_bytes(bytes([0, 0, 0x07, 1]) + (3).to_bytes(4, "big") + bytes(3))
    with pytest.raises(CorruptDataError, match=r"odd: unknown IDX element type 0x07"):
        read_idx(p)


@pytest.mark.parametrize("suffix", ["", ".gz"])
def test_truncated_payload(tmp_path, suffix):
    p = tmp_path / f"t10k-images{suffix}"
    write_idx(tmp_path / "full", np.ones((4, 28, 28), dtype=np.uint8))
    data = (tmp_path / "full").read_bytes()[:-100]
    p.write_bytes(gzip.compress(data) if suffix else data)
    with pytest.raises(CorruptDataError, match=rf"t10k-images{suffix}: file truncated.*\(4, 28, 28\)"):
        read_idx(p, magic=2051)


def test_trailing_bytes(tmp_path):
    p = tmp_path / "x"
    write_idx(p, np.ones(4, dtype=np.uint8))
    p.write_bytes(p.read_bytes() + b"\x00")
    with pytest.raises(CorruptDataError, match="trailing bytes"):
        read_idx(p)


def test_truncated_header(tmp_path):
    p = tmp_path / "short"
    p.write_bytes(bytes([0, 0, 8, 3, 0, 0]))
    with pytest.raises(CorruptDataError, match=r"short: truncated header"):
        read_idx(p)
    p.write_bytes(b"\x00\x00")
    with pytest.raises(CorruptDataError, match="too short"):
        read_idx(p)


def test_truncated_gzip_stream(tmp_path):
    p = tmp_path / "train-labels-idx1-ubyte.gz"
    write_idx(p, np.arange(200, dtype=np.uint8))
    p.write_bytes(p.read_bytes()[:-12])
    with pytest.raises(CorruptDataError, match=r"train-labels-idx1-ubyte\.gz: invalid or truncated gzip"):
        read_idx(p)


def test_corrupt_gzip_stream(tmp_path):
    p = tmp_path / "bad.gz"
    p.write_bytes(b"\x1f\x8b\x08\x00" + bytes(6) + b"not deflate data at all")
    with pytest.raises(CorruptDataError, match=r"bad\.gz: invalid or truncated gzip"):
        read_idx(p)


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_idx(tmp_path / "nope")


def test_write_rejects_unsupported_dtype(tmp_path):
    with pytest.raises(InvalidInputError, match="IDX cannot store dtype"):
        write_idx(tmp_path / "x", np.zeros(3, dtype=np.int64))
