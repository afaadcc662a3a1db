"""The downloader against an HTTP server on 127.0.0.1 only; no other address is contacted."""

import gzip
import hashlib
import http.server
import socket
import threading

import numpy as np
import pytest
from datafiles import idx_bytes

from mlp_manual.datasets import fetch
from mlp_manual.datasets.datadir import locate
from mlp_manual.errors import DataError

STEMS = ("train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")
TIMEOUT = 5.0


def tiny_files() -> dict[str, bytes]:
    """Decompressed content of four small MNIST-shaped IDX files."""
    rng = np.random.default_rng(0)
    out = {}
    for prefix, n in (("train", 6), ("t10k", 4)):
        out[f"{prefix}-images-idx3-ubyte"] = idx_bytes(rng.integers(0, 256, (n, 28, 28), dtype=np.uint8))
        out[f"{prefix}-labels-idx1-ubyte"] = idx_bytes(np.arange(n, dtype=np.uint8))
    return out


FILES = tiny_files()


@pytest.fixture(autouse=True)
def tiny_checksums(monkeypatch):
    """Make 'mnist' expect the tiny files, by SHA-256 of the decompressed bytes."""
    expected = {s: fetch.Expected(len(d), sha256=hashlib.sha256(d).hexdigest()) for s, d in FILES.items()}
    monkeypatch.setitem(fetch.EXPECTED, "mnist", expected)


