"""The command-line tools as console scripts.

The wheel built at the repository root (`pip install .`) carries the tools in
the package's bin/ folder and installs one console script per tool (the root
pyproject.toml's [project.scripts]); each replaces the Python process with the
tool, same arguments, so the exit code, signals and standard streams are the
tool's own. The wheel of ./python carries no tools: there the scripts are not
installed, and calling these functions says so.
"""

from __future__ import annotations

import os
import sys

TOOLS = ("tritonc", "triton-interp", "triton-run", "triton-conformance", "triton-fuzz")


def tool_path(name: str) -> str:
    """Where the tool `name` is installed: the package's bin/ folder."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", name)


def run(name: str, argv: list[str] | None = None) -> int:
    """Executes the tool `name` with `argv` (default: this process's
    arguments); returns (exit code 127) only when the tool is not installed."""
    exe = tool_path(name)
    if not os.access(exe, os.X_OK):
        sys.stderr.write(
            f"{name}: {exe} not found: this triton_c has no command-line tools (the wheel of "
            "./python carries only the Python package; `pip install .` at the repository "
            "root installs both)\n")
        return 127
    args = sys.argv[1:] if argv is None else list(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, [name, *args])
    return 127  # not reached


def tritonc() -> int:
    return run("tritonc")


def triton_interp() -> int:
    return run("triton-interp")


def triton_run() -> int:
    return run("triton-run")


def triton_conformance() -> int:
    return run("triton-conformance")


def triton_fuzz() -> int:
    return run("triton-fuzz")


if __name__ == "__main__":  # python -m triton_c._cli TOOL ARGS...
    if len(sys.argv) < 2 or sys.argv[1] not in TOOLS:
        sys.stderr.write(f"usage: python -m triton_c._cli {{{','.join(TOOLS)}}} [ARGS...]\n")
        sys.exit(3)
    sys.exit(run(sys.argv[1], sys.argv[2:]))
