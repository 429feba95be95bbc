"""The ``gpuknn`` command: parses arguments, shows progress on stderr, writes files.

Each sub-command lives in its own module exposing ``add_parser(subparsers)`` and
``run(args) -> int``; modules are imported lazily so ``gpuknn --help`` stays fast.
No option may be abbreviated (``allow_abbrev=False`` on every parser: ``--data`` is not
``--data-dir``). Exit codes (:data:`EXIT_CODES`, also in ``gpuknn --help``): 0 success,
1 unexpected internal error (the traceback propagates), 2 bad arguments or data (one line),
3 run-directory or file-system fault (one line naming the path and the cause), 4 results
written but some figure failed, 130 interrupted.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
import threading

from ..errors import CorruptDataError, DataNotFoundError, GpuknnError, InvalidInputError, RunDirError

# sub-command name -> module (relative to this package)
COMMANDS = {
    "sweep": ".sweep",
    "power-study": ".power_study",
    "cluster-study": ".cluster_study",
    "evaluate": ".evaluate",
    "compare": ".compare",
}


#: Exit status -> meaning (documented in ``gpuknn --help`` and docs/usage.md).
EXIT_CODES = {
    0: "success",
    1: "unexpected internal error (a traceback is printed)",
    2: "bad arguments or data (one line on stderr)",
    3: "run-directory or file-system fault: --out unusable or in use, disk full,\n"
    "       read-only, permission (one line naming the path and the cause)",
    4: "results written, but some figure could not be (one line on stderr)",
    130: "interrupted (Ctrl-C)",
}
_EPILOG = "exit codes:\n" + "\n".join(f"  {code:<4} {text}" for code, text in EXIT_CODES.items())

# file-system errors reported as exit code 3 even when they come unwrapped
_FS_ERRNOS = frozenset(
    getattr(errno, name)
    for name in (
        "ENOSPC",
        "EACCES",
        "EPERM",
        "EROFS",
        "ENOTDIR",
        "EISDIR",
        "EEXIST",
        "EDQUOT",
        "EIO",
        "ENAMETOOLONG",
        "ELOOP",
        "EMFILE",
        "ENFILE",
        "EFBIG",
    )
    if hasattr(errno, name)
)


class _Parser(argparse.ArgumentParser):
    """``ArgumentParser`` that never accepts abbreviated options (``--data`` for ``--data-dir``);
    sub-command parsers are of this class too."""

    def __init__(self, *args, allow_abbrev: bool = False, **kwargs):
        super().__init__(*args, allow_abbrev=allow_abbrev, **kwargs)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="gpuknn",
        description="Exact kNN, PCA and model evaluation on CuPy (GPU) or NumPy (CPU).",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for mod in COMMANDS.values():
        try:
            module = importlib.import_module(mod, __name__)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith(__name__):
                continue  # sub-command not built yet
            raise
        module.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except RunDirError as exc:
        _error(args, exc)
        return 3
    except (InvalidInputError, DataNotFoundError, CorruptDataError) as exc:
        _error(args, exc)
        return 2
    except GpuknnError as exc:  # the other deliberate errors (no GPU, ...) are input errors too
        _error(args, exc)
        return 2
    except OSError as exc:
        if exc.errno not in _FS_ERRNOS:
            raise
        where = exc.filename if exc.filename is not None else "(unknown path)"
        print(f"gpuknn {args.command}: error: {where}: {exc.strerror or exc}", file=sys.stderr)
        return 3
    except KeyboardInterrupt:
        print(f"gpuknn {args.command}: interrupted", file=sys.stderr)
        return 130


def _error(args, exc: BaseException) -> None:
    """One line on stderr (a multi-line message keeps its lines, the first one says it all)."""
    print(f"gpuknn {args.command}: error: {exc}", file=sys.stderr)


def console_main() -> None:
    """The ``gpuknn`` command (and ``python -m gpuknn``): exits with :func:`main`'s code.

    An interrupt returns from a run on threads at once, while the folds it was running go on
    in daemon threads (their results dropped; every finished one is in the journal, written
    and synced as it came). Python's finalisation would then unload the BLAS under a thread
    still inside a GEMM, so the process ends at once instead, its output flushed.
    """
    code = main()
    if code == 130 and any(t.name.startswith("gpuknn-task-") and t.is_alive() for t in threading.enumerate()):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


if __name__ == "__main__":  # pragma: no cover
    console_main()
