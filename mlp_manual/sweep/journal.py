"""The study's journal file, read and written with checks: Optuna's JournalFileBackend, whose
file is one JSON record per line, appended under a lock and replayed from the start by every
process that opens it.

Reading checks every complete line before Optuna replays it: a line that is not JSON, a record
of an unknown kind or without the fields of its kind stops the command with JournalDamaged,
naming the file and the byte offset, instead of a traceback from deep inside the replay.
Records are written with ``ensure_ascii``, so a record cut short by a crash or a full disk is
printable ASCII starting ``{"op_code":``, possibly followed by the zeros a crashed file system
leaves: such a last line is left alone when reading (another process may be writing it), and
set aside before the next write, under the journal's lock: a copy of the file is kept beside it
(``journal.log.damaged-<time>``), the file is cut at its last complete line, and ``note`` says
so. Any other bytes after the last complete line are damage. Nothing is ever written after a
partial line, and a write that fails (a full disk) is cut back off.
"""

import json
import os
import shutil
import time
from collections.abc import Callable
from datetime import datetime

from ..errors import DataError, short_repr

RECORD_START = b'{"op_code":'
_NUMBER = (int, float)
_TEXT_OR_NONE = (str, type(None))
# the fields each kind of record needs (optuna.storages.journal._storage.JournalOperation)
FIELDS = {
    0: {"study_name": str, "directions": list},  # CREATE_STUDY
    1: {"study_id": int},  # DELETE_STUDY
    2: {"study_id": int, "user_attr": dict},  # SET_STUDY_USER_ATTR
    3: {"study_id": int, "system_attr": dict},  # SET_STUDY_SYSTEM_ATTR
    4: {"study_id": int, "datetime_start": _TEXT_OR_NONE},  # CREATE_TRIAL
    5: {"trial_id": int, "param_name": str, "param_value_internal": _NUMBER, "distribution": str},  # SET_TRIAL_PARAM
    6: {"trial_id": int, "state": int, "values": (list, type(None))},  # SET_TRIAL_STATE_VALUES
    7: {"trial_id": int, "step": int, "intermediate_value": _NUMBER},  # SET_TRIAL_INTERMEDIATE_VALUE
    8: {"trial_id": int, "user_attr": dict},  # SET_TRIAL_USER_ATTR
    9: {"trial_id": int, "system_attr": dict},  # SET_TRIAL_SYSTEM_ATTR
    10: {},  # DISCARD_TRIALS, which Optuna skips
}
ONE_ITEM = ("user_attr", "system_attr")
STATES = range(5)  # RUNNING, COMPLETE, PRUNED, FAIL, WAITING


class JournalDamaged(DataError):
    """The study's journal file holds something that is not a record at ``offset``."""

    def __init__(self, path, offset: int, line: int, why: str, foreign: bool = False):
        if foreign:  # not even the start of a record: another file (a sweep.json naming it), nothing to cut back to
            super().__init__(f"{path}: is not a study's journal (line 1: {why}); a journal file is one Optuna "
                             "record per line, as mlp-sweep run writes it")
        else:
            super().__init__(f"{path}: the study's journal is damaged at byte {offset} (line {line}: {why}); keep a "
                             f"copy, then cut it there to go on with the trials recorded before: truncate -s {offset} "
                             f"{path}")
        self.offset = offset


def record_problem(record) -> str | None:
    """What is wrong with the decoded line ``record``, or None for a record Optuna can replay."""
    if not isinstance(record, dict):
        return "not a record"
    op = record.get("op_code")
    if type(op) is not int or op not in FIELDS:
        return f"a record of unknown kind (op_code {short_repr(op)})"
    if not isinstance(record.get("worker_id"), str):
        return "a record without its worker_id"
    for key, kind in FIELDS[op].items():
        value = record.get(key)
        if key not in record or isinstance(value, bool) or not isinstance(value, kind):
            return f"a record without a valid {key}"
        if key in ONE_ITEM and len(value) != 1:
            return f"a record whose {key} is not one item"
    if op == 6:
        if record["state"] not in STATES:
            return "a record of an unknown trial state"
        when = "datetime_start" if record["state"] == 0 else "datetime_complete" if record["state"] in (1, 2, 3) else None
        if when is not None and not _is_time(record.get(when)):
            return f"a record without a valid {when}"
    if op == 4:
        for key in ("datetime_start", "datetime_complete"):
            if record.get(key) is not None and not _is_time(record[key]):
                return f"a record without a valid {key}"
    return None


def _is_time(text) -> bool:
    try:
        datetime.fromisoformat(text)
        return True
    except (TypeError, ValueError):
        return False


