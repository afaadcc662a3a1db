"""makemore in mlp-manual: the embedding layer (its scatter-add backward against finite
differences and PyTorch), text data (names and any one-item-per-line file, split by words),
sampling with mlp-sample, and a text run's evaluation and samples."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from conftest import invoke_cli

from mlp_manual.cli.evaluate import main as evaluate
from mlp_manual.cli.explain import main as explain
from mlp_manual.cli.sample import main as sample
from mlp_manual.cli.train import main as train
from mlp_manual.config import config_from_dict
from mlp_manual.core import Embedding
from mlp_manual.datasets import load_dataset
from mlp_manual.datasets.text import examples, read_words
from mlp_manual.datasets.vocabulary import BOUNDARY, Vocabulary
from mlp_manual.errors import DataError, LayerError
from mlp_manual.gradcheck.numgrad import numerical_gradient
from mlp_manual.layers import BatchNorm1d, Linear, Tanh
from mlp_manual.losses import softmax_cross_entropy
from mlp_manual.predict.model_file import read_model

WORDS = ["".join(np.random.default_rng(i).choice(list("abcdefgh"), size=3 + i % 4)) for i in range(60)]  # 60 words, 8 letters


def text_config(tmp_path, words=WORDS, **data):
    path = tmp_path / "words.txt"
    path.write_text("\n".join(words) + "\n")
    layers = "[{type: embedding, dim: 4}, {type: linear, units: 16}, tanh, {type: linear}]"
    config = tmp_path / "text.yaml"
    extra = "".join(f", {k}: {v}" for k, v in {"context": 3, **data}.items())
    config.write_text(f"data: {{name: text, path: {path}{extra}}}\nmodel: {{layers: {layers}}}\n"
                      "optimizer: {name: adam, lr: 0.01}\ntraining: {epochs: 3, batch_size: 16}\n")
    return config


# ---- the embedding layer

def test_embedding_looks_up_and_concatenates_the_rows_of_its_context(rng):
    layer = Embedding(5, 3, 2, rng=rng, dtype=np.float64)
    W = layer.params["W"]
    out = layer.forward(np.array([[1, 0, 4], [3, 3, 3]]))
    assert np.array_equal(out, [np.concatenate([W[1], W[0], W[4]]), np.concatenate([W[3], W[3], W[3]])])


def test_a_row_used_twice_gets_both_gradients_added(rng):
    layer = Embedding(4, 3, 2, rng=rng, dtype=np.float64)
    layer.forward(np.array([[1, 1, 0], [2, 1, 3]]))
    dout = np.arange(12, dtype=np.float64).reshape(2, 6)  # (N, T * E)
    assert layer.backward(dout) is None  # indices get no gradient
    dW = layer.grads["W"]
    # row 1 was used at (0, 0), (0, 1) and (1, 1): the sum of the three slices, micrograd's +=
    assert np.array_equal(dW[1], dout[0, 0:2] + dout[0, 2:4] + dout[1, 2:4])
    assert np.array_equal(dW[0], dout[0, 4:6]) and np.array_equal(dW[2], dout[1, 0:2])
    assert np.array_equal(dW[3], dout[1, 4:6])
    bad = np.zeros_like(dW)
    bad[np.array([[1, 1, 0], [2, 1, 3]])] += dout.reshape(2, 3, 2)  # what a plain += would give
    assert not np.array_equal(bad, dW)


@pytest.mark.parametrize("batch", [1, 7])
def test_the_table_gradient_matches_finite_differences_with_repeated_indices(rng, batch):
    layer = Embedding(6, 4, 3, rng=rng, dtype=np.float64)
    x = rng.integers(0, 3, size=(batch, 4))  # 3 of the 6 rows: many repeats, rows 3..5 unused
    g = rng.normal(size=(batch, 12))  # a random upstream gradient
    layer.forward(x)
    layer.backward(g)
    expected = numerical_gradient(lambda: layer.forward(x), layer.params["W"], g)
    assert np.allclose(layer.grads["W"], expected, rtol=1e-7, atol=1e-9)
    assert np.array_equal(layer.grads["W"][3:], np.zeros((3, 3)))


@pytest.mark.parametrize("x, message", [
    (np.zeros((2, 2), dtype=np.int64), r"Embedding expects indices of shape \(N, 3\), got \(2, 2\)"),
    (np.full((1, 3), 0.5), "Embedding takes integer indices, got numbers with a fractional part"),
    (np.array([[0, 1, 9]]), r"Embedding indices must lie in 0..4, found 0..9"),
    (np.array([[True, False, True]]), "Embedding takes integer indices, got bool values"),
])
def test_embedding_refuses_what_is_not_an_index(rng, x, message):
    with pytest.raises(LayerError, match=message):
        Embedding(5, 3, 2, rng=rng).forward(x)


def test_the_makemore_network_agrees_with_pytorch_autograd_in_float64(rng):
    torch = pytest.importorskip("torch")
    V, T, E, H, N = 27, 3, 10, 20, 32
    x = rng.integers(0, V, size=(N, T))
    x[:5] = 0  # boundary-padded contexts: row 0 used many times
    y = rng.integers(0, V, size=N)
    layers = [Embedding(V, T, E, rng=rng, dtype=np.float64), Linear(T * E, H, rng=rng, bias=False, dtype=np.float64),
              BatchNorm1d(H, dtype=np.float64), Tanh(), Linear(H, V, rng=rng, dtype=np.float64)]
    for layer in layers:
        for k in layer.params:
            layer.params[k] = layer.params[k] + rng.normal(size=layer.params[k].shape) * 0.1
    outs, h = [], x
    for layer in layers:
        h = layer.forward(h)
        outs.append(h)
    loss, dlogits = softmax_cross_entropy(h, y)
    upstream, d = [dlogits], dlogits
    for layer in reversed(layers[1:]):
        d = layer.backward(d)
        upstream.append(d)
    layers[0].backward(d)

    t = {name: torch.tensor(layer.params[k], requires_grad=True) for name, layer, k in
         [("C", layers[0], "W"), ("W1", layers[1], "W"), ("gamma", layers[2], "gamma"), ("beta", layers[2], "beta"),
          ("W2", layers[4], "W"), ("b2", layers[4], "b")]}
    emb = t["C"][torch.tensor(x)].reshape(N, T * E)
    pre = emb @ t["W1"]
    mean, var = pre.mean(0, keepdim=True), pre.var(0, unbiased=False, keepdim=True)
    norm = t["gamma"] * (pre - mean) / torch.sqrt(var + 1e-5) + t["beta"]
    act = torch.tanh(norm)
    logits = act @ t["W2"] + t["b2"]
    for v in (emb, pre, norm, act, logits):
        v.retain_grad()
    torch_loss = torch.nn.functional.cross_entropy(logits, torch.tensor(y))
    torch_loss.backward()
    assert abs(loss - torch_loss.item()) < 1e-12
    for name, ours in [("C", layers[0].grads["W"]), ("W1", layers[1].grads["W"]), ("gamma", layers[2].grads["gamma"]),
                       ("beta", layers[2].grads["beta"]), ("W2", layers[4].grads["W"]), ("b2", layers[4].grads["b"])]:
        assert np.abs(ours - t[name].grad.numpy()).max() < 1e-10, name
    # every intermediate gradient: dlogits, dact, dnorm, dpre, demb
    for ours, theirs in zip(upstream, (logits, act, norm, pre, emb)):
        assert np.abs(ours - theirs.grad.numpy()).max() < 1e-10
    for ours, theirs in zip(outs, (emb, pre, norm, act, logits)):
        assert np.abs(ours - theirs.detach().numpy()).max() < 1e-12


# ---- text data

def test_examples_are_made_as_in_makemore():
    vocab = Vocabulary.from_words(["emma"])
    X, y = examples([vocab.encode("emma")], 3)
    decode = (lambda row: "".join("." if i == BOUNDARY else vocab.decode([i]) for i in row))
    assert [decode(row) + "->" + decode([t]) for row, t in zip(X, y)] == [
        "...->e", "..e->m", ".em->m", "emm->a", "mma->."]


def test_words_are_split_80_10_10_and_no_word_is_in_two_splits(tmp_path):
    words = [f"w{chr(97 + i % 26)}{chr(97 + i // 26)}" for i in range(200)]
    cfg = config_from_dict({"data": {"name": "text", "path": str(text_config(tmp_path, words).parent / "words.txt"),
                                     "context": 2}}, "test")
    d = load_dataset(cfg.data, np.random.default_rng(0), np.float32)
    assert d.text and d.X_train.dtype.kind == "i"
    ends = {part: int((getattr(d, f"y_{part}") == BOUNDARY).sum()) for part in ("train", "val", "test")}
    assert ends == {"train": 160, "val": 20, "test": 20}

    def decoded(part):  # each split's words, from its examples
        y = getattr(d, f"y_{part}")  # the next characters: each word, then its boundary token
        text = "".join("\n" if c == BOUNDARY else d.vocabulary.decode([c]) for c in y)
        return set(text.split())
    train, val, test = decoded("train"), decoded("val"), decoded("test")
    assert len(train | val | test) == 200 and not (train & val) and not (train & test) and not (val & test)


def test_a_character_outside_the_training_words_names_its_line(tmp_path):
    words = ["abc"] * 30 + ["abz"]  # z only in the last word, line 31
    config = text_config(tmp_path, words, val_fraction=0.5, test_fraction=0.1)
    outcomes = [invoke_cli(train, str(config), "--seed", str(seed), "--out", str(tmp_path / f"run{seed}"), "-q")
                for seed in range(6)]
    refused = [r for r in outcomes if r.exit_code != 0]  # the seeds that kept "abz" out of the training words
    assert refused and all(r.exit_code == 1 for r in refused)
    assert all("line 31: 'z' (in 'abz') is not a character of the training words, so it has no index" in r.output
               and r.output.endswith("is built from the training split: set data.vocabulary: all to build it from "
                                     "every split\n") for r in refused)
    every = text_config(tmp_path, words, val_fraction=0.5, test_fraction=0.1, vocabulary="all")
    for seed in range(6):
        result = invoke_cli(train, str(every), "--seed", str(seed), "--out", str(tmp_path / f"all{seed}"), "-q")
        assert result.exit_code == 0, result.output
        assert read_model(tmp_path / f"all{seed}" / "model.npz")[1].vocabulary.characters == ("a", "b", "c", "z")
    result = invoke_cli(train, "--set", "data.name=names", "--set", "data.vocabulary=all", "--out",
                        str(tmp_path / "names"))
    assert result.exit_code == 1 and "data.vocabulary" in result.output


def test_a_line_that_makes_most_of_the_training_examples_gets_a_note(tmp_path):
    words = WORDS + ["abcdefgh " * 60]  # a paragraph on one line among the names
    result = invoke_cli(train, str(text_config(tmp_path, words, val_fraction=0, test_fraction=0)), "--out",
                        str(tmp_path / "run"), "-q")
    assert result.exit_code == 0, result.output
    note = (f"WARNING {tmp_path / 'words.txt'} (data.path): line 61 alone makes 62% of the training examples "
            "(539 characters); a text dataset is one item (a word, a name) per line: split long lines into items")
    assert result.stderr.splitlines()[0] == note
    result = invoke_cli(train, str(text_config(tmp_path)), "--out", str(tmp_path / "plain"), "-q")
    assert "alone makes" not in result.output


def test_a_text_model_of_two_characters_of_context_gets_no_decision_boundary_and_no_scaling_advice(tmp_path):
    config = text_config(tmp_path, context=2)
    result = invoke_cli(train, str(config), "--set", "optimizer.lr=1e-6", "--out", str(tmp_path / "run"))
    assert result.exit_code == 0, result.output
    assert "WARNING not learning" in result.output  # advice is given, but none about scaling indices
    assert "preprocess" not in result.output and "unscaled" not in result.output
    assert not (tmp_path / "run" / "decision_boundary.png").exists() and (tmp_path / "run" / "loss.png").exists()


@pytest.mark.parametrize("content, message", [
    (b"\n\n  \n", "holds no items (a text dataset has one word or name per line)"),
    (b"emma\n\xff\xfe\n", "line 2 is not UTF-8 text"),
])
def test_a_text_file_without_words_is_one_line(content, message):
    with pytest.raises(DataError, match=re.escape(f"w.txt: {message}")):
        read_words(content, "w.txt")


def test_a_text_dataset_needs_an_embedding_first(tmp_path):
    config = text_config(tmp_path)
    result = invoke_cli(train, str(config), "--set", "model.layers=[{type: linear, units: 8}, {type: linear}]",
                        "--out", str(tmp_path / "run"))
    assert result.exit_code == 1 and "the model's first layer must turn them into vectors" in result.output


# ---- a text run, its evaluation and its samples

@pytest.fixture(scope="module")
def text_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("text")
    out = tmp / "run"
    result = invoke_cli(train, str(text_config(tmp)), "--out", str(out))
    assert result.exit_code == 0, result.output
    return out, result.output


def test_a_text_run_prints_and_writes_samples(text_run):
    out, output = text_run
    assert "samples (seed 0, temperature 1; all 20 in samples.txt, more with mlp-sample):" in output
    samples = (out / "samples.txt").read_text().splitlines()
    assert len(samples) == 20 and all(samples)
    assert json.loads((out / "summary.json").read_text())["status"] == "completed"


def test_mlp_sample_is_reproducible_and_n_is_a_prefix_of_more(text_run):
    out, _ = text_run
    model = str(out / "model.npz")
    twenty = invoke_cli(sample, "--model", model, "-n", "20", "--seed", "3").output.splitlines()
    five = invoke_cli(sample, "--model", model, "-n", "5", "--seed", "3").output.splitlines()
    assert len(twenty) == 20 and five == twenty[:5]
    assert invoke_cli(sample, "--model", model, "-n", "20", "--seed", "4").output.splitlines() != twenty
    prefixed = invoke_cli(sample, "--model", model, "-n", "5", "--prefix", "ab").output.splitlines()
    assert all(line.startswith("ab") for line in prefixed)
    cold = invoke_cli(sample, "--model", model, "-n", "3", "--temperature", "0.01").output.splitlines()
    assert len(set(cold)) == 1  # nearly greedy: every item the likeliest one


def test_mlp_sample_stops_at_once_when_its_reader_goes_away(text_run):
    out, _ = text_run
    proc = subprocess.Popen([sys.executable, "-m", "mlp_manual.cli.sample", "--model", str(out / "model.npz"),
                             "-n", "1000000000"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    lines = [proc.stdout.readline() for _ in range(3)]  # as `| head -3` reads
    proc.stdout.close()
    try:
        assert proc.wait(timeout=120) == 0  # a billion items would take hours
    finally:
        proc.kill()
    assert all(line.strip() for line in lines)
    assert proc.stderr.read() == ""


def test_mlp_sample_errors_are_one_line(text_run, tmp_path):
    out, _ = text_run
    model = str(out / "model.npz")
    result = invoke_cli(sample, "--model", model, "--prefix", "aq")
    assert result.exit_code == 2 and "'aq': 'q' is not a character the model knows" in result.output
    result = invoke_cli(sample, "--model", model, "--temperature", "0")
    assert result.exit_code == 2 and "0.0 is not a number > 0" in result.output
    numbers = tmp_path / "xor"
    assert invoke_cli(train, "configs/xor.yaml", "--out", str(numbers), "-q").exit_code == 0
    result = invoke_cli(sample, "--model", str(numbers / "model.npz"))
    assert result.exit_code == 1
    assert result.output == (f"Error: {numbers / 'model.npz'} is not a text model: it was trained on numbers, not "
                             "characters; sampling needs a model trained on data.name names or text\n")


def test_mlp_eval_reports_nats_per_character_and_perplexity_for_every_split(text_run):
    out, _ = text_run
    result = invoke_cli(evaluate, "--model", str(out / "model.npz"))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "words.txt: loss in nats per character (each word's end counts as one), perplexity = exp(loss)"
    assert [line.split()[0] for line in lines[2:]] == ["train", "val", "test"]
    for line in lines[2:]:
        loss, perplexity = float(line.split()[3]), float(line.split()[4])
        assert abs(np.exp(loss) - perplexity) < 1e-3 * perplexity
    only = invoke_cli(evaluate, "--model", str(out / "model.npz"), "--split", "val").output.splitlines()
    assert [line.split()[0] for line in only[2:]] == ["val"] and only[2] == lines[3]


def test_mlp_explain_walks_the_gather_and_the_scatter_add(tmp_path):
    result = invoke_cli(explain, str(text_config(tmp_path)), "--rows", "2")
    assert result.exit_code == 0, result.output
    assert "layers.0 embedding: out[n] = concat(W[x[n, 0]], ..., W[x[n, T-1]])" in result.output
    assert "dW = scatter-add of dout: dW[x[n, t]] += dout[n, t*E:(t+1)*E]" in result.output
    assert "dx = None (indices have no gradient)" in result.output
