"""An append-only journal of finished sweep parts, so an interrupted run loses nothing.

The file is JSON lines: a header ``{"journal": 1, "settings": {...}}`` and then one record
per finished part ``{"key": ..., ...}``, each written, flushed and fsynced as it completes.
A run killed mid-write leaves at most one torn last line, which :class:`Journal` ignores.
Resuming with different settings is refused (the parts would not belong together).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ..errors import CorruptDataError, InvalidInputError

__all__ = ["Journal"]


class Journal:
    """Append-only record of finished parts, keyed by string.

    Parameters
    ----------
    path : path-like
    settings : dict
        JSON-serialisable description of the run; must match to resume.
    resume : bool
        Keep the finished parts of an existing journal. Without it an existing journal is
        moved aside to ``<name>.old`` (never deleted) and a new one is started.
    """

    def __init__(self, path: str | os.PathLike, settings: dict, *, resume: bool = False):
        self.path = Path(path)
        self.settings = json.loads(json.dumps(settings))
        self.records: dict[str, dict] = {}
        if resume and self.path.exists():
            self._load()
        else:
            if self.path.exists():
                os.replace(self.path, self.path.with_name(self.path.name + ".old"))
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._write_line({"journal": 1, "settings": self.settings})

    def _load(self) -> None:
        lines = self.path.read_text(encoding="utf-8").splitlines()
        try:
            header = json.loads(lines[0])
        except (IndexError, json.JSONDecodeError):
            raise CorruptDataError(f"{self.path}: no readable journal header") from None
        if header.get("settings") != self.settings:
            changed = sorted(
                k for k in set(header.get("settings", {})) | set(self.settings)
                if header.get("settings", {}).get(k) != self.settings.get(k)
            )
            raise InvalidInputError(
                f"cannot resume {self.path}: it was written with other settings "
                f"(differing: {', '.join(changed)}); use the same options or another --out"
            )
        valid = [lines[0]]
        for n, line in enumerate(lines[1:], start=2):
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                if n == len(lines):
                    break  # torn last line of a killed run: that part is simply redone
                raise CorruptDataError(f"{self.path}: line {n} is not valid JSON") from None
            self.records[rec["key"]] = rec
            valid.append(line)
        if len(valid) < len(lines) or not self.path.read_bytes().endswith(b"\n"):
            # drop the torn tail so appends start on a fresh line
            self.path.write_text("\n".join(valid) + "\n", encoding="utf-8")

    def _write_line(self, obj: dict) -> None:
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(obj) + "\n")
            fh.flush()
            os.fsync(fh.fileno())

    def get(self, key: str) -> dict | None:
        """The finished record for ``key``, or ``None``."""
        return self.records.get(key)

    def append(self, key: str, record: dict[str, Any]) -> dict:
        """Write a finished part durably and remember it."""
        rec = {"key": key, **record}
        self._write_line(rec)
        self.records[key] = json.loads(json.dumps(rec))
        return self.records[key]
