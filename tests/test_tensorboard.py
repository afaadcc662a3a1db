"""The run folder's TensorBoard event files, read back with TensorBoard's own reader (and, in the
slow test, served by TensorBoard itself): scalars equal to metrics.csv, summary.json and
diagnostics.csv; the HPARAMS session (kept/) with the config as hyperparameters, the metrics of
the weights the run kept, and the status; resume and live appends."""

import csv
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from mlp_manual.config import load_config
from mlp_manual.errors import TrainingInterrupted
from mlp_manual.runs import tensorboard
from mlp_manual.runs.event_file import crc32c, masked_crc, varint
from mlp_manual.runs.run import resume_run, train_run
from mlp_manual.runs.tensorboard import EVENTS_NAME, KEPT_EVENTS, RunEvents

event_accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator",
                                        reason="TensorBoard is not installed (pip install tensorboard)")
hparams_metadata = pytest.importorskip("tensorboard.plugins.hparams.metadata")

SMALL = ["training.epochs=8", "data.n_samples=200"]
# stops at epoch 7 and restores the weights of epoch 4, whose validation loss is lower
STOPS_EARLY = ["training.epochs=60", "data.n_samples=200", "training.early_stopping.patience=3", "optimizer.lr=0.05"]


def read_events(run_dir):
    acc = event_accumulator.EventAccumulator(str(run_dir), size_guidance={event_accumulator.SCALARS: 0,
                                                                          event_accumulator.TENSORS: 0})
    acc.Reload()
    return acc


def metrics(run_dir):
    with open(run_dir / "metrics.csv") as f:
        return list(csv.DictReader(f))


def hparams_data(acc, tag):
    """The HParamsPluginData message under ``tag``, parsed by TensorBoard's hparams plugin."""
    content = acc.SummaryMetadata(tag).plugin_data.content
    parse = {"_hparams_/session_start_info": hparams_metadata.parse_session_start_info_plugin_data,
             "_hparams_/session_end_info": hparams_metadata.parse_session_end_info_plugin_data}[tag]
    return parse(content)


