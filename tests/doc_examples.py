"""The examples of README.md and docs/*.md, read out of their Markdown and run for real.

What counts as an example, and how it is checked:

- a ```console block: each line starting with ``$ `` is a shell command (a line ending in ``\\``
  continues it); the lines after it, up to the next command, are what it prints (standard
  output and standard error together; a command shown without any is only run). A command must
  exit with 0 unless what it prints shows an ``Error:``, ``Usage:`` or ``Interrupted`` line.
- a ```python block: run as a script; when a ```text block follows it directly, that is what the
  script prints.
- a ```python or ```yaml block whose first line is ``# NAME.py`` or ``# NAME.yaml``: saved as that
  file in the page's folder (``# NAME.py, continued`` appends), for the page's later examples.
- a ```yaml block that is a config (it has a data, model, optimizer, schedule, training or loss
  section): validated as one.

A page's examples run in order, in one fresh folder that holds links to the project's
``configs/``, ``data/`` and ``tests/``, so a later example may use what an earlier one wrote (a run folder).

Printed output is compared after one normalisation, the same everywhere: trailing spaces are
dropped; a duration (``0.86s``, ``12 s``) becomes ``<s>``; a timestamp in a run folder's name
(``-20261121-170102``) becomes ``-<stamp>``; the temporary folder's path becomes ``.``. Numbers
are then compared with a relative tolerance of 1e-3 (the last shown digit of a float32 run may
differ between CPUs), and a gradient check's rounding errors (1e-8 or less, written ``1.5e-11``)
match any other, as does the index where such an error is largest; every other character must
match. A line ``...`` in the expected output
stands for any number of lines.

An HTML comment on the line before a block changes how it is run: ``<!-- example: slow -->`` (one
that trains on a real dataset or runs many trials: run only by ``pytest -m slow``, which runs a
page's slow examples and the files it saves, so a slow example uses only those and the slow
examples before it), ``<!-- example: needs MNIST -->`` (skipped where the MNIST files are not
found), ``<!-- example: trimmed -->`` (the lines shown appear in the output in this order, others
between them left out), ``<!-- example: not run, REASON -->`` (shown, never run: kept for the few
that download). Marks combine with commas: ``<!-- example: slow, needs MNIST -->``.
"""

import math
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FENCE = re.compile(r"^```(\w*)\s*$")
MARKER = re.compile(r"^<!-- example: (.+?) -->$")
CONFIG_SECTIONS = {"data", "model", "optimizer", "schedule", "training", "loss"}
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
RELATIVE = 1e-3
ERROR_LINE = re.compile(r"^(Error:|Usage:|Interrupted)", re.MULTILINE)


@dataclass
class Example:
    page: Path
    line: int  # of the opening fence, from 1
    kind: str  # console, python, yaml
    body: list[str]
    marker: str | None = None
    output: list[str] | None = None  # python: the ```text block that follows
    output_line: int | None = None

    @property
    def file(self) -> str | None:
        """``my_layers.py`` for a block whose first line is ``# my_layers.py`` (or ``# my_layers.py,
        continued``): the page saves it as that file, for its later examples."""
        found = re.match(r"# ([\w.-]+\.(?:py|yaml))(, continued)?$", self.body[0]) if self.body else None
        return found.group(1) if found else None

    @property
    def marks(self) -> set[str]:
        """The marker's parts: ``slow, needs MNIST`` -> {"slow", "needs MNIST"}."""
        return {part.strip() for part in (self.marker or "").split(",")} - {""}

    @property
    def continued(self) -> bool:
        return bool(self.body) and self.body[0].endswith(", continued")

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


@dataclass
class Command:
    text: str
    expected: list[str] = field(default_factory=list)
    line: int = 0