def cut_short(tail: bytes) -> bool:
    """Whether ``tail``, the bytes after the last complete line, is the start of a record that a
    crash or a full disk cut short (printable ASCII from ``{"op_code":``, then perhaps zeros)."""
    text = tail.rstrip(b"\0")
    start = text[:len(RECORD_START)]
    return RECORD_START.startswith(start) and all(32 <= b < 127 for b in text)


def backend_class():
    """The checked JournalFileBackend class (Optuna is imported here, on first use)."""
    from optuna.storages.journal import JournalFileBackend
    from optuna.storages.journal._file import get_lock_file

    class CheckedJournalBackend(JournalFileBackend):
        """Optuna's journal file with every line checked as it is read (``read_logs``), and no
        write after a partial line (``append_logs``); ``note`` is told when a record cut short
        is set aside."""

        def __init__(self, path: str, lock_obj, note: Callable[[str], None]):
            super().__init__(path, lock_obj=lock_obj)
            self.note = note
            self.last_read = (0, 0, {})  # (offset, line number, record) last handed to Optuna
            self.foreign = False  # whether the file does not start as a journal does

        def read_logs(self, log_number_from: int):
            offsets = self._log_number_offset
            number = log_number_from if log_number_from in offsets else 0
            offset = offsets[number]
            with open(self._file_path, "rb") as f:
                size = os.fstat(f.fileno()).st_size  # lines appended while this reads wait for the next read
                f.seek(offset)
                data = f.read(max(0, size - offset))
            self.foreign = offset == 0 and data[:len(RECORD_START)] != RECORD_START[:len(data)]
            start = 0
            while start < len(data):
                end = data.find(b"\n", start)
                if end < 0:  # the last line, without its end: being written, or cut short
                    if not cut_short(data[start:]):
                        raise self.damaged(offset + start, number, "bytes that are not a record at its end")
                    return
                line = data[start:end + 1]
                try:
                    record = json.loads(line)
                except (ValueError, RecursionError):
                    raise self.damaged(offset + start, number, "not a JSON record") from None
                problem = record_problem(record)
                if problem:
                    raise self.damaged(offset + start, number, problem)
                offsets[number + 1] = offset + end + 1
                self.last_read = (offset + start, number, record)
                if number >= log_number_from:
                    yield record
                number, start = number + 1, end + 1

        def damaged(self, offset: int, number: int, why: str) -> JournalDamaged:
            return JournalDamaged(self._file_path, offset, number + 1, why, self.foreign and offset == 0)

        def append_logs(self, logs: list[dict]) -> None:
            text = "".join(json.dumps(log, separators=(",", ":")) + "\n" for log in logs).encode()
            with get_lock_file(self._lock):
                fd = os.open(self._file_path, os.O_RDWR | os.O_APPEND)
                try:
                    end = os.fstat(fd).st_size
                    if end and os.pread(fd, 1, end - 1) != b"\n":
                        end = self._set_aside(fd, end)
                    try:
                        written = 0
                        while written < len(text):
                            written += os.write(fd, text[written:])
                        os.fsync(fd)
                    except OSError:
                        _cut(fd, end)  # no partial line is left behind for the next writer
                        raise
                finally:
                    os.close(fd)

        def _set_aside(self, fd: int, end: int) -> int:
            """The file ends in a partial line, under the lock: no writer is writing it. Keep a
            copy, cut the line off if it is a record cut short (else JournalDamaged); the new end."""
            last = _last_line_end(fd, end)
            tail = os.pread(fd, end - last, last)
            if not cut_short(tail):
                raise self.damaged(last, os.pread(fd, last, 0).count(b"\n"), "bytes that are not a record at its end")
            copy = f"{self._file_path}.damaged-{time.strftime('%Y%m%d-%H%M%S')}"
            shutil.copyfile(self._file_path, copy)
            os.ftruncate(fd, last)
            os.fsync(fd)
            self.note(f"note: {self._file_path} ended in a record cut short (a crash or a full disk while it was "
                      f"written): a copy is kept in {copy}, the record is set aside and the sweep goes on")
            return last

    return CheckedJournalBackend


def _last_line_end(fd: int, end: int, chunk: int = 65536) -> int:
    """The offset just after the last newline before ``end`` (0 when there is none)."""
    position = end
    while position > 0:
        start = max(0, position - chunk)
        found = os.pread(fd, position - start, start).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        position = start
    return 0


def _cut(fd: int, end: int) -> None:
    try:
        os.ftruncate(fd, end)
    except OSError:  # the write's own failure is the one to report
        pass
