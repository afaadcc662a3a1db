"""The files of an exercise folder: each exercise's scaffold, cut from its reference answer, and
the progress file that keeps what the student has done.

A reference answer (``exercises/solutions/<name>.py``) marks the part the student writes:

    # >>> write here: self.grads["W"], self.grads["b"], and return dx
    ...the reference lines...
    # <<<

The scaffold keeps the ``>>>`` line as a TODO and puts in place of the reference lines a
``raise NotImplementedError`` that says what to write; the solution is the file without the
markers. The progress file (``.progress.json``) records, per exercise, the SHA-256 of the
scaffold as written (a file that still has it is untouched, and may be written again) and the
last check's verdict.
"""

import hashlib
import json
import re
from importlib import resources
from pathlib import Path

from ..errors import ExerciseError
from ..files import write_text
from .exercise import Exercise

PROGRESS = ".progress.json"
MARKED = re.compile(r"^(?P<indent>[ \t]*)# >>> write here: (?P<what>[^\n]*)\n(?P<body>.*?)^[ \t]*# <<<\n",
                    re.MULTILINE | re.DOTALL)


def reference_source(ex: Exercise) -> str:
    return resources.files(__package__).joinpath("solutions", ex.file).read_text(encoding="utf-8")


def solution(ex: Exercise) -> str:
    """The reference answer, markers removed."""
    return MARKED.sub(lambda m: m["body"], reference_source(ex))


def scaffold(ex: Exercise) -> str:
    """The file the student starts from: the reference with each marked part cut out."""
    def cut(m: re.Match) -> str:
        indent, what = m["indent"], m["what"].strip()
        return (f"{indent}# TODO write here: {what}\n"
                f"{indent}raise NotImplementedError({('not written yet: ' + what)!r})\n")
    return MARKED.sub(cut, reference_source(ex))


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_progress(folder: Path) -> dict:
    """The progress file's contents ({} where there is none); a damaged one is ExerciseError."""
    path = folder / PROGRESS
    if not path.exists():
        return {}
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ExerciseError(f"{path}: cannot read the progress file ({e}); delete it to start the record afresh "
                            "(your exercise files stay)") from None
    if not isinstance(found, dict):
        raise ExerciseError(f"{path}: not a progress file; delete it to start the record afresh")
    return {name: _sound(entry) for name, entry in found.items() if isinstance(entry, dict)}


def _sound(entry: dict) -> dict:
    """An exercise's record, less any field that is not what this module writes (a hand edit):
    it is bookkeeping, and a field dropped is only forgotten."""
    kinds = {"scaffold": str, "checked": str, "verdict": str, "hints": int}
    kept = {k: v for k, v in entry.items() if k in kinds and type(v) is kinds[k]}
    if kept.get("verdict") not in (None, "passed", "failing"):
        del kept["verdict"]
    if kept.get("hints", 0) < 0:
        del kept["hints"]
    return kept


def write_progress(folder: Path, progress: dict) -> None:
    """The progress file, written atomically."""
    write_text(folder / PROGRESS, json.dumps(progress, indent=1, sort_keys=True) + "\n")


def status(folder: Path, ex: Exercise, progress: dict) -> str:
    """"not started", "started" (the scaffold untouched or never checked), "failing" or "passed"."""
    path = folder / ex.file
    entry = progress.get(ex.name, {})
    if not path.exists():
        return "not started"
    if entry.get("verdict") in ("passed", "failing") and entry.get("checked") == _file_digest(path):
        return entry["verdict"]
    if entry.get("verdict") == "passed":
        return "passed, changed since"
    return "failing" if entry.get("verdict") == "failing" else "started"


def _file_digest(path: Path) -> str | None:
    try:
        return digest(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def start(folder: Path, ex: Exercise) -> tuple[Path, bool]:
    """Write ``ex``'s scaffold into ``folder``; (its path, whether it was written). A file the
    student has changed is never overwritten: it is kept, and False returned."""
    folder.mkdir(parents=True, exist_ok=True)
    progress = read_progress(folder)
    path, text = folder / ex.file, scaffold(ex)
    if path.exists():
        written = progress.get(ex.name, {}).get("scaffold")
        if _file_digest(path) not in (written, digest(text)):
            return path, False
    write_text(path, text)
    progress.setdefault(ex.name, {})["scaffold"] = digest(text)
    write_progress(folder, progress)
    return path, True


def record(folder: Path, ex: Exercise, passed: bool, checked: str) -> None:
    """Keep the verdict of a check of ``ex`` and the digest of the text it checked."""
    progress = read_progress(folder)
    entry = progress.setdefault(ex.name, {})
    entry["verdict"] = "passed" if passed else "failing"
    entry["checked"] = checked
    write_progress(folder, progress)


def next_hint(folder: Path, ex: Exercise) -> tuple[int, str]:
    """The next hint of ``ex`` (1-based number, text): one more each time, the last repeated."""
    progress = read_progress(folder) if folder.is_dir() else {}
    shown = min(progress.get(ex.name, {}).get("hints", 0) + 1, len(ex.hints))
    if folder.is_dir():
        progress.setdefault(ex.name, {})["hints"] = shown
        write_progress(folder, progress)
    return shown, ex.hints[shown - 1]
