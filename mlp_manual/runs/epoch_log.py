"""Which lines a run prints: every line, except that epoch lines may be thinned out."""

from collections.abc import Callable

LINES = 20  # epoch lines a long run prints by default


class EpochLog:
    """An ``echo`` for a run that prints only every ``every``-th epoch line (None: about LINES
    evenly spaced ones, every ``last_epoch // LINES``-th), plus the first one it is given and the last: the line of epoch ``last_epoch``, or, when training ends earlier
    (early stopping), the line held back, which is printed before the next line of any other kind.

    Call it with any other line to print that line; call ``epoch(n, line)`` for epoch lines.
    """

    def __init__(self, echo: Callable[[str], None], every: int | None = 1, last_epoch: int | None = None):
        if every is None:
            every = max(1, (last_epoch or 1) // LINES)
        self.echo, self.every, self.last_epoch = echo, every, last_epoch
        self.printed_one = False
        self.held: str | None = None  # the latest epoch line not printed

    def epoch(self, epoch: int, line: str) -> None:
        if not self.printed_one or epoch % self.every == 0 or epoch == self.last_epoch:
            self.held, self.printed_one = None, True
            self.echo(line)
        else:
            self.held = line

    def __call__(self, line: str) -> None:
        if self.held is not None:
            self.echo(self.held)
            self.held = None
        self.echo(line)
