"""The damaged-file battery (tests/battery/make_battery.py) through the real commands.

Each case runs as a subprocess with a 30 s timeout and a 2 GiB address-space limit and must end
in exactly one line on standard error, ``Error: ...`` naming the damaged file, with exit code 1:
no traceback, no hang, no memory error. Cases marked valid must train. Slow (a few minutes on
two cores), so behind the ``slow`` marker, which .ci/run runs.
"""

import os
import resource
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "battery"))
from make_battery import cases  # noqa: E402

pytestmark = pytest.mark.slow
TIMEOUT, MEMORY = 30, 2 << 30


def limit_memory():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def run(case):
    command = [sys.executable, "-m", f"mlp_manual.cli.{MODULES[case.argv[0]]}", *case.argv[1:]]
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(Path(__file__).parents[1])}
    try:
        proc = subprocess.run(command, cwd=case.folder, capture_output=True, text=True, timeout=TIMEOUT,
                              preexec_fn=limit_memory, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return case, None
    return case, proc


MODULES = {"mlp-train": "train", "mlp-eval": "evaluate", "mlp-plot": "plot", "mlp-gradcheck": "gradcheck",
           "mlp-data": "data", "mlp-predict": "predict", "mlp-export": "export", "mlp-explain": "explain"}


def problem(case, proc) -> str | None:
    """What is wrong with how a command treated its case, or None."""
    if proc is None:
        return f"hung (no exit within {TIMEOUT} s)"
    err = proc.stderr.strip()
    if "Traceback" in proc.stderr or "MemoryError" in proc.stderr or proc.returncode < 0:
        return f"crashed (exit {proc.returncode}): {err[-300:]}"
    if case.names is None:
        return None if proc.returncode == 0 else f"exit {proc.returncode}: {err[-300:]}"
    lines = [line for line in err.splitlines() if line.strip()]
    if proc.returncode != 1 or len(lines) != 1 or not lines[0].startswith("Error: "):
        return f"exit {proc.returncode}, stderr {err[-300:]!r}"
    if case.names not in lines[0]:
        return f"the message does not name {case.names}: {lines[0][:300]}"
    if len(lines[0]) > 1000:
        return f"the message is {len(lines[0])} characters long"
    return None


def test_every_damaged_file_ends_in_one_error_line_naming_it(tmp_path):
    battery = cases(tmp_path)
    assert len(battery) >= 140
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run, battery))
    problems = [f"{case.name}: {why}" for case, proc in results if (why := problem(case, proc))]
    assert not problems, f"{len(problems)} of {len(battery)} cases:\n" + "\n".join(problems)
