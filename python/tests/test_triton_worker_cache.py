"""The triton backend's worker: its compile cache in GPU mode (triton_worker._install_cache).

Triton compiles for sm_90 without a GPU, so the cache is checked here with
triton.compile for that target: the kernel's files go to the worker's directory in
/dev/shm and are gone after _clear_cache, launcher stubs (.so) go to Triton's own
cache directory, a killed worker's directory is removed by the next worker, and the
compiled kernel is the same as with Triton's own cache.
"""

import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch")
pytest.importorskip("triton", reason="the 'triton' package is not installed "
                    "(scripts/setup.sh installs it)")

HERE = os.path.dirname(os.path.abspath(__file__))

# Runs in a fresh interpreter (the cache manager is process-wide) and prints JSON.
SCRIPT = textwrap.dedent(r"""
    import json, os, sys
    import triton, triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton_c import triton_worker as w

    @triton.jit
    def k(X, Y):
        i = tl.arange(0, 128)
        tl.store(Y + i, tl.load(X + i) * 2.0 + 1.0)

    def ptx():
        c = triton.compile(ASTSource(k, {"X": "*fp32", "Y": "*fp32"}, {}),
                           target=GPUTarget("cuda", 90, 32), options={"num_warps": 4})
        return c.asm["ptx"]

    own = ptx()                       # Triton's own cache
    mem = w._install_cache(triton) if sys.argv[1] in ("install", "full") else None
    out = {"mem": mem}
    if mem and sys.argv[1] == "full":  # writes to /dev/shm fail: Triton's directory instead
        os.rmdir(mem)
        open(mem, "w").close()        # a file where the directory was: every write fails
        shared = triton.knobs.cache.dir
        __import__("shutil").rmtree(shared)  # the first compile's files
        out.update(same_ptx=ptx() == own,
                   new_shared=len([f for _, _, fs in os.walk(shared) for f in fs]))
        os.unlink(mem)
        print(json.dumps(out))
        sys.exit(0)
    if mem:
        from triton.runtime.cache import get_cache_manager
        shared = triton.knobs.cache.dir
        before = set(os.listdir(shared))
        same = ptx()
        files = [f for _, _, fs in os.walk(mem) for f in fs]
        m = get_cache_manager("ab" * 32)
        so = m.put(b"\0", "__triton_launcher" + (__import__("sysconfig").get_config_var("EXT_SUFFIX") or ".so"))
        out.update(same_ptx=same == own, files=sorted(files), so=so,
                   new_shared=sorted(set(os.listdir(shared)) - before))
        w._clear_cache(mem)
        out["after_clear"] = os.listdir(mem)
        __import__("shutil").rmtree(mem)
    print(json.dumps(out))
""")


def run(tmp_path, arg, env=None):
    e = dict(os.environ, TRITON_CACHE_DIR=str(tmp_path / "cache"), TRITON_ALWAYS_COMPILE="1",
             PYTHONPATH=os.path.dirname(HERE) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    e.pop("TRITON_INTERPRET", None)
    e.update(env or {})
    script = tmp_path / "compile_twice.py"  # a file: @triton.jit reads the source
    script.write_text(SCRIPT)
    p = subprocess.run([sys.executable, str(script), arg], env=e, capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0, p.stderr[-3000:]
    import json
    return json.loads(p.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(not os.access("/dev/shm", os.W_OK), reason="no writable /dev/shm")
def test_kernel_files_in_memory_launchers_shared_cleared_after_each_request(tmp_path):
    out = run(tmp_path, "install")
    mem = out["mem"]
    assert mem and mem.startswith("/dev/shm/tc-triton-cache-")
    assert out["same_ptx"]
    # every stage of the compile and its metadata, in the worker's directory
    assert any(f.endswith(".cubin") for f in out["files"])
    assert any(f.endswith(".ptx") for f in out["files"])
    assert any(f.startswith("__grp__") for f in out["files"])
    assert not any(".tmp" in f for f in out["files"])
    # no kernel directory in the shared cache; the launcher went there
    assert out["new_shared"] == [os.path.basename(os.path.dirname(out["so"]))]
    assert out["so"].startswith(str(tmp_path / "cache"))
    assert out["after_clear"] == []


def test_off_with_tc_triton_cache_triton_or_a_cache_manager_of_the_users(tmp_path):
    assert run(tmp_path, "install", {"TC_TRITON_CACHE": "triton"})["mem"] is None
    assert run(tmp_path, "install",
               {"TRITON_CACHE_MANAGER": "triton.runtime.cache:FileCacheManager"})["mem"] is None


@pytest.mark.skipif(not os.access("/dev/shm", os.W_OK), reason="no writable /dev/shm")
def test_a_killed_workers_directory_goes_at_the_next_start(tmp_path):
    # a pid that is not running: a child that has ended
    p = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                       capture_output=True, text=True)
    dead = int(p.stdout)
    stale = "/dev/shm/tc-triton-cache-%d-test%d" % (dead, os.getpid())
    os.makedirs(os.path.join(stale, "KEY"))
    try:
        out = run(tmp_path, "install")
        assert out["mem"]
        assert not os.path.exists(stale)
    finally:
        import shutil
        shutil.rmtree(stale, ignore_errors=True)


@pytest.mark.skipif(not os.access("/dev/shm", os.W_OK), reason="no writable /dev/shm")
def test_a_write_that_fails_in_memory_goes_to_tritons_directory(tmp_path):
    out = run(tmp_path, "full")
    assert out["mem"]
    assert out["same_ptx"]
    assert out["new_shared"] >= 7  # the kernel's files, in Triton's own directory