def test_the_framing_and_the_varints_match_their_specifications():
    assert crc32c(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert crc32c(b"") == 0
    assert masked_crc(b"") == 0xA282EAD8
    assert varint(1) == b"\x01" and varint(300) == b"\xac\x02" and varint(2 ** 63) == b"\x80" * 9 + b"\x01"
    assert varint(-1) == b"\xff" * 9 + b"\x01"  # an int64 -1: ten bytes


def test_every_metric_of_every_epoch_reads_back_as_in_metrics_csv_and_summary_json(tmp_path):
    run = tmp_path / "run"
    train_run(load_config("configs/moons.yaml", SMALL), str(run), echo=lambda line: None)
    acc, rows = read_events(run), metrics(run)
    summary = json.loads((run / "summary.json").read_text())
    columns = [c for c in rows[0] if c not in ("epoch", "seconds")]
    assert set(acc.Tags()["scalars"]) == set(columns)
    for column in columns:
        events = acc.Scalars(column)
        assert [e.step for e in events] == [int(r["epoch"]) for r in rows]
        assert [e.value for e in events] == pytest.approx([float(r[column]) for r in rows], rel=1e-5)  # 6 digits
        assert events[-1].value == pytest.approx(summary["final"][column], rel=1e-7)  # float32 of the full value
    walls = [e.wall_time for e in acc.Scalars("train_loss")]
    assert walls == sorted(walls)  # the run's start plus the seconds of the epochs so far
    assert walls[-1] - walls[0] == pytest.approx(sum(float(r["seconds"]) for r in rows[1:]), abs=1e-5)
    kept = read_events(run / "kept")  # the HPARAMS session: the last epoch's weights, the test metrics of them
    assert set(kept.Tags()["scalars"]) == {*columns, *(f"test_{k}" for k in summary["test"])}
    for key, value in [*summary["final"].items(), *((f"test_{k}", v) for k, v in summary["test"].items())]:
        (point,) = kept.Scalars(key)
        assert (point.step, point.value) == (len(rows), pytest.approx(value, rel=1e-6))


def test_hparams_shows_the_metrics_of_the_weights_an_early_stopped_run_restored(tmp_path):
    """TensorBoard's HPARAMS shows, for each metric of a session, the last value of that scalar in
    the session's run and the runs below it: here those of the best epoch, whose weights model.npz
    and the test metrics hold, not those of the last epoch."""
    run = tmp_path / "run"
    train_run(load_config("configs/moons.yaml", STOPS_EARLY), str(run), echo=lambda line: None)
    summary, rows = json.loads((run / "summary.json").read_text()), metrics(run)
    assert summary["weights"] == {"source": "best", "epoch": 4} and len(rows) == 7
    assert summary["best"]["val_loss"] < summary["final"]["val_loss"]
    curves, kept = read_events(run), read_events(run / "kept")
    assert [e.step for e in curves.Scalars("val_loss")] == list(range(1, 8))  # the curves are every epoch's
    shown = {tag: kept.Scalars(tag)[-1] for tag in kept.Tags()["scalars"]}
    expected = {**summary["best"], **{f"test_{k}": v for k, v in summary["test"].items()}}
    assert set(shown) == set(expected)
    for tag, value in expected.items():
        assert (shown[tag].step, shown[tag].value) == (4, pytest.approx(value, rel=1e-6)), tag
    for tag in summary["best"]:
        assert shown[tag].value == pytest.approx(float(rows[3][tag]), rel=1e-5)  # metrics.csv's row of epoch 4
        assert shown[tag].value != pytest.approx(float(rows[-1][tag]), rel=1e-5), tag  # not the last epoch's
    assert hparams_data(kept, "_hparams_/session_end_info").status == 1  # STATUS_SUCCESS
    assert os.listdir(run / "kept") == [EVENTS_NAME] and KEPT_EVENTS == f"kept/{EVENTS_NAME}"


def test_the_config_is_the_runs_hyperparameters_and_the_status_ends_it(tmp_path):
    run = tmp_path / "run"
    train_run(load_config("configs/moons.yaml", SMALL + ["optimizer.lr=0.02"]), str(run), echo=lambda line: None)
    acc = read_events(run / "kept")
    start = hparams_data(acc, "_hparams_/session_start_info")
    hp = {k: v.WhichOneof("kind") and getattr(v, v.WhichOneof("kind")) for k, v in start.hparams.items()}
    assert hp["optimizer.lr"] == pytest.approx(0.02) and hp["training.epochs"] == 8 and hp["data.name"] == "moons"
    assert hp["optimizer.beta1"] == pytest.approx(0.9) and "optimizer.momentum" not in hp  # adam's options only
    assert hp["data.noise"] == pytest.approx(0.2) and "data.context" not in hp and "data.arms" not in hp  # moons'
    assert hp["model.layers"] == "[linear 32, relu, linear 32, relu, linear]"
    assert hparams_data(acc, "_hparams_/session_end_info").status == 1  # STATUS_SUCCESS


def test_a_diverged_run_ends_as_a_failure(tmp_path):
    run = tmp_path / "run"
    cfg = load_config("configs/moons.yaml", SMALL + ["optimizer.lr=1e30", "data.test_fraction=0"])
    with pytest.raises(Exception):
        train_run(cfg, str(run), echo=lambda line: None)
    assert json.loads((run / "summary.json").read_text())["status"] == "diverged"
    assert hparams_data(read_events(run / "kept"), "_hparams_/session_end_info").status == 2  # STATUS_FAILURE


def test_gradient_norms_read_back_as_in_diagnostics_csv(tmp_path):
    run = tmp_path / "run"
    train_run(load_config("configs/moons.yaml", SMALL + ["diagnostics.enabled=true", "diagnostics.every=3"]),
              str(run), echo=lambda line: None)
    acc = read_events(run)
    with open(run / "diagnostics.csv") as f:
        norms = [r for r in csv.DictReader(f) if r["stat"] == "grad_norm"]
    tensors = sorted({r["tensor"] for r in norms})
    assert sorted(t for t in acc.Tags()["scalars"] if t.startswith("grad_norm/")) == [f"grad_norm/{t}" for t in tensors]
    for tensor in tensors:
        expected = [(int(r["step"]) + 1, float(r["value"])) for r in norms if r["tensor"] == tensor]
        got = [(e.step, e.value) for e in acc.Scalars(f"grad_norm/{tensor}")]
        assert [s for s, _ in got] == [s for s, _ in expected]
        assert [v for _, v in got] == pytest.approx([v for _, v in expected], rel=1e-5)  # the CSV keeps 6 digits


def test_an_interrupted_and_resumed_run_has_each_epoch_once(tmp_path):
    run = tmp_path / "run"
    cfg = load_config("configs/moons.yaml", SMALL)

    def echo(line):  # Ctrl-C right after epoch 3
        if line.startswith("epoch 3/"):
            os.kill(os.getpid(), signal.SIGINT)

    with pytest.raises(TrainingInterrupted):
        train_run(cfg, str(run), echo=echo)
    assert [e.step for e in read_events(run).Scalars("train_loss")] == [1, 2, 3]
    resume_run(str(run), echo=lambda line: None)
    acc = read_events(run)
    assert [e.step for e in acc.Scalars("train_loss")] == list(range(1, 9))
    assert [e.value for e in acc.Scalars("train_loss")] == pytest.approx([float(r["train_loss"]) for r in metrics(run)],
                                                                         rel=1e-5)


def test_the_file_grows_epoch_by_epoch_and_each_append_is_what_the_rewrite_writes(tmp_path, monkeypatch):
    monkeypatch.setattr(tensorboard, "APPEND_SECONDS", 0.0)  # append after every epoch (else at most once a second)
    run = tmp_path / "run"
    sizes = []

    def echo(line):
        if line.startswith("epoch "):
            sizes.append((run / EVENTS_NAME).read_bytes())

    train_run(load_config("configs/moons.yaml", SMALL), str(run), echo=echo)
    final = (run / EVENTS_NAME).read_bytes()
    # each epoch's line is printed before its records are appended: the file then holds the earlier epochs
    assert len(sizes) == 8 and all(len(a) < len(b) for a, b in zip(sizes, sizes[1:]))
    assert all(final.startswith(seen) for seen in sizes)


def test_a_failing_append_does_not_stop_the_run_and_the_end_rewrites_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(tensorboard, "APPEND_SECONDS", 0.0)
    cfg = load_config("configs/xor.yaml", [])
    events = RunEvents(tmp_path / "missing", cfg, steps_per_epoch=1, start=0.0)  # a folder that is not there
    history = {"epoch": [1], "lr": [0.1], "train_loss": [0.5], "seconds": [0.01]}
    events.append_epoch(history, [])
    assert events.appending is False and not (tmp_path / "missing").exists()
    (tmp_path / "missing").mkdir()
    events.rewrite(history, [], "completed")
    assert [e.value for e in read_events(tmp_path / "missing").Scalars("train_loss")] == [0.5]


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_tensorboard_itself_lists_every_run_with_its_hyperparameters_and_kept_metrics(tmp_path):
    runs = tmp_path / "runs"
    configs = {"lr0.01": SMALL + ["optimizer.lr=0.01"], "stopped": STOPS_EARLY}
    for name, overrides in configs.items():
        train_run(load_config("configs/moons.yaml", overrides), str(runs / name), echo=lambda line: None)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "tensorboard.main", "--logdir", str(runs), "--port", str(port),
                               "--host", "127.0.0.1", "--load_fast", "false"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        request = json.dumps({"experimentName": "", "startIndex": 0, "sliceSize": 10, "colParams": [],
                              "allowedStatuses": ["STATUS_SUCCESS", "STATUS_FAILURE", "STATUS_UNKNOWN"]}).encode()
        groups, deadline = [], time.monotonic() + 60
        while len(groups) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
            try:
                with urllib.request.urlopen(urllib.request.Request(
                        f"http://127.0.0.1:{port}/data/plugin/hparams/session_groups", data=request,
                        headers={"Content-Type": "application/json"}), timeout=10) as response:
                    groups = json.load(response).get("sessionGroups", [])
            except OSError:
                assert server.poll() is None, server.stderr.read()
        assert sorted(g["name"] for g in groups) == ["lr0.01/kept", "stopped/kept"]
        for group in groups:
            name = group["name"].split("/")[0]
            summary = json.loads((runs / name / "summary.json").read_text())
            assert group["hparams"]["optimizer.lr"] == pytest.approx(0.01 if name == "lr0.01" else 0.05)
            assert [s["status"] for s in group["sessions"]] == ["STATUS_SUCCESS"]
            shown = {m["name"]["tag"]: m["value"] for m in group["metricValues"]}
            kept = summary["best"] if name == "stopped" else summary["final"]  # model.npz's weights
            assert shown == pytest.approx({**kept, **{f"test_{k}": v for k, v in summary["test"].items()}}, rel=1e-6)
            if name == "stopped":  # not the last epoch's
                assert summary["weights"] == {"source": "best", "epoch": 4}
                assert shown["val_loss"] != pytest.approx(summary["final"]["val_loss"], rel=1e-3)
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_value_beyond_float32_is_an_infinity_of_its_sign(tmp_path):
    events = RunEvents(tmp_path, load_config("configs/xor.yaml", []), steps_per_epoch=1, start=0.0)
    history = {"epoch": [1, 2, 3], "lr": [0.1] * 3, "train_loss": [1e300, -1e300, float("nan")], "seconds": [0.01] * 3}
    events.rewrite(history, [], "diverged")
    values = [e.value for e in read_events(tmp_path).Scalars("train_loss")]
    assert values[:2] == [float("inf"), float("-inf")] and values[2] != values[2]
