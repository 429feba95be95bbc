"""An append-only journal of finished sweep parts, so an interrupted run loses nothing.

The file is JSON lines (format 2):

* a header ``{"journal": 2, "settings": {...}, "identity": {...}, "ignore": [...],
  "checksum": "..."}`` — ``settings`` describe the run, ``identity`` the data it ran on
  (for instance ``{"source", "shapes", "sha256"}``), ``ignore`` the settings that do not
  change results (tile budget, device, ...);
* then one record per finished part ``{"key": ..., ..., "checksum": "..."}``, each written,
  flushed and fsynced as it completes.

Every line carries ``checksum``: the first 16 hex digits of the SHA-256 of the line's
canonical JSON without that field (:func:`line_checksum`), so an edited number is detected.

Resuming (``resume=True``) refuses, with the differing keys and both values, a journal
written for other data (any difference in ``identity``) or with other settings (any
difference outside the ``ignore`` keys). On load, a line that is not JSON, has a bad
checksum, lacks ``key`` or is not a record raises :class:`~gpuknn.errors.CorruptDataError`
naming the file and the line; only a torn *last* line (not JSON: a run killed mid-write) is
dropped, and that part is simply redone. Journals of format 1 (no checksums) are refused.

Without ``resume`` an existing journal is never overwritten: it is moved to the first free
name among ``<name>.1``, ``<name>.2``, ... and a new one is started.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..errors import CorruptDataError, InvalidInputError, RunDirError

__all__ = ["Journal", "line_checksum", "FORMAT"]

#: Journal format written by this version.
FORMAT = 2
_CHECKSUM = "checksum"


def line_checksum(obj: dict) -> str:
    """First 16 hex digits of the SHA-256 of ``obj``'s canonical JSON (sorted keys, no spaces),
    ``"checksum"`` left out."""
    body = {k: v for k, v in obj.items() if k != _CHECKSUM}
    text = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()[:16]


def _short(value: Any, limit: int = 240) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _differences(old: dict, new: dict, skip: Iterable[str] = ()) -> list[str]:
    skip = set(skip)
    keys = sorted((set(old) | set(new)) - skip)
    missing = object()
    out = []
    for k in keys:
        a, b = old.get(k, missing), new.get(k, missing)
        if a != b:
            a_txt = "(absent)" if a is missing else _short(a)
            b_txt = "(absent)" if b is missing else _short(b)
            out.append(f"{k} (journal: {a_txt}, now: {b_txt})")
    return out


class Journal:
    """Append-only record of finished parts, keyed by string.

    Parameters
    ----------
    path : path-like
    settings : dict
        JSON-serialisable description of the run; must match to resume (but for ``ignore``).
    identity : dict, optional
        JSON-serialisable identity of the data (source, shapes, hash); must match exactly to
        resume.
    resume : bool
        Keep the finished parts of an existing journal. Without it an existing journal is
        moved aside to the first free ``<name>.N`` (never deleted nor overwritten) and a new
        one is started; :attr:`moved_to` tells where.
    ignore : iterable of str
        Keys of ``settings`` that do not change results (working memory, device, ...): they
        are recorded but not compared on resume.

    Raises
    ------
    InvalidInputError
        ``resume`` with a journal of other data or other result-changing settings.
    CorruptDataError
        A line of the journal cannot be trusted (not JSON before the last line, bad checksum,
        no ``key``, not a record) or the journal was written by an older gpuknn.
    RunDirError
        The journal cannot be written (disk full, read-only, permission).
    """

    def __init__(
        self,
        path: str | os.PathLike,
        settings: dict,
        *,
        identity: dict | None = None,
        resume: bool = False,
        ignore: Iterable[str] = (),
    ):
        self.path = Path(path)
        self.settings = json.loads(json.dumps(settings))
        self.identity = json.loads(json.dumps(identity if identity is not None else {}))
        self.ignore = sorted(set(ignore))
        self.records: dict[str, dict] = {}
        self.moved_to: Path | None = None
        if resume and self.path.exists() and self._load():
            return
        if not resume and self.path.exists():
            self.moved_to = self._move_aside()
        header = {"journal": FORMAT, "settings": self.settings, "identity": self.identity, "ignore": self.ignore}
        self._rewrite([self._line(header)])

    # -- reading ---------------------------------------------------------------------------

    def _fail(self, n: int, what: str) -> CorruptDataError:
        return CorruptDataError(
            f"{self.path}: line {n} {what}; the journal cannot be trusted — remove or repair "
            f"that line, or start afresh without --resume (or use another --out)"
        )

    def _load(self) -> bool:
        """Read an existing journal; False when it holds nothing (empty, or a torn header)."""
        try:
            raw = self.path.read_bytes()
        except OSError as exc:
            raise RunDirError(self.path, exc) from exc
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            raise CorruptDataError(f"{self.path}: not a UTF-8 text file") from None
        lines = text.splitlines()
        parsed: list[Any] = []
        for n, line in enumerate(lines, start=1):
            try:
                parsed.append(json.loads(line))
            except json.JSONDecodeError:
                if n == len(lines):
                    break  # torn last line of a killed run: that part is simply redone
                raise self._fail(n, "is not valid JSON") from None
        if not parsed:
            return False  # nothing finished: start afresh
        header = parsed[0]
        if not isinstance(header, dict) or "journal" not in header:
            raise self._fail(1, "is not a journal header")
        if header.get("journal") != FORMAT or _CHECKSUM not in header:
            raise CorruptDataError(
                f"{self.path} was written by an older version of gpuknn (journal format "
                f"{header.get('journal')!r}, without checksums) and cannot be resumed; start "
                f"afresh without --resume (the old journal is kept as {self.path.name}.N) "
                f"or use another --out"
            )
        if header[_CHECKSUM] != line_checksum(header):
            raise self._fail(1, "(the header) has a bad checksum: it was edited or damaged")
        if not isinstance(header.get("settings"), dict) or not isinstance(header.get("identity"), dict):
            raise self._fail(1, "(the header) lacks settings or identity")
        self._check_match(header)
        for n, rec in enumerate(parsed[1:], start=2):
            if not isinstance(rec, dict) or "journal" in rec:
                raise self._fail(n, "is not a journal record")
            if not isinstance(rec.get("key"), str):
                raise self._fail(n, 'has no string "key"')
            if rec.get(_CHECKSUM) != line_checksum(rec):
                what = "has no checksum" if _CHECKSUM not in rec else "has a bad checksum"
                raise self._fail(n, f"({rec['key']}) {what}: it was edited or damaged")
            self.records[rec["key"]] = {k: v for k, v in rec.items() if k != _CHECKSUM}
        if len(parsed) < len(lines) or not raw.endswith(b"\n"):
            # drop the torn tail (or end the last line) so appends start on a fresh line
            self._rewrite(lines[: len(parsed)])
        return True

    def _check_match(self, header: dict) -> None:
        skip = set(self.ignore) | set(header.get("ignore") or ())
        data = _differences(header["identity"], self.identity)
        other = _differences(header["settings"], self.settings, skip)
        if not data and not other:
            return
        parts = []
        if data:
            parts.append("it was written for other data (differing: " + "; ".join(data) + ")")
        if other:
            parts.append("it was written with other settings (differing: " + "; ".join(other) + ")")
        raise InvalidInputError(
            f"cannot resume {self.path}: "
            + " and ".join(parts)
            + "; use the same data and options, drop --resume to start afresh, or use another --out"
        )

    # -- writing ---------------------------------------------------------------------------

    @staticmethod
    def _line(obj: dict) -> str:
        obj = {k: v for k, v in obj.items() if k != _CHECKSUM}
        obj[_CHECKSUM] = line_checksum(obj)
        return json.dumps(obj)

    def _move_aside(self) -> Path:
        """Move the existing journal to the first free ``<name>.N`` without overwriting."""
        n = 1
        while True:
            target = self.path.with_name(f"{self.path.name}.{n}")
            if not os.path.lexists(target):
                try:
                    os.link(self.path, target)  # fails if target appeared meanwhile
                except FileExistsError:
                    pass
                except OSError:
                    try:  # file system without hard links: plain rename of a free name
                        os.rename(self.path, target)
                    except OSError as exc:
                        raise RunDirError(self.path, exc) from exc
                    return target
                else:
                    try:
                        os.unlink(self.path)
                    except OSError as exc:
                        raise RunDirError(self.path, exc) from exc
                    return target
            n += 1

    def _rewrite(self, lines: list[str]) -> None:
        """Write ``lines`` as the whole journal: temporary file, fsync, atomic replace."""
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as fh:
                fh.write("".join(line + "\n" for line in lines))
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise RunDirError(self.path, exc) from exc

    def _write_line(self, obj: dict) -> None:
        try:
            with open(self.path, "a", encoding="utf-8") as fh:
                fh.write(self._line(obj) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as exc:
            raise RunDirError(self.path, exc) from exc

    def get(self, key: str) -> dict | None:
        """The finished record for ``key``, or ``None``."""
        return self.records.get(key)

    def append(self, key: str, record: dict[str, Any]) -> dict:
        """Write a finished part durably and remember it."""
        rec = json.loads(json.dumps({"key": key, **record}))
        rec.pop(_CHECKSUM, None)
        self._write_line(rec)
        self.records[key] = rec
        return self.records[key]
