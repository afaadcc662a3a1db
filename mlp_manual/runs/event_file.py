"""TensorBoard's event file format, written in plain Python: records framed as TFRecord frames
them, each an ``Event`` protocol buffer encoded by hand.

The format. An event file is a sequence of records, each framed as TFRecord frames them: the
data's length (8 bytes, little-endian), a masked CRC-32C of those 8 bytes, the data, a masked
CRC-32C of the data. Each record's data is one ``Event`` protocol buffer; the fields used here,
with their numbers (tensorflow/core/util/event.proto, summary.proto, and TensorBoard's
plugins/hparams/plugin_data.proto)::

    Event            { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }
    Summary          { repeated Value value = 1; }
    Value            { string tag = 1; float simple_value = 2; TensorProto tensor = 8;
                       SummaryMetadata metadata = 9; }
    SummaryMetadata  { PluginData plugin_data = 1; }
    PluginData       { string plugin_name = 1; bytes content = 2; }
    HParamsPluginData { int32 version = 1; SessionStartInfo session_start_info = 3; SessionEndInfo session_end_info = 4; }
    SessionStartInfo { map<string, google.protobuf.Value> hparams = 1; double start_time_secs = 5; }
    SessionEndInfo   { Status status = 1; double end_time_secs = 2; }
    google.protobuf.Value { double number_value = 2; string string_value = 3; bool bool_value = 4; }
"""

import struct

from ..results.compare import compact

# A field is its key, varint(number << 3 | wire type), then its value: wire type 0 a varint,
# 1 eight bytes (double), 2 a varint length and that many bytes (string, bytes, message),
# 5 four bytes (float).


def varint(n: int) -> bytes:
    """An unsigned varint; a negative int64 as its 64-bit two's complement (ten bytes)."""
    if 0 <= n < 0x80:
        return SMALL_VARINTS[n]
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


SMALL_VARINTS = [bytes((n,)) for n in range(0x80)]


def field_varint(number: int, n: int) -> bytes:
    return varint(number << 3) + varint(n)


def field_double(number: int, x: float) -> bytes:
    return varint(number << 3 | 1) + struct.pack("<d", x)


FLOAT32_MAX = 3.4028234663852886e38


def field_float(number: int, x: float) -> bytes:
    """A float field; a finite value beyond float32's range becomes an infinity of its sign."""
    if abs(x) > FLOAT32_MAX and abs(x) != float("inf") and x == x:
        x = float("inf") if x > 0 else float("-inf")
    return varint(number << 3 | 5) + struct.pack("<f", x)


def field_bytes(number: int, data: bytes | str) -> bytes:
    data = data.encode() if isinstance(data, str) else data
    return varint(number << 3 | 2) + varint(len(data)) + data


# ---------------------------------------------------------------- TFRecord framing

def _crc32c_table() -> list[int]:
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1  # the Castagnoli polynomial, reflected
        table.append(c)
    return table


CRC32C_TABLE = _crc32c_table()


def crc32c(data: bytes) -> int:
    crc = 0xFFFFFFFF
    for byte in data:
        crc = CRC32C_TABLE[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc(data: bytes) -> int:
    """TFRecord's checksum: CRC-32C rotated right by 15 bits, plus a constant."""
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def record(data: bytes) -> bytes:
    length = struct.pack("<Q", len(data))
    return length + struct.pack("<I", masked_crc(length)) + data + struct.pack("<I", masked_crc(data))


# ---------------------------------------------------------------- events

def event(wall_time: float, step: int, summary: bytes = b"", file_version: str | None = None) -> bytes:
    """One framed Event: a summary (a serialized Summary), or the file's version line."""
    body = field_double(1, wall_time) + field_varint(2, step)
    body += field_bytes(3, file_version) if file_version is not None else field_bytes(5, summary)
    return record(body)


def scalars(values: dict[str, float]) -> bytes:
    """A Summary of one scalar per tag; a missing or non-numeric value is left out."""
    return b"".join(field_bytes(1, field_bytes(1, tag) + field_float(2, float(v))) for tag, v in values.items()
                    if isinstance(v, (int, float)) and not isinstance(v, bool))


HPARAMS_PLUGIN = "hparams"
# DT_FLOAT of shape [0]: the tensor TensorBoard's own hparams writer attaches
NULL_TENSOR = field_varint(1, 1) + field_bytes(2, field_bytes(2, b""))


def hparams_summary(tag: str, plugin_data: bytes) -> bytes:
    """A Summary holding HParamsPluginData (version 0) under ``tag``."""
    content = field_varint(1, 0) + plugin_data
    metadata = field_bytes(1, field_bytes(1, HPARAMS_PLUGIN) + field_bytes(2, content))
    return field_bytes(1, field_bytes(1, tag) + field_bytes(9, metadata) + field_bytes(8, NULL_TENSOR))


def protobuf_value(v) -> bytes:
    """A google.protobuf.Value: a bool, a number, or anything else in words (``compact``)."""
    if isinstance(v, bool):
        return field_varint(4, int(v))
    if isinstance(v, (int, float)):
        return field_double(2, float(v))
    return field_bytes(3, compact(v))


def session_start(hparams: dict, start_time: float) -> bytes:
    entries = b"".join(field_bytes(1, field_bytes(1, k) + field_bytes(2, protobuf_value(v)))
                       for k, v in sorted(hparams.items()) if v is not None)
    return hparams_summary("_hparams_/session_start_info", field_bytes(3, entries + field_double(5, start_time)))


# TensorBoard's hparams Status: a run's status in summary.json -> STATUS_SUCCESS 1, FAILURE 2, UNKNOWN 0
END_STATUS = {"completed": 1, "stopped_early": 1, "diverged": 2}


def session_end(status: str, end_time: float) -> bytes:
    body = field_varint(1, END_STATUS.get(status, 0)) + field_double(2, end_time)
    return hparams_summary("_hparams_/session_end_info", field_bytes(4, body))
