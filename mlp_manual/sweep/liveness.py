"""Whether the worker of a running trial is alive: the heartbeat it writes while the trial runs,
and whether it is certainly gone without waiting for its heartbeat to go stale.

A trial records its worker process as ``<boot id> <pid namespace> <pid> <start time>`` (Linux's
/proc). Another worker under the same running kernel and in the same pid namespace (the same
machine, the same container) can tell for sure whether that process still runs: a pid is
reused only by a process with another start time. Anywhere else (another machine or
container, another system) nothing is certain, and the heartbeat decides alone.
"""

import os
import threading
import time
from pathlib import Path


def process_id() -> str | None:
    """This process as ``<boot id> <pid namespace> <pid> <start time>``, or None where /proc
    does not say."""
    try:
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
        namespace = os.readlink("/proc/self/ns/pid")
        state, started = _stat(os.getpid())
    except (OSError, IndexError):
        return None
    return f"{boot} {namespace} {os.getpid()} {started}"


def is_gone(process) -> bool:
    """Whether the process that ``process_id()`` gave as ``process`` has certainly ended: it ran
    under this boot of this kernel, in this pid namespace, and its pid now names no process, a
    zombie, or a process started at another time."""
    here = process_id()
    if not isinstance(process, str) or here is None:
        return False
    fields = process.split(" ")
    if len(fields) != 4 or fields[:2] != here.split(" ")[:2] or not fields[2].isdigit():
        return False
    try:
        state, started = _stat(int(fields[2]))
    except FileNotFoundError:
        return True
    except (OSError, IndexError):
        return False
    return state == "Z" or started != fields[3]


def _stat(pid: int) -> tuple[str, str]:
    """The state letter and the start time (in clock ticks since boot) of process ``pid``."""
    fields = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()  # after the command's name
    return fields[0].decode(), fields[19].decode()


class Heartbeat:
    """While the block runs, a thread writes the time into the trial's ``heartbeat`` every
    ``every`` seconds; a failed write (the database unreachable for a moment) is tried again
    at the next beat."""

    def __init__(self, storage, trial_id: int, every: float):
        self.storage, self.trial_id, self.every = storage, trial_id, every
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True, name="mlp-sweep heartbeat")

    def _beat(self) -> None:
        while not self.stop.wait(self.every):
            try:
                self.storage.set_trial_user_attr(self.trial_id, "heartbeat", time.time())
            except Exception:  # the trial ended, or the storage is unreachable for now
                pass

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()