def examples(page: Path) -> list[Example]:
    """The fenced examples of ``page`` in order (console, python, yaml), with their markers."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        fence = FENCE.match(lines[i])
        if not fence:
            i += 1
            continue
        start, kind = i, fence.group(1)
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        body = lines[start + 1:j]
        marker = MARKER.match(lines[start - 1]) if start > 0 else None
        if kind in ("console", "python", "yaml"):
            found.append(Example(page, start + 1, kind, body, marker.group(1) if marker else None))
        elif kind == "text" and found and found[-1].kind == "python" and found[-1].output is None \
                and _blank_between(lines, found[-1], start):
            found[-1].output, found[-1].output_line = body, start + 1
        i = j + 1
    return found


def _blank_between(lines, previous: Example, start: int) -> bool:
    end = previous.line + len(previous.body) + 1  # the closing fence of the python block, from 1
    return all(not line.strip() for line in lines[end:start])


def commands(example: Example) -> list[Command]:
    """The commands of a console block, each with the lines it prints."""
    out, pending = [], None
    for k, line in enumerate(example.body):
        if pending is not None:  # a continued command
            pending.text += "\n" + line
            if not line.endswith("\\"):
                pending = None
            continue
        if line.startswith("$ "):
            out.append(Command(line[2:], [], example.line + 1 + k))
            if line.endswith("\\"):
                pending = out[-1]
        elif out:
            out[-1].expected.append(line)
    return out


def sandbox(folder: Path) -> Path:
    """A folder to run a page's examples in: links to the project's configs/, data/ and tests/."""
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("configs", "data", "tests"):
        link = folder / name
        if not link.exists():
            link.symlink_to(ROOT / name)
    return folder


def environment() -> dict:
    """The commands' environment: this Python's scripts first on PATH, a terminal-less width."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "COLUMNS": "100", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("MLP_MANUAL_UPDATE_DOCS", None)
    return env


def run_command(command: Command, folder: Path, timeout: float = 600) -> tuple[int, list[str]]:
    done = subprocess.run(["bash", "-c", command.text], cwd=folder, env=environment(), capture_output=True,
                          text=True, timeout=timeout)
    text = done.stdout + done.stderr if not done.stdout or done.stdout.endswith("\n") else done.stdout + "\n" + done.stderr
    return done.returncode, text.splitlines()


def run_python(example: Example, folder: Path) -> tuple[int, list[str]]:
    done = subprocess.run([sys.executable, "-c", "\n".join(example.body)], cwd=folder, env=environment(),
                          capture_output=True, text=True, timeout=600)
    return done.returncode, (done.stdout + done.stderr).splitlines()


def normalise(line: str, folder: Path) -> str:
    line = line.rstrip().replace(str(folder) + "/", "").replace(str(folder), ".")
    line = re.sub(r"-\d{8}-\d{6}", "-<stamp>", line)
    return re.sub(r"\b\d+(?:\.\d+)?\s?s\b", "<s>", line)


ROUNDING = re.compile(r"\b\d\.\de-(?:09|[1-9]\d)\b")  # 9.9e-09 and below, as mlp-gradcheck writes errors


def rounding_as_any(line: str) -> str:
    """``line`` with every error of 1e-8 or less (float64 rounding, whose digits depend on the
    CPU's kernels) as one mark, and the index where such an error is largest as another."""
    line = ROUNDING.sub("<rounding>", line)
    return re.sub(r"(<rounding>\s+)\([\d, ]*\)", r"\1<where>", line)


def same_line(expected: str, actual: str) -> bool:
    """The lines agree: the same text around their numbers, the numbers within RELATIVE."""
    expected, actual = rounding_as_any(expected), rounding_as_any(actual)
    if NUMBER.sub("#", expected) != NUMBER.sub("#", actual):
        return False
    for a, b in zip(NUMBER.findall(expected), NUMBER.findall(actual)):
        x, y = float(a), float(b)
        if not math.isclose(x, y, rel_tol=RELATIVE, abs_tol=0.0) and a != b:
            return False
    return True


def matches(expected: list[str], actual: list[str]) -> bool:
    """``actual`` lines fit ``expected`` (normalised), where a ``...`` line stands for any lines."""
    if not expected:
        return True if not actual else False
    if expected[0].strip() == "...":
        rest = expected[1:]
        return any(matches(rest, actual[k:]) for k in range(len(actual) + 1))
    return bool(actual) and same_line(expected[0], actual[0]) and matches(expected[1:], actual[1:])


def in_order(expected: list[str], actual: list[str]) -> bool:
    """For a trimmed example: each shown line (but ``...``) fits a line of ``actual``, in order."""
    k = 0
    for line in expected:
        if line.strip() == "...":
            continue
        while k < len(actual) and not same_line(line, actual[k]):
            k += 1
        if k == len(actual):
            return False
        k += 1
    return True


def difference(expected: list[str], actual: list[str]) -> str:
    return "expected:\n    " + "\n    ".join(expected) + "\ngot:\n    " + "\n    ".join(actual)
