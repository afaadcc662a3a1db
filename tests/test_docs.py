"""The README and the docs site: every example runs as shown (tests/doc_examples.py says how), the
site builds with ``mkdocs build --strict``, and the README stays a five-minute read that links to
the learning path and both references.

``MLP_MANUAL_UPDATE_DOCS=1 python -m pytest tests/test_docs.py`` writes what each console example
prints back into its page, for a change meant to alter an output (then the same with ``-m slow``
for the slow examples); read the diff before committing.
"""

import importlib.util
import os
import re
import shutil
import subprocess
import sys

import pytest
import yaml
from doc_examples import (
    ERROR_LINE,
    PAGES,
    ROOT,
    commands,
    difference,
    examples,
    in_order,
    matches,
    normalise,
    run_command,
    run_python,
    sandbox,
)

UPDATE = os.environ.get("MLP_MANUAL_UPDATE_DOCS") == "1"
PAGES_WITH_EXAMPLES = [p for p in PAGES if examples(p)]
SLOW_PAGES = [p for p in PAGES_WITH_EXAMPLES if any("slow" in e.marks for e in examples(p))]


def mnist_present() -> bool:
    from mlp_manual.datasets.datadir import locate
    from mlp_manual.errors import DataError

    try:
        locate("mnist")
    except DataError:
        return False
    return True


def runs_in(example, slow: bool) -> bool:
    """Whether the suite (the slow one with ``slow``) runs ``example``: each suite its own
    examples, both the files a page saves, neither one marked not run."""
    if (example.marker or "").startswith(("not run", "tested by")):
        return False
    if "needs MNIST" in example.marks and not mnist_present():
        return False
    return example.file is not None or ("slow" in example.marks) == slow


def run_page(page, folder, slow: bool) -> None:
    """Run the page's examples in order in ``folder``: those not marked slow, or with ``slow``
    those marked slow (each suite with the files the page saves)."""
    from mlp_manual.config import config_from_dict

    folder = sandbox(folder)
    updates = {}  # first line of an expected output (from 1) -> (its length, the new lines)
    for example in examples(page):
        if not runs_in(example, slow):
            continue
        if example.file:  # "# my_layers.py" first: a file the page's later examples use
            path = folder / example.file
            with open(path, "a" if example.continued else "w", encoding="utf-8") as f:
                f.write(("\n\n" if example.continued else "") + "\n".join(example.body) + "\n")
            if example.kind == "python" or ":" in "".join(example.body):  # a user's layer type needs --import
                continue
        if example.kind == "yaml":
            raw = yaml.safe_load("\n".join(example.body))
            if isinstance(raw, dict) and CONFIG_SECTIONS & set(raw):
                config_from_dict(raw, example.where)  # raises ConfigError naming the example
        elif example.kind == "python":
            code, out = run_python(example, folder)
            assert code == 0, f"{example.where}: the snippet failed:\n" + "\n".join(out)
            if example.output is not None:
                got = [normalise(line, folder) for line in out]
                if UPDATE and not matches([normalise(e, folder) for e in example.output], got):
                    updates[example.output_line + 1] = (len(example.output), got)
                else:
                    assert matches([normalise(e, folder) for e in example.output], got), \
                        f"{example.where}: the output differs\n" + difference(example.output, got)
        else:
            for command in commands(example):
                code, out = run_command(command, folder)
                got = [normalise(line, folder) for line in out]
                shown = "\n".join(command.expected)
                if code != 0 and not ERROR_LINE.search(shown) and not UPDATE:
                    raise AssertionError(f"{page.relative_to(ROOT)}:{command.line}: `{command.text}` exited with "
                                         f"{code}:\n" + "\n".join(out))
                if not command.expected:  # a command shown without its output: only that it runs
                    continue
                if "trimmed" in example.marks:
                    assert in_order([normalise(e, folder) for e in command.expected], got), \
                        f"{page.relative_to(ROOT)}:{command.line}: `{command.text}` printed something else\n" + \
                        difference(command.expected, got)
                    continue
                if UPDATE and not matches([normalise(e, folder) for e in command.expected], got):
                    updates[command.line + 1] = (len(command.expected), got)
                    continue
                assert matches([normalise(e, folder) for e in command.expected], got), \
                    f"{page.relative_to(ROOT)}:{command.line}: `{command.text}` printed something else\n" + \
                    difference(command.expected, got)
    if updates:
        lines = page.read_text(encoding="utf-8").splitlines()
        for first, (length, new) in sorted(updates.items(), reverse=True):
            lines[first - 1:first - 1 + length] = new
        page.write_text("\n".join(lines) + "\n", encoding="utf-8")


CONFIG_SECTIONS = {"data", "model", "optimizer", "schedule", "training", "loss"}