class Server:
    """Serves ``routes[path] = (body, announced length or None)`` on 127.0.0.1, ephemeral port."""

    def __init__(self, routes):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path not in routes:
                    self.send_error(404)
                    return
                body, announced = routes[self.path]
                self.send_response(200)
                self.send_header("Content-Length", str(announced or len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/files/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()


def good_routes(**changes):
    """Every file gzipped under /files/<stem>.gz; ``changes`` replaces some (body, announced)."""
    routes = {f"/files/{s}.gz": (gzip.compress(d), None) for s, d in FILES.items()}
    routes.update({f"/files/{s}.gz": v for s, v in changes.items()})
    return routes


def refused_url() -> str:
    """A 127.0.0.1 address nobody listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/files/"


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def run(tmp_path, mirrors, logs=None):
    return fetch.fetch("mnist", tmp_path, mirrors=tuple(mirrors), timeout=TIMEOUT,
                       log=(logs.append if logs is not None else print))


def test_good_download_is_verified_and_loadable(tmp_path):
    with Server(good_routes()) as server:
        folder = run(tmp_path, [server.url])
    assert folder == tmp_path / "mnist"
    assert sorted(p.name for p in folder.iterdir()) == sorted(f"{s}.gz" for s in STEMS)
    assert gzip.decompress((folder / "t10k-labels-idx1-ubyte.gz").read_bytes()) == FILES["t10k-labels-idx1-ubyte"]
    assert set(locate("mnist", tmp_path)) == set(STEMS)


def test_corrupt_file_is_deleted_and_the_next_mirror_used(tmp_path):
    bad = bytearray(FILES["train-labels-idx1-ubyte"])
    bad[-1] ^= 0xFF
    logs = []
    with Server(good_routes(**{"train-labels-idx1-ubyte": (gzip.compress(bytes(bad)), None)})) as corrupt, \
            Server(good_routes()) as good:
        run(tmp_path, [corrupt.url, good.url], logs)
    mismatch = [line for line in logs if "SHA-256 mismatch" in line]
    assert len(mismatch) == 1 and "the download was deleted" in mismatch[0] and corrupt.url in mismatch[0]
    assert gzip.decompress((tmp_path / "mnist" / "train-labels-idx1-ubyte.gz").read_bytes()) == FILES["train-labels-idx1-ubyte"]
    assert leftovers(tmp_path / "mnist") == []


def test_corrupt_file_everywhere_leaves_nothing_under_the_final_name(tmp_path):
    bad = FILES["t10k-images-idx3-ubyte"][:-1] + b"\x01"
    with Server(good_routes(**{"t10k-images-idx3-ubyte": (gzip.compress(bad), None)})) as server:
        with pytest.raises(DataError, match=r"could not fetch t10k-images-idx3-ubyte.gz from any mirror: .*SHA-256 mismatch"):
            run(tmp_path, [server.url], [])
    assert not (tmp_path / "mnist" / "t10k-images-idx3-ubyte.gz").exists()
    assert leftovers(tmp_path / "mnist") == []


def test_truncated_transfer_is_rejected(tmp_path):
    body = gzip.compress(FILES["train-images-idx3-ubyte"])
    logs = []
    with Server(good_routes(**{"train-images-idx3-ubyte": (body[:200], len(body))})) as short, \
            Server(good_routes()) as good:
        run(tmp_path, [short.url, good.url], logs)
    assert any(f"truncated transfer: received 200 of {len(body)} bytes" in line for line in logs)
    assert (tmp_path / "mnist" / "train-images-idx3-ubyte.gz").read_bytes() == body
    assert leftovers(tmp_path / "mnist") == []


def test_server_down_tries_the_next_mirror(tmp_path):
    logs = []
    down = refused_url()
    with Server(good_routes()) as good:
        run(tmp_path, [down, good.url], logs)
    assert sum("cannot connect" in line and down in line for line in logs) == 4
    assert set(locate("mnist", tmp_path)) == set(STEMS)


def test_every_mirror_down_is_one_clear_error(tmp_path):
    with pytest.raises(DataError) as e:
        run(tmp_path, [refused_url(), refused_url()], [])
    message = str(e.value)
    assert message.startswith("could not fetch train-images-idx3-ubyte.gz from any mirror: http://127.0.0.1:")
    assert message.count("cannot connect") == 2 and "\n" not in message


def test_missing_file_on_the_server(tmp_path):
    routes = good_routes()
    del routes["/files/t10k-labels-idx1-ubyte.gz"]
    with Server(routes) as server:
        with pytest.raises(DataError, match=r"t10k-labels-idx1-ubyte.gz: HTTP 404"):
            run(tmp_path, [server.url], [])


def test_an_html_page_is_not_accepted(tmp_path):
    page = (b"<!DOCTYPE html><p>moved</p>", None)
    with Server(good_routes(**{"train-images-idx3-ubyte": page})) as server:
        with pytest.raises(DataError, match=r"not gzip data \(it starts with b'<!DOCTYPE html><'\); the download was deleted"):
            run(tmp_path, [server.url], [])


def test_files_already_present_are_kept_without_a_connection(tmp_path):
    with Server(good_routes()) as server:
        run(tmp_path, [server.url])
    logs = []
    run(tmp_path, [refused_url()], logs)
    assert len(logs) == 4 and all("already present and verified" in line for line in logs)


def test_a_damaged_existing_file_is_replaced(tmp_path):
    folder = tmp_path / "mnist"
    folder.mkdir()
    (folder / "train-labels-idx1-ubyte").write_bytes(b"\x00\x00\x08\x01garbage")
    logs = []
    with Server(good_routes()) as server:
        run(tmp_path, [server.url], logs)
    assert any("train-labels-idx1-ubyte: " in line and "downloading it again" in line for line in logs)
    assert not (folder / "train-labels-idx1-ubyte").exists()
    assert (folder / "train-labels-idx1-ubyte.gz").is_file()


def recompressed(data: bytes) -> bytes:
    """The same content gzipped with other settings, as a distribution or a mirror might."""
    return gzip.compress(data, compresslevel=1, mtime=12345)


def test_a_file_with_the_published_md5_or_the_decompressed_sha256_is_accepted(tmp_path, monkeypatch):
    published = {s: gzip.compress(d, mtime=0) for s, d in FILES.items()}
    expected = {s: fetch.Expected(len(d), sha256=hashlib.sha256(d).hexdigest(),
                                  gz_md5=hashlib.md5(published[s]).hexdigest()) for s, d in FILES.items()}
    monkeypatch.setitem(fetch.EXPECTED, "fashion_mnist", expected)
    served = {s: published[s] if i % 2 else recompressed(d) for i, (s, d) in enumerate(FILES.items())}
    assert any(hashlib.md5(c).hexdigest() != expected[s].gz_md5 for s, c in served.items())
    with Server({f"/files/{s}.gz": (c, None) for s, c in served.items()}) as server:
        fetch.fetch("fashion_mnist", tmp_path, mirrors=(server.url,), timeout=TIMEOUT)
    assert sorted(p.name for p in (tmp_path / "fashion_mnist").iterdir()) == sorted(f"{s}.gz" for s in STEMS)


def test_a_file_matching_neither_checksum_is_refused(tmp_path, monkeypatch):
    expected = {s: fetch.Expected(len(d), sha256=hashlib.sha256(d).hexdigest(), gz_md5="0" * 32)
                for s, d in FILES.items()}
    expected["t10k-labels-idx1-ubyte"] = fetch.Expected(len(FILES["t10k-labels-idx1-ubyte"]), sha256="1" * 64,
                                                        gz_md5="0" * 32)
    monkeypatch.setitem(fetch.EXPECTED, "fashion_mnist", expected)
    routes = {f"/files/{s}.gz": (recompressed(d), None) for s, d in FILES.items()}
    with Server(routes) as server:
        with pytest.raises(DataError, match=r"t10k-labels-idx1-ubyte.gz: SHA-256 mismatch of the decompressed bytes "
                                            r"\(expected 1{64} nor the published MD5 0{32}, got [0-9a-f]{64}\)"):
            fetch.fetch("fashion_mnist", tmp_path, mirrors=(server.url,), timeout=TIMEOUT)
    assert sorted(p.name for p in (tmp_path / "fashion_mnist").iterdir()) == sorted(f"{s}.gz" for s in STEMS[:3])


def test_unknown_dataset():
    with pytest.raises(DataError, match="fetchable datasets are mnist, fashion_mnist"):
        fetch.fetch("digits")


def test_fashion_mnist_files_have_published_md5s_and_decompressed_sha256s():
    files = fetch.EXPECTED["fashion_mnist"]
    assert set(files) == set(STEMS)
    assert all(len(e.gz_md5) == 32 and len(e.sha256) == 64 for e in files.values())
    assert files["t10k-labels-idx1-ubyte"].sha256.startswith("0402a96d")
