"""The packaging's wiring, checked without building: the root pyproject.toml
(`pip install .`), the top-level CMake's wheel mode (configured only, in a few
seconds), the console-script shim, py.typed. The wheel builds themselves are full
builds of the project and are not run here (scripts/build-wheel.sh runs one)."""

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import triton_c

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ["tritonc", "triton-interp", "triton-run", "triton-conformance", "triton-fuzz"]

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = pytest.importorskip("tomli")


def _toml(path):
    with open(path, "rb") as f:
        return tomllib.load(f)


def _cli_module():
    """python/triton_c/_cli.py from the sources, loaded on its own."""
    spec = importlib.util.spec_from_file_location("_tc_cli", ROOT / "python/triton_c/_cli.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _wheel_defines():
    return _toml(ROOT / "pyproject.toml")["tool"]["scikit-build"]["cmake"]["define"]


def test_root_pyproject_builds_the_whole_project():
    root = _toml(ROOT / "pyproject.toml")
    assert root["build-system"]["build-backend"] == "scikit_build_core.build"
    sk = root["tool"]["scikit-build"]
    assert sk["cmake"]["source-dir"] == "."
    assert sk["wheel"]["packages"] == ["python/triton_c"]
    assert sk["cmake"]["build-type"] == "Release"
    defines = sk["cmake"]["define"]
    assert defines["TC_PYTHON_WHEEL"] == "ON" and defines["TC_BUILD_TESTS"] == "OFF"
    # The build folder is git-ignored (/build*/ in .gitignore).
    assert re.match(r"build[^/]*/", sk["build-dir"]), sk["build-dir"]
    if shutil.which("git") and (ROOT / ".git").exists():
        r = subprocess.run(["git", "-C", str(ROOT), "check-ignore", "-q",
                            sk["build-dir"].replace("{wheel_tag}", "x") + "/CMakeCache.txt"])
        assert r.returncode == 0, "the wheel's build-dir is not git-ignored"


def test_the_two_pyprojects_describe_one_package():
    root = _toml(ROOT / "pyproject.toml")["project"]
    sub = _toml(ROOT / "python/pyproject.toml")["project"]
    assert root.pop("scripts")
    assert "scripts" not in sub  # the ./python wheel has no tools
    assert root == sub
    assert (_toml(ROOT / "pyproject.toml")["build-system"]["requires"]
            == _toml(ROOT / "python/pyproject.toml")["build-system"]["requires"])


def test_console_scripts_are_the_tools():
    scripts = _toml(ROOT / "pyproject.toml")["project"]["scripts"]
    cli = _cli_module()
    assert sorted(scripts) == sorted(TOOLS) == sorted(cli.TOOLS)
    for name, target in scripts.items():
        module, func = target.split(":")
        assert module == "triton_c._cli"
        assert func == name.replace("-", "_") and callable(getattr(cli, func))
    # The tools that tools/CMakeLists.txt defines, and those the wheel installs.
    defined = re.findall(r"^tc_tool\(([\w-]+)", (ROOT / "tools/CMakeLists.txt").read_text(), re.M)
    assert sorted(defined) == sorted(TOOLS)
    wheel = re.search(r"set\(TC_WHEEL_TOOLS ([^)]*)\)", (ROOT / "CMakeLists.txt").read_text())
    assert wheel and sorted(wheel.group(1).split()) == sorted(TOOLS)


def test_py_typed_in_the_sources_and_in_the_installed_package():
    assert (ROOT / "python/triton_c/py.typed").is_file()
    # run_tests.sh installed ./python's wheel just before: it carries the marker.
    assert (Path(triton_c.__file__).parent / "py.typed").is_file()


def _shim(tmp_path, with_tool):
    pkg = tmp_path / "pkg"
    (pkg / "bin").mkdir(parents=True)
    shutil.copy(ROOT / "python/triton_c/_cli.py", pkg / "_cli.py")
    if with_tool:
        tool = pkg / "bin" / "triton-interp"
        tool.write_text('#!/bin/sh\nprintf "%s|" "$0" "$@"\nexit 7\n')
        tool.chmod(0o755)
    return subprocess.run(
        [sys.executable, "-c",
         "import sys; sys.path.insert(0, sys.argv.pop(1)); import _cli; sys.exit(_cli.triton_interp())",
         str(pkg), "a b", "--x=1", ""],
        capture_output=True, text=True)


def test_console_script_runs_the_tool_with_the_same_arguments(tmp_path):
    r = _shim(tmp_path, with_tool=True)
    assert r.returncode == 7, r.stderr
    # ($0 of a script is its path, whatever argv[0] the shim gave it.)
    assert r.stdout.endswith("pkg/bin/triton-interp|a b|--x=1||"), r.stdout


def test_console_script_without_the_tool_says_so(tmp_path):
    r = _shim(tmp_path, with_tool=False)
    assert r.returncode == 127
    assert "no command-line tools" in r.stderr and "pip install ." in r.stderr


def test_root_wheel_metadata(tmp_path):
    """What `pip install .` reads before it builds: scikit-build-core's metadata
    hook on the root pyproject.toml (no CMake run)."""
    pytest.importorskip("scikit_build_core")
    out = tmp_path / "meta"
    out.mkdir()
    r = subprocess.run(
        [sys.executable, "-c",
         "import sys, scikit_build_core.build as b; print(b.prepare_metadata_for_build_wheel(sys.argv[1]))",
         str(out)], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    dist_info = out / r.stdout.strip().splitlines()[-1]
    meta = (dist_info / "METADATA").read_text()
    assert "Name: triton_c" in meta and "Requires-Dist: numpy" in meta
    entry_points = (dist_info / "entry_points.txt").read_text()
    for tool in TOOLS:
        assert f"{tool} = triton_c._cli:{tool.replace('-', '_')}" in entry_points


def test_wheel_mode_configures_only_the_wheels_contents(tmp_path):
    """The top-level CMake with the root pyproject's defines, configured (not
    built): it builds libtriton, the tools and the extension, no tests, examples
    or benchmarks, and installs them in the wheel's layout."""
    cmake, ninja = shutil.which("cmake"), shutil.which("ninja")
    if not cmake or not ninja:
        pytest.skip("cmake and ninja are needed")
    pytest.importorskip("nanobind")
    build = tmp_path / "build"
    args = [cmake, "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
            "-DCMAKE_BUILD_TYPE=Release", f"-DPython_EXECUTABLE={sys.executable}"]
    args += [f"-D{k}={v}" for k, v in _wheel_defines().items()]
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0 and 'provided by "LLVM"' in r.stderr:
        pytest.skip("LLVM 19 is not installed (a machine that runs wheels, not one that builds them)")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    targets = subprocess.run([ninja, "-C", str(build), "-t", "targets", "all"],
                             capture_output=True, text=True, check=True).stdout
    linked = sorted(set(re.findall(r"^(\S+): CXX_(?:EXECUTABLE|SHARED_LIBRARY|MODULE_LIBRARY)_LINKER",
                                   targets, re.M)))
    binaries = sorted(p for p in linked if not p.startswith("python/"))
    assert binaries == sorted(["lib/libtriton_c.so"] + [f"bin/{t}" for t in TOOLS]), linked
    assert any(re.match(r"python/_core\..*\.so$", p) for p in linked), linked
    installs = "".join(p.read_text() for p in build.rglob("cmake_install.cmake"))
    assert "triton_c/libtriton_c.so" in installs
    for t in TOOLS:
        assert f"triton_c/bin/{t}" in installs
    assert re.search(r"triton_c/_core\.[^\"]*\.so", installs)