@pytest.mark.parametrize("page", PAGES_WITH_EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_example_of_a_page_runs_as_shown(page, tmp_path):
    run_page(page, tmp_path, slow=False)


@pytest.mark.slow
@pytest.mark.parametrize("page", SLOW_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_slow_examples_of_a_page_run_as_shown(page, tmp_path):
    run_page(page, tmp_path, slow=True)


def test_the_example_checker_catches_a_changed_number_and_a_changed_word(tmp_path):
    assert matches(["loss 0.0730, acc 0.9750"], ["loss 0.07301, acc 0.9750"])  # within 1e-3
    assert not matches(["loss 0.0730, acc 0.9750"], ["loss 0.0740, acc 0.9750"])
    assert not matches(["loss 0.0730, acc 0.9750"], ["loss 0.0730, accuracy 0.9750"])
    assert matches(["first", "...", "last"], ["first", "a", "b", "last"])
    assert not matches(["first", "last"], ["first", "a", "last"])
    assert normalise(f"{tmp_path}/runs/xor-20261121-170102 in 0.86s", tmp_path) == "runs/xor-<stamp> in <s>"


def test_every_mark_of_an_example_is_one_the_checker_knows():
    """A misspelt mark (``slwo``) would run a slow example in the default suite, or skip nothing."""
    for page in PAGES:
        for example in examples(page):
            if not (example.marker or "").startswith(("not run", "tested by")):
                assert example.marks <= {"slow", "needs MNIST", "trimmed"}, f"{example.where}: {example.marker}"


def test_every_console_example_is_a_command_with_what_it_prints():
    for page in PAGES:
        for example in examples(page):
            if example.kind == "console":
                assert commands(example), f"{example.where}: a console block without a `$ ` command"


def test_the_readme_is_a_five_minute_read_that_links_into_the_docs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    links = set(re.findall(r"\]\((docs/[^)#]+)", readme))
    for target in ("docs/learn/index.md", "docs/reference/commands.md", "docs/reference/config.md"):
        assert target in links, target
    for link in links:
        assert (ROOT / link).is_file(), link


@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (pip install -e .[docs])")
def test_the_site_builds_strictly(tmp_path):
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "reference" / "commands" / "index.html").is_file()


@pytest.mark.skipif(importlib.util.find_spec("mkdocs_click") is None, reason="mkdocs-click is not installed (pip install -e .[docs])")
def test_the_commands_page_shows_each_example_on_its_own_line():
    """mkdocs-click drops click's \\b lines and passes the help on as Markdown, so an example block
    must be Markdown's code too (a blank line after "Examples:", the lines indented), else the site
    runs the examples into one paragraph."""
    import markdown

    page = (ROOT / "docs" / "reference" / "commands.md").read_text(encoding="utf-8")
    html = markdown.markdown(page, extensions=["mkdocs-click"])
    blocks = re.findall(r"<p>Examples?:</p>\s*<pre><code>(.*?)</code></pre>", html, re.S)
    assert len(blocks) == len(re.findall(r"Examples?:", html)) >= page.count("::: mkdocs-click")
    assert all(line.startswith("mlp-") for block in blocks for line in block.splitlines())


def test_the_config_reference_is_generated_from_the_declarations():
    from mlp_manual.config.reference import config_reference

    page = (ROOT / "docs" / "reference" / "config-keys.md").read_text(encoding="utf-8")
    assert page == config_reference(), "docs/reference/config-keys.md is stale: run python -m mlp_manual.config.reference > docs/reference/config-keys.md"


def test_the_configs_page_explains_every_thing_of_every_table():
    """docs/reference/config.md is written by hand, with a line on each layer type, loss,
    optimizer, schedule and dataset: a new row of a table is missing there until one is added."""
    from mlp_manual.datasets.load import LOADERS
    from mlp_manual.layers.registry import LAYERS
    from mlp_manual.losses import LOSSES
    from mlp_manual.optimizers import OPTIMIZERS
    from mlp_manual.schedules import SCHEDULES

    page = (ROOT / "docs" / "reference" / "config.md").read_text(encoding="utf-8")
    tables = {"layer type": LAYERS, "loss": LOSSES, "optimizer": OPTIMIZERS, "schedule": SCHEDULES, "dataset": LOADERS}
    missing = [f"{kind} {name}" for kind, table in tables.items() for name in table if f"`{name}`" not in page]
    assert not missing, f"docs/reference/config.md says nothing of: {', '.join(missing)}"


def test_no_page_is_left_out_of_the_site():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in (ROOT / "docs").rglob("*.md"):
        assert str(page.relative_to(ROOT / "docs")) in nav, f"{page} is not in mkdocs.yml's nav"
    assert shutil.which("bash")
