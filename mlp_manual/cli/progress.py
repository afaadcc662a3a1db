"""A progress bar inside long epochs, for a person watching a terminal.

It is drawn on one line, redrawn in place, and only when the stream is a terminal: piped or
redirected output never holds it.
"""

import time
from collections.abc import Callable
from typing import TextIO

_shown: list["StepBar"] = []  # the bar on the terminal now, which other output must erase first


def clear_progress() -> None:
    """Erase the bar on the terminal, if one is drawn (before printing anything else)."""
    for bar in list(_shown):
        bar.clear()


class StepBar:
    """The trainer's ``on_step`` callback: on a terminal, once an epoch has run ``DELAY`` seconds,
    a line with the epoch, the steps done, a bar, the epoch's mean loss so far and the time
    left, redrawn at most every ``INTERVAL`` seconds and erased when the epoch's last step is
    done. ``clock`` gives seconds (injectable for tests)."""

    DELAY = 1.0  # an epoch shorter than this never shows a bar
    INTERVAL = 0.2
    WIDTH = 24  # characters of the bar itself

    def __init__(self, stream: TextIO, clock: Callable[[], float] = time.monotonic):
        isatty = getattr(stream, "isatty", None)
        self.enabled = bool(isatty and isatty())
        self.stream, self.clock = stream, clock
        self.epoch = None
        self.start = self.start_done = self.drawn_at = 0
        self.drawn = ""

    def __call__(self, epoch: int, done: int, steps: int, loss: float) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if epoch != self.epoch:  # timing starts at the epoch's first step seen here (resumed epochs start late)
            self.epoch, self.start, self.start_done, self.drawn_at = epoch, now, done, now
        if done >= steps:
            self.clear()
        elif now - self.start >= self.DELAY and (not self.drawn or now - self.drawn_at >= self.INTERVAL):
            self.draw(self.render(epoch, done, steps, loss, now))
            self.drawn_at = now

    def render(self, epoch: int, done: int, steps: int, loss: float, now: float) -> str:
        """``epoch 3  [#########...............]  150/400 steps  loss 0.4312  0:12 left``"""
        filled = self.WIDTH * done // steps
        per_step = (now - self.start) / max(done - self.start_done, 1)
        left = round(per_step * (steps - done))
        return (f"epoch {epoch}  [{'#' * filled}{'.' * (self.WIDTH - filled)}]  {done}/{steps} steps  "
                f"loss {loss:.4f}  {left // 60}:{left % 60:02d} left")

    def draw(self, line: str) -> None:
        if not self.write("\r" + line.ljust(len(self.drawn))):
            return
        self.drawn = line
        if self not in _shown:
            _shown.append(self)

    def clear(self) -> None:
        """Erase the bar's line, leaving the cursor at its start."""
        if self.drawn:
            self.write("\r" + " " * len(self.drawn) + "\r")
            self.drawn = ""
        if self in _shown:
            _shown.remove(self)

    def write(self, text: str) -> bool:
        """Write ``text`` to the terminal; once it cannot be written (the terminal has gone: EIO)
        the bar is off for good, and training goes on. Whether it was written."""
        try:
            self.stream.write(text)
            self.stream.flush()
            return True
        except (OSError, ValueError):
            self.enabled = False
            return False
