"""The records of a study's journal file: Optuna's JournalFileBackend writes one JSON record
per line, appended under a lock and replayed from the start by every process that opens it.

A line that is not JSON, a record of an unknown kind or without the fields of its kind is
damage (JournalDamaged, naming the file and the byte offset), found before Optuna replays it
(journal_file.py). Records are written with ``ensure_ascii``, so a record cut short by a crash
or a full disk is printable ASCII starting ``{"op_code":``, possibly followed by the zeros a
crashed file system leaves (``cut_short``).
"""

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
