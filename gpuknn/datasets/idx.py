"""Reader and writer of the IDX format (MNIST, Fashion-MNIST), gzipped or raw.

An IDX file is a header followed by one C-ordered array in big-endian byte order::

    bytes 0-1   zero
    byte  2     element type: 0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
                0x0D float32, 0x0E float64
    byte  3     number of dimensions d
    4*d bytes   each dimension as a big-endian uint32
    ...         prod(dims) elements

The "magic number" is the first four bytes read as a big-endian integer, e.g. 2051
(``0x00000803``: uint8, 3-D) for images and 2049 (``0x00000801``: uint8, 1-D) for labels.

The whole file is read at once and viewed with :func:`numpy.frombuffer` (no Python loop
over elements): Fashion-MNIST's 47 MB of training images decode in a fraction of a second.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

import numpy as np

from ..errors import CorruptDataError, InvalidInputError

__all__ = ["IDX_DTYPES", "read_idx", "write_idx", "idx_magic"]

#: IDX element-type byte -> NumPy dtype (big-endian as stored on disk).
IDX_DTYPES: dict[int, np.dtype] = {
    0x08: np.dtype(np.uint8),
    0x09: np.dtype(np.int8),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_GZIP_MAGIC = b"\x1f\x8b"


def idx_magic(dtype_byte: int, ndim: int) -> int:
    """The IDX magic number of an array of element type ``dtype_byte`` and ``ndim`` dims.

    Examples
    --------
    >>> idx_magic(0x08, 3), idx_magic(0x08, 1)
    (2051, 2049)
    """
    return (int(dtype_byte) << 8) | int(ndim)


def _read_bytes(path: Path) -> bytes:
    """File content, gunzipped when the file starts with the gzip magic bytes."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise CorruptDataError(f"{path}: cannot read the file ({exc})") from exc
    # Decide on content, not on the name: a '.gz' that was gunzipped in place still loads.
    if raw[:2] != _GZIP_MAGIC:
        return raw
    try:
        return gzip.decompress(raw)
    except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
        raise CorruptDataError(
            f"{path}: invalid or truncated gzip data ({type(exc).__name__}: {exc}); delete the file and get it again"
        ) from exc


def read_idx(path: str | os.PathLike, *, magic: int | None = None) -> np.ndarray:
    """Read one IDX file (raw or gzip-compressed) into a native-byte-order NumPy array.

    Parameters
    ----------
    path : str or path-like
        The file. Gzip compression is detected from the content, not from the name.
    magic : int, optional
        Expected magic number (e.g. 2051 for uint8 images, 2049 for uint8 labels);
        ``None`` accepts any valid header.

    Returns
    -------
    numpy.ndarray
        Shape ``dims`` from the header, dtype from the element-type byte (native order).
        Read-only for uint8/int8 data (a view of the file's bytes); copy before writing.

    Raises
    ------
    FileNotFoundError
        ``path`` does not exist (callers turn this into :class:`DataNotFoundError`).
    CorruptDataError
        Bad gzip stream, bad header, unexpected magic number, unknown element type, or a
        file length that disagrees with the header. The message names the file.

    Notes
    -----
    Time and memory are O(file size): one read, one decompression, one ``frombuffer``.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "a-idx1-ubyte.gz")
    >>> write_idx(p, np.arange(5, dtype=np.uint8))
    >>> read_idx(p, magic=2049)
    array([0, 1, 2, 3, 4], dtype=uint8)
    """
    path = Path(path)
    data = _read_bytes(path)
    if len(data) < 4:
        raise CorruptDataError(f"{path}: {len(data)} bytes is too short for an IDX header")
    found = int.from_bytes(data[:4], "big")
    if data[0] != 0 or data[1] != 0:
        raise CorruptDataError(
            f"{path}: not an IDX file (magic number {found} = 0x{found:08x}; the first two bytes must be zero)"
        )
    dtype_byte, ndim = data[2], data[3]
    if magic is not None and found != magic:
        raise CorruptDataError(
            f"{path}: bad magic number {found} (0x{found:08x}), expected {magic} (0x{magic:08x}): "
            f"element type 0x{dtype_byte:02x} with {ndim} dimension(s), expected type "
            f"0x{(magic >> 8) & 0xFF:02x} with {magic & 0xFF} dimension(s)"
        )
    if dtype_byte not in IDX_DTYPES:
        raise CorruptDataError(f"{path}: unknown IDX element type 0x{dtype_byte:02x}")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise CorruptDataError(f"{path}: truncated header ({len(data)} bytes, {ndim} dimensions need {header})")
    dims = tuple(int(d) for d in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    dtype = IDX_DTYPES[dtype_byte]
    expected = header + int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    if len(data) != expected:
        what = "truncated" if len(data) < expected else "has trailing bytes"
        raise CorruptDataError(
            f"{path}: file {what}: header says shape {dims} of {dtype.name} "
            f"({expected} bytes with the header), the data has {len(data)} bytes"
        )
    arr = np.frombuffer(data, dtype=dtype, offset=header).reshape(dims)
    if dtype.byteorder == ">":  # multi-byte types: convert to native order once
        arr = arr.astype(dtype.newbyteorder("="))
    return arr


def write_idx(path: str | os.PathLike, array: np.ndarray) -> None:
    """Write ``array`` as an IDX file, gzip-compressed when ``path`` ends in ``.gz``.

    Parameters
    ----------
    path : str or path-like
        Destination; written in one go (not atomically).
    array : numpy.ndarray
        Any shape with 1..255 dimensions; dtype uint8, int8, int16, int32, float32 or float64.

    Raises
    ------
    InvalidInputError
        Unsupported dtype or number of dimensions.

    Examples
    --------
    >>> import numpy as np, tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "x-idx3-ubyte")
    >>> write_idx(p, np.zeros((2, 28, 28), dtype=np.uint8))
    >>> read_idx(p, magic=2051).shape
    (2, 28, 28)
    """
    array = np.asarray(array)
    codes = {dt.newbyteorder("=").str[1:]: code for code, dt in IDX_DTYPES.items()}
    key = array.dtype.newbyteorder("=").str[1:]
    if key not in codes:
        raise InvalidInputError(
            f"IDX cannot store dtype {array.dtype}; use one of uint8, int8, int16, int32, float32, float64"
        )
    if not 1 <= array.ndim <= 255:
        raise InvalidInputError(f"IDX needs 1..255 dimensions, got shape {array.shape}")
    code = codes[key]
    header = bytes([0, 0, code, array.ndim]) + np.asarray(array.shape, dtype=">u4").tobytes()
    payload = header + np.ascontiguousarray(array, dtype=IDX_DTYPES[code]).tobytes()
    if str(path).endswith(".gz"):
        payload = gzip.compress(payload, compresslevel=6, mtime=0)
    Path(path).write_bytes(payload)
