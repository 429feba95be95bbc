"""The ``gpuknn`` command: parses arguments, shows progress on stderr, writes files.

Each sub-command lives in its own module exposing ``add_parser(subparsers)`` and
``run(args) -> int``; modules are imported lazily so ``gpuknn --help`` stays fast.
Bad options exit with code 2 and a message on stderr; library errors exit with code 2 too
(they are input errors), and anything else propagates.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from ..errors import GpuknnError

# sub-command name -> module (relative to this package)
COMMANDS = {
    "sweep": ".sweep",
    "power-study": ".power_study",
    "cluster-study": ".cluster_study",
    "evaluate": ".evaluate",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="gpuknn",
        description="Exact kNN, PCA and model evaluation on CuPy (GPU) or NumPy (CPU).",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name, mod in COMMANDS.items():
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
    except GpuknnError as exc:
        print(f"gpuknn {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"gpuknn {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
