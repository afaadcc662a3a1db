"""A run's metrics: one list per metric, one entry per epoch (plain lists, easy to plot)."""

from dataclasses import dataclass, field


@dataclass
class History:
    """One list per metric, one entry per epoch."""

    columns: dict[str, list] = field(default_factory=dict)

    def append(self, row: dict) -> None:
        for k, v in row.items():
            self.columns.setdefault(k, []).append(v)

    def __getitem__(self, key: str) -> list:
        return self.columns[key]

    def row(self, epoch: int) -> dict:
        """The metrics of ``epoch`` as one row, as it was appended."""
        i = self.columns["epoch"].index(epoch)
        return {k: v[i] for k, v in self.columns.items()}

    def last(self) -> dict:
        """The row of the last epoch."""
        return self.row(self.columns["epoch"][-1])
