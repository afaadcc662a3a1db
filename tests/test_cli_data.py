from click.testing import CliRunner
from datafiles import fake_mnist
from test_fetch import FILES, Server, good_routes, refused_url, tiny_checksums  # noqa: F401 (fixture)

from mlp_manual.cli.data import main
from mlp_manual.datasets import fetch


def test_list_shows_every_dataset(clean_env):
    fake_mnist(clean_env / "data" / "mnist")
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 0, result.output
    lines = dict(line.split(None, 1) for line in result.output.splitlines())
    assert lines["digits"].startswith("shipped") and lines["digits"].endswith("digits.csv.gz")
    assert lines["mnist1d"].startswith("shipped")
    assert lines["names"].startswith("shipped") and lines["names"].endswith("names.txt")
    assert lines["mnist"].split() == ["present", "data/mnist"]
    assert lines["fashion_mnist"].startswith("missing  get it with `mlp-data fetch fashion_mnist`; looked in")


def test_list_with_data_dir(clean_env):
    result = CliRunner().invoke(main, ["list", "--data-dir", str(clean_env / "my data")])
    assert f"looked in {clean_env / 'my data' / 'mnist'}" in result.output
    # the command it suggests fetches into that folder
    assert f"`mlp-data fetch mnist --data-dir '{clean_env / 'my data'}'`" in result.output


def test_fetch_downloads_into_the_data_dir(clean_env, monkeypatch):
    with Server(good_routes()) as server:
        monkeypatch.setitem(fetch.MIRRORS, "mnist", (server.url,))
        result = CliRunner().invoke(main, ["fetch", "mnist", "--data-dir", "d", "--timeout", "5"])
    assert result.exit_code == 0, result.output
    assert result.output.strip().endswith("mnist is ready in d/mnist")
    assert len(list((clean_env / "d" / "mnist").glob("*.gz"))) == len(FILES)


def test_fetch_defaults_to_the_user_cache(clean_env, monkeypatch):
    with Server(good_routes()) as server:
        monkeypatch.setitem(fetch.MIRRORS, "mnist", (server.url,))
        result = CliRunner().invoke(main, ["fetch", "mnist"])
    assert result.exit_code == 0, result.output
    assert (clean_env / "cache" / "mlp-manual" / "mnist" / "t10k-images-idx3-ubyte.gz").is_file()


def test_fetch_failure_is_one_line_without_traceback(clean_env, monkeypatch):
    monkeypatch.setitem(fetch.MIRRORS, "mnist", (refused_url(),))
    result = CliRunner().invoke(main, ["fetch", "mnist", "--timeout", "5"])
    assert result.exit_code == 1
    assert result.output.splitlines()[-1].startswith("Error: could not fetch train-images-idx3-ubyte.gz from any mirror")
    assert "Traceback" not in result.output


def test_fetch_rejects_unknown_names():
    result = CliRunner().invoke(main, ["fetch", "digits"])
    assert result.exit_code == 2 and "'digits' is not one of" in result.output


def test_a_dataset_not_downloaded_names_the_command_and_the_variable(clean_env):
    from mlp_manual.cli.train import main as train

    (clean_env / "c.yaml").write_text("data: {name: mnist}\n")
    result = CliRunner().invoke(train, ["--config", "c.yaml", "--out", "run"])
    assert result.exit_code == 1
    assert result.output == (
        "Error: mnist is not downloaded; run `mlp-data fetch mnist` to get it, or set MLP_MANUAL_DATA to a folder "
        f"that holds mnist/ (looked in data/mnist (./data), {clean_env / 'cache' / 'mlp-manual' / 'mnist'} "
        "(user cache))\n")
