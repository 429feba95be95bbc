"""The run directory of a CLI study (``--out DIR``): checked, locked, written atomically.

:class:`RunDirectory` is used as a context manager::

    rundir = RunDirectory(out, resume=args.resume)
    rundir.check()                      # nothing written yet: bad --out fails here
    ...                                 # validate every argument and the data
    with rundir:                        # creates DIR, takes DIR/.lock (one run at a time)
        journal = rundir.open_journal(settings, identity, ignore=("working_memory",))
        ...
        rundir.write_json_atomic("results.json", results)   # before the figures
        failed = rundir.save_figures(figures)                # the rest are still written

Every file-system fault (disk full, read-only, permission, a file where a directory belongs)
becomes a :class:`~gpuknn.errors.RunDirError` carrying the path and ``os.strerror``. Files are
replaced atomically (temporary file in the same directory, fsync, ``os.replace``, fsync of the
directory): a crash leaves the old file or the new one, never half of one.
"""

from __future__ import annotations

import errno
import io
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from glob import escape as glob_escape
from pathlib import Path
from typing import Any

from ..errors import RunDirError
from ..model_selection.journal import Journal

try:  # POSIX; elsewhere runs are not locked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = ["RunDirectory", "RunDirError", "LOCK_NAME", "JOURNAL_NAME"]

LOCK_NAME = ".lock"
JOURNAL_NAME = "journal.jsonl"


