"""Opt-in download of Fashion-MNIST, verified by SHA-256 before anything lands on disk.

Nothing here runs unless a caller asks (``download_fashion_mnist`` or
``load_fashion_mnist(download=True)``). Each file is streamed into a temporary file in the
destination directory, hashed while it is written, and moved into place with
:func:`os.replace` only when its SHA-256 matches: an interrupted or corrupted download
leaves no half-written ``*.gz`` behind.

Where the checksums come from
-----------------------------
Zalando publishes MD5s of the four ``.gz`` files (:data:`FASHION_MNIST_MD5`).
:data:`FASHION_MNIST_SHA256` are the SHA-256s of those same official files, checked as
follows: the Debian package ``dataset-fashion-mnist`` ships the
official deflate streams with a normalised gzip header (``strip-nondeterminism`` removed the
stored file name and reset the time stamp), so its files have other MD5s. Re-inserting the
name and the original time stamps (2017-08-31) rebuilt files whose MD5s equal the official
ones exactly; their SHA-256s are the constants below, and they also equal the values
TensorFlow Datasets lists for these URLs (``url_checksums/fashion_mnist.txt``).
:data:`FASHION_MNIST_RAW_SHA256` are the SHA-256s of the decompressed IDX payloads, which
are the same for the official and the Debian files.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

from ..errors import CorruptDataError, DataNotFoundError, InvalidInputError

__all__ = [
    "OFFICIAL_URL",
    "FASHION_MNIST_FILES",
    "FASHION_MNIST_MD5",
    "FASHION_MNIST_SHA256",
    "FASHION_MNIST_RAW_SHA256",
    "download_fashion_mnist",
    "sha256_file",
]

#: Zalando's official download location (``base_url + file name``).
OFFICIAL_URL = "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"

#: The four files of the data set, in the order train images/labels, test images/labels.
FASHION_MNIST_FILES = (
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
)

#: MD5s published by Zalando (github.com/zalandoresearch/fashion-mnist README).
FASHION_MNIST_MD5 = {
    "train-images-idx3-ubyte.gz": "8d4fb7e6c68d591d4c3dfef9ec88bf0d",
    "train-labels-idx1-ubyte.gz": "25c81989df183df01b3e8a0aad5dffbe",
    "t10k-images-idx3-ubyte.gz": "bef4ecab320f06d8554ea6380940ec79",
    "t10k-labels-idx1-ubyte.gz": "bb300cfdad3c16e7a12a480ee83cd310",
}

#: SHA-256 of the official ``.gz`` files (sizes 26421880, 29515, 4422102, 5148 bytes);
#: see the module docstring for how they were verified against the official MD5s.
FASHION_MNIST_SHA256 = {
    "train-images-idx3-ubyte.gz": "3aede38d61863908ad78613f6a32ed271626dd12800ba2636569512369268a84",
    "train-labels-idx1-ubyte.gz": "a04f17134ac03560a47e3764e11b92fc97de4d1bfaf8ba1a3aa29af54cc90845",
    "t10k-images-idx3-ubyte.gz": "346e55b948d973a97e58d2351dde16a484bd415d4595297633bb08f03db6a073",
    "t10k-labels-idx1-ubyte.gz": "67da17c76eaffca5446c3361aaab5c3cd6d1c2608764d35dfb1850b086bf8dd5",
}

#: SHA-256 of the decompressed IDX files (identical for official and Debian copies).
FASHION_MNIST_RAW_SHA256 = {
    "train-images-idx3-ubyte": "c59f468a2f672dc815687fe0f83887768d799fd8a3f3276145d20f83aa44d888",
    "train-labels-idx1-ubyte": "bad3541b69d912435c50bb6ba87bec294ff4f6a2e1246121d8633921760443d9",
    "t10k-images-idx3-ubyte": "5b4141f0afbad91edebe8549f8fcffe087ea10ca49f1dbef5c9a5cd8815ce37b",
    "t10k-labels-idx1-ubyte": "0402a96d92fd2663957122ceb108a494c5af83dab82d92729df917d7dec38c34",
}

_CHUNK = 1 << 20


def sha256_file(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _fetch_verified(url: str, dest: Path, expected: str, timeout: float) -> None:
    """Stream ``url`` into a temp file next to ``dest``; move it into place if it verifies."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        try:
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as resp:
                for chunk in iter(lambda: resp.read(_CHUNK), b""):
                    digest.update(chunk)
                    out.write(chunk)
        except urllib.error.HTTPError as exc:
            raise DataNotFoundError(
                f"download of {url} failed: HTTP {exc.code} {exc.reason}; nothing was written"
            ) from exc
        except (urllib.error.URLError, OSError) as exc:  # DNS, refused, timeout, disk full
            reason = getattr(exc, "reason", exc)
            raise DataNotFoundError(
                f"download of {url} failed ({reason}); nothing was written. Check the network, "
                "or install the Debian package dataset-fashion-mnist"
            ) from exc
        got = digest.hexdigest()
        if got != expected.lower():
            raise CorruptDataError(
                f"download of {url}: SHA-256 {got} does not match the expected {expected}; the file was discarded"
            )
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)  # no-op after a successful os.replace


def download_fashion_mnist(
    dest_dir: str | os.PathLike,
    *,
    base_url: str = OFFICIAL_URL,
    sha256: Mapping[str, str] | None = None,
    timeout: float = 60.0,
    force: bool = False,
) -> Path:
    """Download the four Fashion-MNIST ``.gz`` files into ``dest_dir`` and verify them.

    Parameters
    ----------
    dest_dir : str or path-like
        Created (with parents) when missing.
    base_url : str, default :data:`OFFICIAL_URL`
        Each file is fetched from ``base_url + name`` (a trailing ``/`` is added if missing).
    sha256 : mapping of str to str, optional
        Expected hex SHA-256 per file name; defaults to :data:`FASHION_MNIST_SHA256`.
        Must cover every name in :data:`FASHION_MNIST_FILES` (tests pass their own).
    timeout : float, default 60.0
        Seconds of socket inactivity before a request fails.
    force : bool, default False
        Download even files already present with the right checksum.

    Returns
    -------
    pathlib.Path
        ``dest_dir``, which now holds the four verified files.

    Raises
    ------
    DataNotFoundError
        A request failed (HTTP error such as 404, no network, timeout).
    CorruptDataError
        A downloaded file's SHA-256 is wrong. The temporary file is removed.
    InvalidInputError
        ``sha256`` lacks one of the file names, or ``timeout`` is not positive.

    Notes
    -----
    Files are independent: a failure on the third file keeps the two verified ones and
    leaves no partial file. Existing files with the right checksum are not fetched again.

    Examples
    --------
    >>> download_fashion_mnist("data/fashion-mnist")  # doctest: +SKIP
    PosixPath('data/fashion-mnist')
    """
    expected = dict(FASHION_MNIST_SHA256 if sha256 is None else sha256)
    missing = [name for name in FASHION_MNIST_FILES if name not in expected]
    if missing:
        raise InvalidInputError(f"sha256 has no checksum for {missing}")
    if not timeout > 0:
        raise InvalidInputError(f"timeout must be > 0 seconds, got {timeout!r}")
    dest = Path(dest_dir)
    dest.mkdir(parents=True, exist_ok=True)
    base = base_url if base_url.endswith("/") else base_url + "/"
    for name in FASHION_MNIST_FILES:
        target = dest / name
        if not force and target.is_file() and sha256_file(target) == expected[name].lower():
            continue
        _fetch_verified(base + name, target, expected[name], timeout)
    return dest
