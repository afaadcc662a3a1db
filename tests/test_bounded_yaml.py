"""YAML within bounds: alias expansion, nesting with aliases followed, duplicate keys and the
size of a config file, for config files, --set values and the configs mlp-plot reads."""

import pytest
import yaml

from mlp_manual.config import ConfigError, load_config, parse_override
from mlp_manual.config.bounded_yaml import (
    MAX_BYTES,
    MAX_DEPTH,
    MAX_VALUES,
    LimitExceeded,
    load_bounded,
)
from mlp_manual.errors import short_repr, short_text
from mlp_manual.results.compare import run_labels


def laughs(levels: int, under: str = "") -> str:
    """Anchors l0..l<levels>, each a list of nine aliases of the one before: 9 ** (levels + 1) leaves."""
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n" + under


def expanded(value) -> int:
    """Values in a parsed document, every alias counted again."""
    if isinstance(value, dict):
        return 1 + sum(expanded(k) + expanded(v) for k, v in value.items())
    if isinstance(value, list):
        return 1 + sum(expanded(v) for v in value)
    return 1


def test_aliases_are_expanded_up_to_the_limit():
    doc = load_bounded(laughs(3))  # 9 ** 4 leaves: well under the limit, with every alias a shared list
    assert expanded(doc["l3"]) == 1 + 9 * (1 + 9 * (1 + 9 * 10))
    assert doc["l3"][0] is doc["l2"]


@pytest.mark.parametrize("text, problem, line", [
    (laughs(8), f"this value expands to more than {MAX_VALUES:,} values (aliases of aliases?)", 6),
    (laughs(8, "model: {layers: *l8}\n").replace("l8: &l8", "z: &l8"), "expands to more than", 6),
    ("model: {layers: &a [relu, *a]}\n", "an alias refers to the value that contains it", 1),
    ("a0: &a0 [1]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 60)),
     f"this value nests more than {MAX_DEPTH} levels deep with its aliases followed", MAX_DEPTH + 1),
    ("a: " + "[" * 20000 + "]" * 20000 + "\n", f"nested more than {MAX_DEPTH} levels deep", 1),
    ("a: " + "{b: " * 20000 + "1" + "}" * 20000 + "\n", f"nested more than {MAX_DEPTH} levels deep", 1),
    ("".join("  " * i + f"k{i}:\n" for i in range(200)), f"nested more than {MAX_DEPTH} levels deep", MAX_DEPTH),
    ("training: {epochs: 3}\nseed: 1\ntraining: {batch_size: 2}\n", "duplicate key 'training' (first given at line 1)", 3),
    ("a:\n  b: 1\n  b: 1\n", "duplicate key 'b' (first given at line 2)", 3),
    ("{1: a, 1.0: b}\n", "duplicate key 1.0 (first given at line 1)", 1),
])
def test_documents_beyond_a_limit_are_refused_at_the_node_that_breaks_it(text, problem, line):
    with pytest.raises(LimitExceeded) as e:
        load_bounded(text)
    assert problem in e.value.problem and e.value.problem_mark.line + 1 == line


def test_the_nesting_limit_is_exact():
    doc, depth = load_bounded("[" * MAX_DEPTH + "]" * MAX_DEPTH), 0
    while doc is not None:
        doc, depth = (doc[0] if doc else None), depth + 1
    assert depth == MAX_DEPTH
    with pytest.raises(LimitExceeded):
        load_bounded("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))


def test_merge_keys_may_be_overridden_and_equal_keys_in_other_mappings_are_fine():
    doc = load_bounded("base: &b {lr: 0.1, name: sgd}\noptimizer: {<<: *b, lr: 0.05}\nschedule: {lr: 1}\n")
    assert doc["optimizer"] == {"lr": 0.05, "name": "sgd"} and doc["schedule"] == {"lr": 1}


def test_a_config_file_names_the_line_of_a_broken_limit(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("optimizer:\n  lr: 0.1\n  lr: 0.2\n")
    with pytest.raises(ConfigError, match=r"^.*c\.yaml: line 3, column 3: duplicate key 'lr' \(first given at line 2\)$"):
        load_config(path)


def test_a_config_file_over_the_size_limit_is_refused_before_it_is_parsed(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("# padding\n" * (MAX_BYTES // 10) + "seed: 1\n")
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert str(e.value) == f"{path}: the config file is 262,148 bytes; a config file is at most 262,144 bytes (256 KiB)"
    path.write_text("seed: 1\n" + " " * (MAX_BYTES - 9) + "\n")  # exactly at the limit
    assert load_config(path).seed == 1


def test_an_anchor_given_twice_names_the_file_the_line_and_the_anchor(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("seed: &a 1\nname: x\ntraining: &a {epochs: 2}\n")
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert str(e.value) == f"{path}: line 3, column 11: duplicate anchor &a (first given at line 1)"


def test_set_values_are_read_within_the_same_bounds():
    with pytest.raises(ConfigError, match=r"the value breaks a limit \(this value expands to more than"):
        parse_override("optimizer.lr=[" + laughs(8).replace("\n", ", ").replace(": &", "_: &")[:-2] + "]")
    with pytest.raises(ConfigError, match=r"the value breaks a limit \(nested more than 50 levels deep\)"):
        parse_override("model.layers=" + "[" * 5000 + "]" * 5000)
    with pytest.raises(ConfigError, match=r"the value breaks a limit \(duplicate key 'units'"):
        parse_override("model.layers.0={type: linear, units: 4, units: 8}")


def test_a_run_config_that_breaks_a_limit_gives_no_label(tmp_path):
    for run, text in [("a", laughs(8)), ("b", "seed: 1\n")]:
        (tmp_path / run).mkdir()
        (tmp_path / run / "config.yaml").write_text(text)
    assert run_labels([tmp_path / "a", tmp_path / "b"]) == ["a", "b"]  # nothing differs that both say: folder names


def test_messages_cut_long_values_without_expanding_them():
    shared = ["x"] * 9
    for _ in range(8):
        shared = [shared] * 9  # 9 ** 9 leaves if expanded
    assert len(short_repr(shared)) <= 120 and short_repr(shared).startswith("[[[[")
    assert short_repr("fast") == "'fast'" and short_repr([1, 2]) == "[1, 2]" and short_repr(0.1) == "0.1"
    assert short_repr("n" * 1000) == "'" + "n" * 27 + "..." + "n" * 28 + "'"
    assert short_text("a" * 200) == "a" * 117 + "..." and short_text("abc") == "abc"


def test_the_limits_leave_every_shipped_config_alone():
    for path in __import__("pathlib").Path("configs").glob("*.yaml"):
        assert load_bounded(path.read_text()) == yaml.safe_load(path.read_text())
