import gzip
import tracemalloc
import zlib

import numpy as np
import pytest
from datafiles import idx_bytes

from mlp_manual.datasets.idx import parse_idx, read_idx, read_images_labels
from mlp_manual.errors import DataError


@pytest.fixture
def images():
    return np.arange(3 * 4 * 5, dtype=np.uint8).reshape(3, 4, 5)


def write(path, data: bytes, gz: bool = False):
    path.write_bytes(gzip.compress(data) if gz else data)
    return path


@pytest.mark.parametrize("gz", [False, True])
def test_reads_plain_and_gzipped_files(tmp_path, images, gz):
    out = read_idx(write(tmp_path / "images", idx_bytes(images), gz))
    assert out.dtype == np.uint8 and out.shape == (3, 4, 5)
    np.testing.assert_array_equal(out, images)


@pytest.mark.parametrize("code, dtype", [(0x09, np.int8), (0x0B, np.int16), (0x0C, np.int32),
                                         (0x0D, np.float32), (0x0E, np.float64)])
def test_other_type_codes_come_back_in_native_byte_order(code, dtype):
    values = np.array([[-3, 0, 7], [1, 2, -1]], dtype=dtype)
    out = parse_idx(idx_bytes(values, code))
    assert out.dtype == np.dtype(dtype) and out.dtype.isnative
    np.testing.assert_array_equal(out, values)


def test_missing_file(tmp_path):
    with pytest.raises(DataError, match="absent: no such file"):
        read_idx(tmp_path / "absent")


def test_bad_magic_names_the_file(tmp_path, images):
    path = write(tmp_path / "bad-magic", b"\x01\x02" + idx_bytes(images)[2:])
    with pytest.raises(DataError, match=r"bad-magic: not an IDX file \(magic number starts 01 02"):
        read_idx(path)


def test_unknown_type_code(tmp_path, images):
    data = bytearray(idx_bytes(images))
    data[2] = 0x0A
    with pytest.raises(DataError, match=r"code: unknown IDX type code 0x0A"):
        read_idx(write(tmp_path / "code", bytes(data)))


def test_too_short_for_magic(tmp_path):
    with pytest.raises(DataError, match="tiny: not an IDX file"):
        read_idx(write(tmp_path / "tiny", b"\x00\x00"))


def test_zero_dimensions(tmp_path):
    with pytest.raises(DataError, match="zero: IDX header declares 0 dimensions"):
        read_idx(write(tmp_path / "zero", bytes([0, 0, 8, 0])))


def test_truncated_header(tmp_path, images):
    with pytest.raises(DataError, match="head: truncated IDX header"):
        read_idx(write(tmp_path / "head", idx_bytes(images)[:10]))


@pytest.mark.parametrize("gz", [False, True])
def test_truncated_data(tmp_path, images, gz):
    path = write(tmp_path / "short", idx_bytes(images)[:-7], gz)
    with pytest.raises(DataError, match=r"short: truncated IDX data: shape \(3, 4, 5\) needs 76 bytes, the file has 69"):
        read_idx(path)


def test_trailing_bytes(tmp_path, images):
    path = write(tmp_path / "long", idx_bytes(images) + b"junk")
    with pytest.raises(DataError, match=r"long: 4 unexpected bytes after the IDX data"):
        read_idx(path)


def test_damaged_gzip(tmp_path, images):
    path = write(tmp_path / "cut.gz", gzip.compress(idx_bytes(images))[:-12])
    with pytest.raises(DataError, match=r"cut.gz: damaged gzip data"):
        read_idx(path)


def test_images_and_labels_must_agree_in_count(tmp_path, images):
    imgs = write(tmp_path / "imgs", idx_bytes(images))
    labels = write(tmp_path / "labs", idx_bytes(np.array([1, 2], dtype=np.uint8)))
    with pytest.raises(DataError, match=r"imgs holds 3 images but .*labs holds 2 labels"):
        read_images_labels(imgs, labels)


def test_images_must_be_bytes(tmp_path, images):
    imgs = write(tmp_path / "imgs", idx_bytes(images, 0x0C))
    labels = write(tmp_path / "labs", idx_bytes(np.arange(3, dtype=np.uint8)))
    with pytest.raises(DataError, match=r"imgs: expected unsigned bytes \(IDX type 0x08\), found int32"):
        read_images_labels(imgs, labels)


def test_labels_must_be_one_dimensional(tmp_path, images):
    imgs = write(tmp_path / "imgs", idx_bytes(images))
    labels = write(tmp_path / "labs", idx_bytes(np.zeros((3, 1), dtype=np.uint8)))
    with pytest.raises(DataError, match=r"labs: expected 1-dimensional labels"):
        read_images_labels(imgs, labels)


def test_pair_reads_back(tmp_path, images):
    labels = np.array([7, 0, 9], dtype=np.uint8)
    x, y = read_images_labels(write(tmp_path / "i.gz", idx_bytes(images), gz=True), write(tmp_path / "l", idx_bytes(labels)))
    np.testing.assert_array_equal(x, images)
    np.testing.assert_array_equal(y, labels)


def gzip_of_zeros(path, header: bytes, zero_bytes: int):
    """A small gzip file: ``header`` followed by ``zero_bytes`` zeros, compressed in chunks."""
    z = zlib.compressobj(9, zlib.DEFLATED, 31)  # 31: gzip container
    chunk = bytes(1 << 20)
    parts = [z.compress(header)]
    for _ in range(zero_bytes // len(chunk)):
        parts.append(z.compress(chunk))
    parts.append(z.flush())
    path.write_bytes(b"".join(parts))
    return path


def test_a_gzip_of_zeros_is_read_only_as_far_as_its_header_announces(tmp_path):
    # 10 images of 28x28 announced, 256 MiB of zeros behind them in a file of about 250 KiB
    path = gzip_of_zeros(tmp_path / "bomb.gz", bytes([0, 0, 8, 3, 0, 0, 0, 10, 0, 0, 0, 28, 0, 0, 0, 28]), 256 << 20)
    assert path.stat().st_size < 1 << 20
    tracemalloc.start()
    with pytest.raises(DataError, match="bomb.gz: some unexpected bytes after the IDX data of shape"):
        read_idx(path)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 8 << 20, f"peak {peak / 2**20:.1f} MiB"


def test_a_header_announcing_more_than_the_limit_is_refused_before_reading(tmp_path):
    path = gzip_of_zeros(tmp_path / "huge.gz", bytes([0, 0, 8, 3, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0]), 1 << 20)
    with pytest.raises(DataError, match=r"huge.gz: the IDX header announces shape \(65536, 65536, 256\), "
                                        r"1,099,511,627,776 bytes of data, more than this reader accepts"):
        read_idx(path)


@pytest.mark.parametrize("shape", [(0, 28, 28), (10, 0, 28), (0,)])
def test_a_header_announcing_no_values_is_refused(tmp_path, shape):
    header = bytes([0, 0, 8, len(shape)]) + b"".join(s.to_bytes(4, "big") for s in shape)
    path = write(tmp_path / "empty", header)
    with pytest.raises(DataError, match=rf"empty: the IDX header announces shape \({shape[0]},.*which holds no values"):
        read_idx(path)