class RunDirectory:
    """``--out DIR`` of one run: validation, exclusive lock, journal and atomic writes.

    Parameters
    ----------
    out : path-like
        The directory (created on ``__enter__``, with its parents).
    resume : bool
        Open the journal to resume (else an existing journal is moved aside to
        ``journal.jsonl.N`` when :meth:`open_journal` is called, i.e. when the run starts).
    """

    def __init__(self, out: str | os.PathLike, *, resume: bool = False):
        self.path = Path(out)
        self.resume = bool(resume)
        self._fd: int | None = None

    def __repr__(self) -> str:
        return f"RunDirectory({str(self.path)!r}, resume={self.resume})"

    # -- validation (writes nothing) -------------------------------------------------------

    def check(self) -> None:
        """Raise :class:`RunDirError` if DIR cannot be a run directory; write nothing.

        DIR must be a writable directory, or not exist under a writable directory (the
        nearest existing ancestor must be a directory one may create entries in).
        """
        path = self.path
        if path.exists() or path.is_symlink():
            if not path.is_dir():
                raise RunDirError(
                    path,
                    OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)),
                    f"{path}: exists and is not a directory (--out must be a directory)",
                )
            if not os.access(path, os.W_OK | os.X_OK):
                raise RunDirError(path, OSError(errno.EACCES, os.strerror(errno.EACCES)))
            return
        parent = path.absolute().parent
        while not (parent.exists() or parent.is_symlink()):
            parent = parent.parent
        if not parent.is_dir():
            raise RunDirError(
                parent,
                OSError(errno.ENOTDIR, os.strerror(errno.ENOTDIR)),
                f"{parent}: is not a directory, so {path} cannot be created there",
            )
        if not os.access(parent, os.W_OK | os.X_OK):
            raise RunDirError(
                parent,
                OSError(errno.EACCES, os.strerror(errno.EACCES)),
                f"{parent}: {os.strerror(errno.EACCES)} (cannot create {path})",
            )

    # -- lifetime --------------------------------------------------------------------------

    def __enter__(self) -> RunDirectory:
        self.check()
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise RunDirError(exc.filename or self.path, exc) from exc
        self._lock()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.release()

    def _lock(self) -> None:
        lock = self.path / LOCK_NAME
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise RunDirError(lock, exc) from exc
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                try:
                    pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
                finally:
                    os.close(fd)
                if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise RunDirError(
                        self.path,
                        exc,
                        f"{self.path} is in use by another gpuknn run (pid {pid}); wait for it "
                        f"to finish or use another --out",
                    ) from None
                raise RunDirError(lock, exc) from exc
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
        except OSError:
            pass  # the pid is only for the message; the lock is what counts
        self._fd = fd

    def release(self) -> None:
        """Release the lock (idempotent); the ``.lock`` file itself stays."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        try:
            os.ftruncate(fd, 0)
        except OSError:
            pass
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    @property
    def locked(self) -> bool:
        """Whether this object holds DIR's lock."""
        return self._fd is not None

    def _require_lock(self) -> None:
        if self._fd is None:
            raise RuntimeError(f"{self!r} is used outside its 'with' block")

    # -- contents --------------------------------------------------------------------------

    def open_journal(self, settings: dict, identity: dict | None = None, *, ignore: Iterable[str] = ()) -> Journal:
        """The run's :class:`~gpuknn.model_selection.journal.Journal` (``DIR/journal.jsonl``).

        Resuming refuses other data or other result-changing settings; a fresh start moves
        an existing journal to ``journal.jsonl.N`` (see :attr:`Journal.moved_to`).
        """
        self._require_lock()
        try:
            return Journal(self.path / JOURNAL_NAME, settings, identity=identity, resume=self.resume, ignore=ignore)
        except RunDirError:
            raise
        except OSError as exc:  # pragma: no cover - Journal wraps its own writes
            raise RunDirError(exc.filename or self.path / JOURNAL_NAME, exc) from exc

    def set_aside(self, names: Iterable[str]) -> tuple[Path | None, list[str]]:
        """Move the files ``DIR/name`` of ``names`` that exist into a new ``DIR/old-<time>/``.

        For the outputs a run owns (``results.json``, its figures) that an earlier run left
        and this one will not rewrite: left in place they would pass for this run's (a
        figure of other settings beside the new ``results.json``). Files not in ``names``
        (the user's) are never touched; leftover temporary files of an interrupted atomic
        write of one of ``names`` are removed. Returns ``(folder, moved names)``; the folder
        is None (and not created) when nothing was there.
        """
        self._require_lock()
        names = list(dict.fromkeys(names))
        for name in names:
            for tmp in self.path.glob(f".{glob_escape(name)}.*.tmp"):
                try:
                    tmp.unlink()
                except OSError:
                    pass  # garbage only; not worth failing the run
        present = [n for n in names if (self.path / n).is_file() and not (self.path / n).is_symlink()]
        if not present:
            return None, []
        stamp = time.strftime("%Y%m%d-%H%M%S")
        folder = self.path / f"old-{stamp}"
        n = 1
        while folder.exists() or folder.is_symlink():
            n += 1
            folder = self.path / f"old-{stamp}-{n}"
        try:
            folder.mkdir()
            for name in present:
                os.replace(self.path / name, folder / name)
            _fsync_dir(folder)
            _fsync_dir(self.path)
        except OSError as exc:
            raise RunDirError(exc.filename or folder, exc) from exc
        return folder, present

    def write_bytes_atomic(self, name: str, data: bytes) -> Path:
        """Write ``DIR/name`` atomically (temporary file, fsync, ``os.replace``, fsync DIR)."""
        self._require_lock()
        target = self.path / name
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path, prefix=f".{name}.", suffix=".tmp")
            os.fchmod(fd, 0o666 & ~_umask())  # as open() would create it (mkstemp: 0600)
            with open(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, target)
            tmp = None
            _fsync_dir(self.path)
        except OSError as exc:
            raise RunDirError(target, exc) from exc
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
        return target

    def write_json_atomic(self, name: str, obj: Any) -> Path:
        """``obj`` as indented JSON in ``DIR/name``, atomically."""
        return self.write_bytes_atomic(name, (json.dumps(obj, indent=1) + "\n").encode("utf-8"))

    def save_figures(self, figures: Mapping[str, Any], *, dpi: int = 110) -> dict[str, BaseException]:
        """Write each figure as ``DIR/name`` (PNG), atomically; a failure does not stop the rest.

        ``figures`` maps file names to Matplotlib figures or to functions returning one (so
        that a failure while drawing counts as that figure's failure). Returns
        ``{name: exception}`` of the figures not written (empty: all written).
        """
        failures: dict[str, BaseException] = {}
        for name, fig in figures.items():
            try:
                if callable(fig) and not hasattr(fig, "savefig"):
                    fig = fig()
                buf = io.BytesIO()
                fig.savefig(buf, format="png", dpi=dpi)
                self.write_bytes_atomic(name, buf.getvalue())
            except Exception as exc:  # noqa: BLE001 - reported to the caller, the rest go on
                failures[name] = exc
        return failures


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_dir(path: Path) -> None:
    """fsync a directory so a rename in it is durable (not supported everywhere)."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def describe_failures(failures: Mapping[str, BaseException]) -> str:
    """One line: ``name (reason); name (reason)``."""
    return "; ".join(f"{name} ({exc})" for name, exc in failures.items())


# a function to draw a figure, for :meth:`RunDirectory.save_figures`
FigureFactory = Callable[[], Any]
