"""The Python package's hostile-input barrage (issue 31's audit, kept as a test).

Seeded attempts through ``triton_c`` on the interpreter, each in a fresh
subprocess (``barrage_attempt.py SEED INDEX``) under a wall-clock timeout and an
address-space limit (RLIMIT_AS). Every attempt must end in a clean Python
exception naming the bad parameter, or in a correct result; never a signal, a
hang, a memory blow-up, a non-Python error escaping, or a write to memory the
kernel did not store to (read-only memory included); after an exception every
array is exactly as it was. ``barrage_attempt.py`` states the checks.

Bounded for CI: ``TRITON_C_BARRAGE_N`` attempts (default 60) from seed
``TRITON_C_BARRAGE_SEED`` (default 31), ``TRITON_C_BARRAGE_JOBS`` at a time
(default 2), ``TRITON_C_BARRAGE_TIMEOUT`` seconds each (default 20). A failure
prints the seed, the attempt number, the exact code and how to rerun it:

    python python/tests/barrage_attempt.py SEED INDEX           # run one attempt
    python python/tests/barrage_attempt.py SEED INDEX --print   # its code

A campaign outside pytest: ``python python/tests/test_barrage.py --n 2000 --seed 7
--jobs 4`` prints a summary per category and every failure.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ATTEMPT = os.path.join(HERE, "barrage_attempt.py")

N = int(os.environ.get("TRITON_C_BARRAGE_N", "60"))
SEED = int(os.environ.get("TRITON_C_BARRAGE_SEED", "31"))
JOBS = int(os.environ.get("TRITON_C_BARRAGE_JOBS", "2"))
TIMEOUT = float(os.environ.get("TRITON_C_BARRAGE_TIMEOUT", "20"))
AS_LIMIT = int(os.environ.get("TRITON_C_BARRAGE_AS", str(4 << 30)))
RSS_LIMIT_MIB = int(os.environ.get("TRITON_C_BARRAGE_RSS_MIB", "2048"))


def run_one(seed: int, index: int, timeout: float = TIMEOUT) -> dict:
    """Runs one attempt in a fresh process; its outcome, with the parent's
    verdicts (signal, hang, memory, no result) among the violations."""
    env = dict(os.environ, TRITON_C_BARRAGE_AS=str(AS_LIMIT), PYTHONFAULTHANDLER="1",
               OMP_NUM_THREADS="1")
    env.pop("TRITON_C_BACKEND", None)
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, ATTEMPT, str(seed), str(index)], cwd=HERE, env=env,
                         stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
        hung = False
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        hung = True
    elapsed = time.perf_counter() - t0
    text = out.decode("utf-8", "replace")
    result = None
    for line in text.splitlines():
        if line.startswith("BARRAGE-RESULT "):
            result = json.loads(line[len("BARRAGE-RESULT "):])
    if result is None:
        result = {"seed": seed, "index": index, "outcome": "none", "violations": [],
                  "category": "?"}
    v = result.setdefault("violations", [])
    result["seconds"] = round(elapsed, 2)
    if hung:
        v.append(f"hang: no result within {timeout:g} s (killed)")
        result["outcome"] = "hang"
    elif p.returncode < 0:
        v.append(f"crash: killed by signal {signal.Signals(-p.returncode).name}")
        result["outcome"] = "crash"
    elif result["outcome"] == "none":
        v.append(f"no result line (exit code {p.returncode})")
    if result.get("maxrss_mib", 0) > RSS_LIMIT_MIB:
        v.append(f"memory: peak RSS {result['maxrss_mib']} MiB (> {RSS_LIMIT_MIB} MiB)")
    if v:
        result["stderr"] = err.decode("utf-8", "replace")[-4000:]
        if "code" not in result:
            result["code"] = _code(seed, index)
    return result


def _code(seed: int, index: int) -> str:
    try:
        return subprocess.run([sys.executable, ATTEMPT, str(seed), str(index), "--print"],
                              cwd=HERE, capture_output=True, text=True, timeout=60).stdout
    except Exception as e:  # noqa: BLE001
        return f"<could not print the attempt: {e}>"


def describe(r: dict) -> str:
    lines = [f"barrage seed {r['seed']} attempt {r['index']} ({r.get('category')}): "
             f"outcome {r.get('outcome')}"
             + (f" {r.get('exc')}: {r.get('message', '')[:400]}" if r.get("exc") else "")]
    for x in r["violations"]:
        lines.append(f"  VIOLATION: {x}")
    lines.append(f"  rerun: python python/tests/barrage_attempt.py {r['seed']} {r['index']}")
    lines.append("  the exact call (after `from barrage_attempt import *; import numpy as np, "
                 "triton_c`):")
    lines += ["    " + ln for ln in (r.get("code") or "").splitlines()]
    if r.get("stderr"):
        lines.append("  stderr (tail):")
        lines += ["    " + ln for ln in r["stderr"].splitlines()[-25:]]
    if r.get("traceback"):
        lines.append("  traceback (tail):")
        lines += ["    " + ln for ln in r["traceback"].splitlines()[-12:]]
    return "\n".join(lines)


def run_many(seed: int, n: int, jobs: int, start: int = 0) -> list[dict]:
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        return list(ex.map(lambda i: run_one(seed, i), range(start, start + n)))


# -- pytest ----------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def barrage() -> dict:
    return {r["index"]: r for r in run_many(SEED, N, JOBS)}


@pytest.mark.parametrize("index", range(N))
def test_barrage_attempt(barrage, index):
    r = barrage[index]
    if r["violations"]:
        pytest.fail(describe(r), pytrace=False)


def test_attempts_are_reproducible():
    """The same seed and index give the same code (what a failure report relies on)."""
    assert _code(SEED, 3) == _code(SEED, 3)
    assert _code(SEED, 3) != _code(SEED + 1, 3)


# -- a campaign ------------------------------------------------------------------------------

def main(argv: list[str]) -> int:
    import argparse
    import collections

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--n", type=int, default=N)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=JOBS)
    ap.add_argument("--jsonl", help="write every outcome here, one JSON line each")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    results = run_many(a.seed, a.n, a.jobs, a.start)
    if a.jsonl:
        with open(a.jsonl, "w") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")
    per = collections.Counter()
    bad = [r for r in results if r["violations"]]
    for r in results:
        per[(r.get("category", "?").split(":")[0],
             "FAIL" if r["violations"] else r.get("exc") or r.get("outcome"))] += 1
    for r in bad:
        print(describe(r), end="\n\n")
    for (cat, what), c in sorted(per.items()):
        print(f"{cat:10} {what:24} {c}")
    print(f"{len(results)} attempts, {len(bad)} failed, {time.perf_counter() - t0:.1f} s "
          f"(seed {a.seed}, attempts {a.start}..{a.start + a.n - 1})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
