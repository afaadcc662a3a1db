"""The study's journal file, read and written with checks (Optuna is imported here: the storage
imports this module only for a journal).

Reading checks every complete line before Optuna replays it (journal.py): damage stops the
command with JournalDamaged instead of a traceback from deep inside the replay. A record cut
short at the end of the file is left alone when reading (another process may be writing it),
and set aside before the next write, under the journal's lock: a copy of the file is kept
beside it (``journal.log.damaged-<time>``), the file is cut at its last complete line, and
``note`` says so. Any other bytes after the last complete line are damage. Nothing is ever
written after a partial line, and a write that fails (a full disk) is cut back off.
"""

import json
import os
import shutil
import time
from collections.abc import Callable

from optuna.storages.journal import JournalFileBackend
from optuna.storages.journal._file import get_lock_file

from .journal import RECORD_START, JournalDamaged, cut_short, record_problem


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
