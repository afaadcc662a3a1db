"""What a run prints while it trains: thinned epoch lines (--log-every) and the progress bar
inside long epochs, drawn on a terminal only."""

import io

import pytest
from conftest import invoke_cli

from mlp_manual.cli import progress
from mlp_manual.cli.progress import StepBar
from mlp_manual.cli.train import main
from mlp_manual.runs.epoch_log import EpochLog


class Terminal(io.StringIO):
    def isatty(self):
        return True


def screen(text: str) -> list[str]:
    """The lines a terminal shows for ``text``: a carriage return moves back to the line's start."""
    lines = []
    for raw in text.split("\n"):
        line = ""
        for part in raw.split("\r"):
            line = part + line[len(part):]
        lines.append(line.rstrip())
    return lines


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_epoch_log_prints_every_nth_epoch_and_the_first_and_last():
    printed = []
    log = EpochLog(printed.append, every=4, last_epoch=10)
    for epoch in range(1, 11):
        log.epoch(epoch, f"epoch {epoch}")
    log("final")
    assert printed == ["epoch 1", "epoch 4", "epoch 8", "epoch 10", "final"]


def test_epoch_log_prints_the_held_back_last_epoch_of_a_run_that_stops_early():
    printed = []
    log = EpochLog(printed.append, every=4, last_epoch=10)
    for epoch in range(3, 7):  # a resumed run starts at epoch 3, and early stopping ends it at 6
        log.epoch(epoch, f"epoch {epoch}")
    assert printed == ["epoch 3", "epoch 4"]
    log("best val_loss ...")
    assert printed == ["epoch 3", "epoch 4", "epoch 6", "best val_loss ..."]


def test_the_bar_shows_steps_loss_and_time_left_once_an_epoch_is_long():
    stream, clock = Terminal(), Clock()
    bar = StepBar(stream, clock)
    bar(2, 1, 10, 0.9)  # the first step: timing starts
    clock.now += 0.5
    bar(2, 2, 10, 0.8)
    assert stream.getvalue() == ""  # not yet DELAY seconds into the epoch
    clock.now += 1.5  # 2 s for 2 steps: 1 s a step
    bar(2, 3, 10, 0.75)
    assert screen(stream.getvalue()) == [f"epoch 2  [{'#' * 7}{'.' * 17}]  3/10 steps  loss 0.7500  0:07 left"]
    clock.now += 0.05  # within INTERVAL: not redrawn
    bar(2, 4, 10, 0.7)
    assert "4/10" not in stream.getvalue()
    clock.now += 62.0
    bar(2, 5, 10, 0.5)  # 64 s for 4 steps: 16 s a step, 5 steps left
    assert screen(stream.getvalue()) == [f"epoch 2  [{'#' * 12}{'.' * 12}]  5/10 steps  loss 0.5000  1:20 left"]
    bar(2, 10, 10, 0.4)  # the epoch's last step erases the bar for the epoch line
    assert screen(stream.getvalue()) == [""]


def test_clear_progress_erases_the_bar_before_other_output():
    stream, clock = Terminal(), Clock()
    bar = StepBar(stream, clock)
    bar(1, 1, 100, 1.0)
    clock.now += 5
    bar(1, 2, 100, 1.0)
    assert screen(stream.getvalue())[-1].startswith("epoch 1  [")
    progress.clear_progress()
    stream.write("WARNING something\n")
    assert screen(stream.getvalue()) == ["WARNING something", ""]
    progress.clear_progress()  # nothing drawn: nothing written
    assert screen(stream.getvalue()) == ["WARNING something", ""]


def test_no_bar_on_a_stream_that_is_not_a_terminal():
    stream, clock = io.StringIO(), Clock()
    bar = StepBar(stream, clock)
    for step in range(1, 10):
        clock.now += 10
        bar(1, step, 10, 1.0)
    assert stream.getvalue() == ""


def test_mlp_train_prints_every_nth_epoch_and_no_bar_when_piped(tmp_path, monkeypatch):
    monkeypatch.setattr(StepBar, "DELAY", 0.0)  # every epoch counts as long
    monkeypatch.setattr(StepBar, "INTERVAL", 0.0)
    result = invoke_cli(main, "configs/xor.yaml", "--set", "training.epochs=10", "--set", "training.batch_size=1",
                        "--log-every", "4", "--out", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    epochs = [line.split()[1] for line in result.output.splitlines() if line.startswith("epoch ")]
    assert epochs == ["1/10", "4/10", "8/10", "10/10"]
    assert "\r" not in result.output and "steps" not in result.output


@pytest.mark.parametrize("value", ["0", "x"])
def test_log_every_must_be_a_positive_integer(value):
    result = invoke_cli(main, "configs/xor.yaml", "--log-every", value)
    assert result.exit_code == 2 and "--log-every" in result.output
