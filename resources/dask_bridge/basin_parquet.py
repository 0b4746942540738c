"""A Parquet reader for the Dask bridge with only the standard library and numpy
(Debian's Dask has neither pyarrow nor fastparquet).

Reads flat columns into the bridge's pandas dtypes (basin_types.PANDAS_DTYPES) with the
types Basin's own reader gives (engine/io/parquet_footer.ts columnType): integers as
int64, floats as float64, UTF-8 as string, DATE as date, TIMESTAMP of any unit (and
INT96) as timestamp in µs UTC. Physical types BOOLEAN, INT32, INT64, INT96, FLOAT,
DOUBLE, BYTE_ARRAY; encodings PLAIN, dictionary (PLAIN_/RLE_DICTIONARY), RLE booleans,
BYTE_STREAM_SPLIT and the DELTA ones; data pages v1 and v2; codecs none, SNAPPY
(python3-snappy), GZIP (zlib) and ZSTD (python3-zstandard).

Anything that does not decode is a BridgeError BASIN_IO naming the file, never a
traceback.
"""
import os
import struct
import zlib

import numpy as np
import pandas as pd

from basin_types import DAY_NS, BridgeError, empty_frame


class Corrupt(Exception):
    """What is wrong with the bytes; read() turns it into a BASIN_IO error naming the file."""


def corrupt_error(path, what):
    return BridgeError("BASIN_IO", f"{path} is not a readable Parquet file: {what}; check that the file is Parquet and was written completely")


# --- Thrift compact protocol ----------------------------------------------------------

STOP, TRUE, FALSE, I8, I16, I32, I64, DOUBLE, BINARY, LIST, SET, MAP, STRUCT = range(13)


class Thrift:
    """Decodes compact-protocol structs as {field id: value} dicts."""

    def __init__(self, buf, pos=0, end=None):
        self.b = buf
        self.pos = pos
        self.end = len(buf) if end is None else end

    def byte(self):
        if self.pos >= self.end:
            raise Corrupt("unexpected end of metadata")
        x = self.b[self.pos]
        self.pos += 1
        return x

    def varint(self):
        out = shift = 0
        while True:
            x = self.byte()
            out |= (x & 0x7F) << shift
            if not x & 0x80:
                return out
            shift += 7
            if shift > 70:
                raise Corrupt("a metadata varint is too long")

    def zigzag(self):
        u = self.varint()
        return (u >> 1) ^ -(u & 1)

    def bytes(self, n):
        if n < 0 or self.pos + n > self.end:
            raise Corrupt("unexpected end of metadata")
        out = bytes(self.b[self.pos:self.pos + n])
        self.pos += n
        return out

    def value(self, t, depth, in_list=False):
        if t in (TRUE, FALSE):
            return (self.byte() == TRUE) if in_list else (t == TRUE)
        if t == I8:
            x = self.byte()
            return x - 256 if x > 127 else x
        if t in (I16, I32, I64):
            return self.zigzag()
        if t == DOUBLE:
            return struct.unpack("<d", self.bytes(8))[0]
        if t == BINARY:
            return self.bytes(self.varint())
        if t in (LIST, SET):
            h = self.byte()
            n, et = h >> 4, h & 0x0F
            if n == 15:
                n = self.varint()
            if n > self.end - self.pos:
                raise Corrupt(f"a metadata list claims {n} elements")
            return [self.value(et, depth + 1, True) for _ in range(n)]
        if t == MAP:
            n = self.varint()
            if n == 0:
                return {}
            kv = self.byte()
            if n > self.end - self.pos:
                raise Corrupt(f"a metadata map claims {n} entries")
            return {self.value(kv >> 4, depth + 1, True): self.value(kv & 0x0F, depth + 1, True) for _ in range(n)}
        if t == STRUCT:
            return self.struct(depth + 1)
        raise Corrupt(f"unknown metadata type {t}")

    def struct(self, depth=0):
        if depth > 32:
            raise Corrupt("metadata nested too deeply")
        out, last = {}, 0
        while True:
            h = self.byte()
            if h == STOP:
                return out
            delta, t = h >> 4, h & 0x0F
            last = last + delta if delta else self.zigzag()
            out[last] = self.value(t, depth)


# --- footer ---------------------------------------------------------------------------

PHYSICAL = ["BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"]
CODECS = {0: "UNCOMPRESSED", 1: "SNAPPY", 2: "GZIP", 3: "LZO", 4: "BROTLI", 5: "LZ4", 6: "ZSTD", 7: "LZ4_RAW"}


class Column:
    """A flat column: its physical type, nullability and Basin type (or why it has none)."""

    def __init__(self, el, leaf, nested=False):
        self.name = el.get(4, b"").decode("utf-8", "replace")
        self.leaf = leaf  # its chunk's index in a row group (the first leaf, when nested)
        self.physical = PHYSICAL[el[1]] if 0 <= el.get(1, -1) < len(PHYSICAL) else None
        self.optional = el.get(3, 0) == 1
        self.type, self.unit = ({"unsupported": "nested (struct, list or map)"}, None) if nested else column_type(el, self.physical)


def column_type(el, physical):
    """(Basin type or {"unsupported": why}, timestamp unit) as engine/io/parquet_footer.ts maps them."""
    converted, logical = el.get(6), el.get(10) or {}
    ts = logical.get(8)
    if ts is not None or converted in (9, 10):
        unit = ts.get(2, {}) if ts is not None else {}
        if ts is not None:
            name = "ms" if 1 in unit else "ns" if 3 in unit else "us"
        else:
            name = "ms" if converted == 9 else "us"
        return "timestamp", name
    if 6 in logical or converted == 6:
        return "date", None
    if 5 in logical or converted == 5:
        return {"unsupported": "decimal"}, None
    if 7 in logical or converted in (7, 8):
        return {"unsupported": "time of day"}, None
    it = logical.get(10)
    unsigned = (it is not None and it.get(2) is False) or (converted is not None and 11 <= converted <= 14)
    if physical == "BOOLEAN":
        return "bool", None
    if physical == "INT32":
        return "int64", "unsigned" if unsigned else None
    if physical == "INT64":
        return ({"unsupported": "unsigned 64-bit integer"}, None) if unsigned else ("int64", None)
    if physical == "INT96":
        return "timestamp", "int96"
    if physical in ("FLOAT", "DOUBLE"):
        return "float64", None
    if physical == "BYTE_ARRAY":
        text = converted in (0, 4, 19) or any(k in logical for k in (1, 4, 12))
        return ("string", None) if text else ({"unsupported": "binary"}, None)
    if physical == "FIXED_LEN_BYTE_ARRAY":
        return {"unsupported": "uuid" if 14 in logical else "float16" if 15 in logical else "fixed-length binary"}, None
    return {"unsupported": f"physical type {el.get(1)}"}, None


class Footer:
    """The decoded FileMetaData: columns by name, and each row group's rows and column chunks."""

    def __init__(self, path, size, meta):
        self.path = path
        schema = meta.get(2) or []
        if not schema:
            raise Corrupt("the footer has no schema")
        self.columns = {}
        leaves = 0
        i = 1
        while i < len(schema):
            el = schema[i]
            if el.get(5, 0) > 0 or el.get(3) == 2:  # a group or a repeated leaf: nested
                col = Column(el, leaves, nested=True)
                self.columns[col.name] = col
                pending = el.get(5, 0)
                if pending == 0:
                    leaves += 1
                while pending > 0 and i + 1 < len(schema):
                    i += 1
                    kids = schema[i].get(5, 0)
                    if kids == 0:
                        leaves += 1
                    pending += kids - 1
            else:
                col = Column(el, leaves)
                self.columns[col.name] = col
                leaves += 1
            i += 1
        self.row_groups = []
        for rg in meta.get(4) or []:
            chunks = []
            for cc in rg.get(1) or []:
                md = cc.get(3)
                if md is None:
                    raise Corrupt("a column chunk has no metadata (encrypted or external column chunks are not supported)")
                data, dictionary = md.get(9, 0), md.get(11, 0)
                start = dictionary if 0 < dictionary < data else data
                length = md.get(7, 0)
                if start < 4 or length < 0 or start + length > size:
                    raise Corrupt("a column chunk lies outside the file")
                chunks.append({"start": start, "length": length, "codec": md.get(4, 0)})
            if len(chunks) != leaves:
                raise Corrupt(f"a row group has {len(chunks)} column chunks for {leaves} leaf columns")
            rows = rg.get(3, 0)
            if rows < 0:
                raise Corrupt(f"a row group claims {rows} rows")
            self.row_groups.append({"rows": rows, "chunks": chunks})
        if 3 not in meta or 4 not in meta:
            raise Corrupt("its footer has no row count or no row groups")
        held = sum(g["rows"] for g in self.row_groups)
        if meta[3] != held:
            raise Corrupt(f"it claims {meta[3]} rows but its row groups hold {held}")


_footers = {}


def read_footer(path, f):
    """The footer of the open file `f`, cached per file version."""
    st = os.fstat(f.fileno())
    key = (path, st.st_size, st.st_mtime_ns, st.st_ino)
    hit = _footers.get(key)
    if hit is not None:
        return hit
    size = st.st_size
    if size < 12:
        raise Corrupt(f"it has only {size} bytes")
    head = f.read(4)
    f.seek(size - 8)
    tail = f.read(8)
    if tail[4:] == b"PARE":
        raise Corrupt("the footer is encrypted, which Basin does not read")
    if head != b"PAR1" or tail[4:] != b"PAR1":
        raise Corrupt('it does not start and end with "PAR1"')
    n = struct.unpack("<I", tail[:4])[0]
    if n <= 0 or n > size - 12:
        raise Corrupt(f"the footer length {n} does not fit the file's {size} bytes")
    f.seek(size - 8 - n)
    try:
        meta = Thrift(f.read(n)).struct()
    except Corrupt as e:
        raise Corrupt(f"the footer does not decode ({e})")
    footer = Footer(path, size, meta)
    if len(_footers) > 256:
        _footers.clear()
    _footers[key] = footer
    return footer


# --- codecs ---------------------------------------------------------------------------

def decompress(codec, data, size):
    if codec == 0:
        return data
    if codec == 1:
        try:
            import snappy
        except ImportError:
            raise BridgeError("BASIN_IO", "reading Snappy-compressed Parquet on the Dask workers needs python-snappy: apt-get install python3-snappy (Debian) or pip install python-snappy, on every worker")
        # The block starts with its decompressed length: checked before snappy allocates it.
        claimed, _ = varint_at(data, 0, min(len(data), 10))
        if claimed != size:
            raise Corrupt(f"a Snappy page says it holds {claimed} bytes, its page header {size}")
        try:
            out = snappy.decompress(data)
        except Exception as e:  # python-snappy raises its own error types
            raise Corrupt(f"a Snappy page does not decompress ({e})")
    elif codec == 2:
        try:
            out = zlib.decompressobj(47).decompress(data, size + 1)  # gzip or zlib header; no more than the page
        except zlib.error as e:
            raise Corrupt(f"a GZIP page does not decompress ({e})")
    elif codec == 6:
        try:
            import zstandard
        except ImportError:
            raise BridgeError("BASIN_IO", "reading ZSTD-compressed Parquet on the Dask workers needs zstandard: apt-get install python3-zstandard (Debian) or pip install zstandard, on every worker")
        try:
            with zstandard.ZstdDecompressor().stream_reader(data) as r:  # no more than the page
                out = r.read(size + 1) if size else b""
        except zstandard.ZstdError as e:
            raise Corrupt(f"a ZSTD page does not decompress ({e})")
    else:
        raise Codec(CODECS.get(codec, f"codec {codec}"))
    if len(out) != size:
        raise Corrupt(f"a page decompressed to {len(out)} bytes, not the {size} its header says")
    return out


class Codec(Exception):
    """A compression codec the bridge does not read."""


# --- bit-packed and RLE values --------------------------------------------------------

def unpack(data, width, n):
    """`n` little-endian bit-packed unsigned values of `width` bits (Parquet's order) as int64.

    Values come in groups of 8 that fill exactly `width` bytes, so the j-th value of
    every group sits at the same bits of its group: 8 vectorised steps over the groups.
    """
    if n <= 0 or width == 0:
        return np.zeros(max(n, 0), dtype=np.int64)
    need = (n * width + 7) // 8
    if len(data) < need:
        raise Corrupt("bit-packed values run past the end of their page")
    groups = (n + 7) // 8
    raw = np.frombuffer(data, dtype=np.uint8, count=min(len(data), groups * width))
    if width == 1:
        return np.unpackbits(raw, bitorder="little")[:n].astype(np.int64)
    if width == 8:
        return raw[:n].astype(np.int64)
    if width > 56:
        bits = np.unpackbits(raw, bitorder="little")[: n * width].reshape(n, width).astype(np.uint64)
        vals = np.zeros(n, dtype=np.uint64)
        for k in range(width):
            vals |= bits[:, k] << np.uint64(k)
        return vals.view(np.int64)
    if len(raw) < groups * width:
        raw = np.concatenate([raw, np.zeros(groups * width - len(raw), dtype=np.uint8)])
    g = raw.reshape(groups, width)
    out = np.empty((groups, 8), dtype=np.uint64)
    mask = np.uint64((1 << width) - 1)
    for j in range(8):
        first, shift = divmod(j * width, 8)
        last = (j * width + width - 1) // 8
        v = g[:, first].astype(np.uint64)
        for k in range(first + 1, last + 1):
            v |= g[:, k].astype(np.uint64) << np.uint64(8 * (k - first))
        out[:, j] = (v >> np.uint64(shift)) & mask
    return out.reshape(-1)[:n].view(np.int64)


def varint_at(b, pos, end):
    out = shift = 0
    while True:
        if pos >= end:
            raise Corrupt("a varint runs past the end of its page")
        x = b[pos]
        pos += 1
        out |= (x & 0x7F) << shift
        if not x & 0x80:
            return out, pos
        shift += 7
        if shift > 70:
            raise Corrupt("a varint is too long")


def hybrid(b, pos, end, width, n):
    """`n` values of the RLE / bit-packed hybrid encoding in b[pos:end]: (values, end position).

    Pages often hold thousands of short runs: one Python pass reads the run headers
    only; then all bit-packed runs are unpacked at once (each is whole groups of 8, so
    their bytes concatenate into one group stream) and the RLE runs repeated at once.
    """
    vbytes = (width + 7) // 8
    rle_at, rle_len, rle_val = [], [], []
    bp_at, bp_len, bp_bytes = [], [], []
    got = 0
    while got < n:
        h, pos = varint_at(b, pos, end)
        if h & 1:  # bit-packed groups of 8
            count = (h >> 1) * 8
            nbytes = (h >> 1) * width
            if pos + nbytes > end:  # the last group may be cut short after the values that exist
                nbytes = end - pos
                count = min(count, nbytes * 8 // width if width else count)
            take = min(count, n - got)
            bp_at.append(got)
            bp_len.append(take)
            bp_bytes.append(b[pos:pos + nbytes])
            pos += nbytes
        else:
            count = h >> 1
            if pos + vbytes > end:
                raise Corrupt("an RLE run runs past the end of its page")
            take = min(count, n - got)
            rle_at.append(got)
            rle_len.append(take)
            rle_val.append(int.from_bytes(b[pos:pos + vbytes], "little"))
            pos += vbytes
        if take <= 0:
            raise Corrupt("an RLE run holds no values")
        got += take
    if not bp_at:
        return np.repeat(np.array(rle_val, dtype=np.int64), rle_len), pos
    packed = unpack(b"".join(bp_bytes), width, sum(bp_len))
    if not rle_at:
        return packed, pos
    out = np.empty(n, dtype=np.int64)
    out[ranges(bp_at, bp_len)] = packed
    out[ranges(rle_at, rle_len)] = np.repeat(np.array(rle_val, dtype=np.int64), rle_len)
    return out, pos


def ranges(starts, lengths):
    """The positions starts[i] .. starts[i] + lengths[i] - 1 of every run, concatenated."""
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    before = np.cumsum(lengths) - lengths
    return np.repeat(starts - before, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)


def delta_binary_packed(b, pos, end, limit):
    """At most `limit` DELTA_BINARY_PACKED integers in b[pos:end] as int64 (wrapping as the writer's did): (values, end position)."""
    block, pos = varint_at(b, pos, end)
    minis, pos = varint_at(b, pos, end)
    total, pos = varint_at(b, pos, end)
    if total > limit:
        raise Corrupt(f"a DELTA_BINARY_PACKED run holds {total} values where the page has {limit}")
    first, pos = varint_at(b, pos, end)
    first = (first >> 1) ^ -(first & 1)
    if minis == 0 or block % minis or (block // minis) % 8:
        raise Corrupt("a DELTA_BINARY_PACKED header is inconsistent")
    per = block // minis
    deltas = []
    left = total - 1
    while left > 0:  # every block takes at least 1 + minis bytes, so this ends
        md, pos = varint_at(b, pos, end)
        md = (md >> 1) ^ -(md & 1)
        if pos + minis > end:
            raise Corrupt("a DELTA_BINARY_PACKED block runs past the end of its page")
        widths = b[pos:pos + minis]
        pos += minis
        for w in widths:
            if left <= 0:
                break
            if w > 64:
                raise Corrupt(f"a DELTA_BINARY_PACKED miniblock has width {w}")
            nbytes = per * w // 8
            take = min(per, left)
            deltas.append(unpack(b[pos:pos + nbytes], w, take) + np.int64(wrap64(md)))
            pos += nbytes
            left -= take
    vals = np.empty(max(total, 0), dtype=np.int64)
    if total:
        vals[0] = wrap64(first)
        if deltas:
            vals[1:] = np.cumsum(np.concatenate(deltas)) + vals[0]
    return vals, pos


def wrap64(v):
    return ((v + (1 << 63)) % (1 << 64)) - (1 << 63)


# --- values ---------------------------------------------------------------------------

FIXED = {"INT32": "<i4", "INT64": "<i8", "FLOAT": "<f4", "DOUBLE": "<f8"}


def plain_bytes(b, pos, end, n):
    """`n` PLAIN BYTE_ARRAY values (4-byte length, then the bytes) as a list of bytes."""
    out = []
    unpack_from = struct.unpack_from
    for _ in range(n):
        if pos + 4 > end:
            raise Corrupt("a string value runs past the end of its page")
        k = unpack_from("<i", b, pos)[0]
        pos += 4
        if k < 0 or pos + k > end:
            raise Corrupt("a string value runs past the end of its page")
        out.append(b[pos:pos + k])
        pos += k
    return out


def plain(physical, b, pos, end, n):
    """`n` PLAIN values: a numpy array (INT96 as its 12 raw bytes per row) or a list of bytes."""
    if physical == "BYTE_ARRAY":
        return plain_bytes(b, pos, end, n)
    if physical == "BOOLEAN":
        if pos + (n + 7) // 8 > end:
            raise Corrupt("boolean values run past the end of their page")
        return unpack(b[pos:end], 1, n).astype(bool)
    if physical == "INT96":
        if pos + 12 * n > end:
            raise Corrupt("INT96 values run past the end of their page")
        return np.frombuffer(b, dtype=np.uint8, count=12 * n, offset=pos).reshape(n, 12)
    dt = FIXED.get(physical)
    if dt is None:
        raise Corrupt(f"physical type {physical} cannot be read")
    size = np.dtype(dt).itemsize
    if pos + size * n > end:
        raise Corrupt(f"{physical} values run past the end of their page")
    return np.frombuffer(b, dtype=dt, count=n, offset=pos)


def byte_stream_split(physical, b, pos, end, n):
    dt = FIXED.get(physical)
    if dt is None:
        raise Corrupt(f"BYTE_STREAM_SPLIT is not defined for {physical}")
    size = np.dtype(dt).itemsize
    if pos + size * n > end:
        raise Corrupt("BYTE_STREAM_SPLIT values run past the end of their page")
    streams = np.frombuffer(b, dtype=np.uint8, count=size * n, offset=pos).reshape(size, n)
    return np.ascontiguousarray(streams.T).view(dt).reshape(n)


def delta_length(b, pos, end, n):
    lengths, pos = delta_binary_packed(b, pos, end, n)
    if len(lengths) < n or (n and lengths[:n].min() < 0):
        raise Corrupt("DELTA_LENGTH_BYTE_ARRAY lengths do not match the page")
    stops = pos + np.cumsum(lengths[:n])
    if n and stops[-1] > end:
        raise Corrupt("DELTA_LENGTH_BYTE_ARRAY values run past the end of their page")
    starts = stops - lengths[:n]
    return [b[s:e] for s, e in zip(starts.tolist(), stops.tolist())], (int(stops[-1]) if n else pos)


def delta_bytes(b, pos, end, n):
    prefixes, pos = delta_binary_packed(b, pos, end, n)
    suffixes, _ = delta_length(b, pos, end, n)
    if len(prefixes) < n:
        raise Corrupt("DELTA_BYTE_ARRAY prefixes do not match the page")
    out, prev = [], b""
    for p, s in zip(prefixes[:n].tolist(), suffixes):
        if p < 0 or p > len(prev):
            raise Corrupt("a DELTA_BYTE_ARRAY prefix is longer than the value before it")
        prev = bytes(prev[:p]) + bytes(s)
        out.append(prev)
    return out


def decode_values(col, enc, b, pos, end, n, dictionary):
    """The page's `n` non-null values in the Basin type's form (finish_values)."""
    if enc in (2, 8):
        return dictionary_values(b, pos, end, n, dictionary)
    return finish_values(col, physical_values(col, enc, b, pos, end, n))


def dictionary_values(b, pos, end, n, dictionary):
    """Values looked up in the (finished) dictionary by bit-packed / RLE indices."""
    if dictionary is None:
        raise Corrupt("a dictionary-encoded page comes without a dictionary page")
    if n == 0:
        return dictionary[:0]
    if pos >= end:
        raise Corrupt("a dictionary-encoded page is empty")
    width = b[pos]
    if width > 32:
        raise Corrupt(f"dictionary indices of {width} bits")
    idx, _ = hybrid(b, pos + 1, end, width, n)
    if idx.max() >= len(dictionary):
        raise Corrupt(f"a dictionary index ({int(idx.max())}) is beyond the dictionary's {len(dictionary)} values")
    return dictionary[idx]


def physical_values(col, enc, b, pos, end, n):
    """`n` values of a non-dictionary encoding, as plain() gives them."""
    if enc == 0:
        return plain(col.physical, b, pos, end, n)
    if enc == 3 and col.physical == "BOOLEAN":
        if pos + 4 > end:
            raise Corrupt("RLE booleans run past the end of their page")
        k = struct.unpack_from("<i", b, pos)[0]
        v, _ = hybrid(b, pos + 4, min(end, pos + 4 + k), 1, n)
        return v.astype(bool)
    if enc == 9:
        return byte_stream_split(col.physical, b, pos, end, n)
    if enc == 5 and col.physical in ("INT32", "INT64"):
        v, _ = delta_binary_packed(b, pos, end, n)
        if len(v) < n:
            raise Corrupt("a DELTA_BINARY_PACKED page holds fewer values than its header says")
        return v[:n].astype(np.int32) if col.physical == "INT32" else v[:n]
    if enc == 6 and col.physical == "BYTE_ARRAY":
        return delta_length(b, pos, end, n)[0]
    if enc == 7 and col.physical == "BYTE_ARRAY":
        return delta_bytes(b, pos, end, n)
    raise Corrupt(f"column \"{col.name}\" uses encoding {ENCODINGS.get(enc, enc)}, which the Dask bridge does not read for {col.physical}")


ENCODINGS = {0: "PLAIN", 2: "PLAIN_DICTIONARY", 3: "RLE", 4: "BIT_PACKED", 5: "DELTA_BINARY_PACKED", 6: "DELTA_LENGTH_BYTE_ARRAY", 7: "DELTA_BYTE_ARRAY", 8: "RLE_DICTIONARY", 9: "BYTE_STREAM_SPLIT"}


NS_MAX = 2**63 - 1


class OutOfRange(Exception):
    """Values the bridge's pandas columns cannot hold; read() names the file."""


def in_range(col, vals, limit):
    """`vals` when they all lie within ±limit (dates and timestamps as pandas' nanoseconds hold them)."""
    if len(vals) and (vals.min() < -limit or vals.max() > limit):
        raise OutOfRange(f'column "{col.name}" holds a {col.type} outside 1677-09-22 … 2262-04-11, which the Dask bridge cannot hold (pandas keeps nanoseconds); filter those rows out when writing the file, or run this pipeline on the local cluster')
    return vals


def finish_values(col, vals):
    """Physical values in the Basin type's numpy form: int64 (dates and timestamps as
    datetime64[ns] ticks), float64, bool, or str objects."""
    t, phys = col.type, col.physical
    if phys == "BYTE_ARRAY":
        out = np.empty(len(vals), dtype=object)
        try:
            out[:] = [bytes(v).decode("utf-8") for v in vals]
        except UnicodeDecodeError:
            raise Corrupt(f'column "{col.name}" holds a string that is not valid UTF-8')
        return out
    if phys == "BOOLEAN":
        return np.asarray(vals, dtype=bool)
    if phys in ("FLOAT", "DOUBLE"):
        return vals.astype(np.float64)
    if phys == "INT96":  # nanoseconds of the day, then the Julian day
        nanos = np.ascontiguousarray(vals[:, :8]).view("<i8").reshape(-1)
        days = np.ascontiguousarray(vals[:, 8:]).view("<i4").reshape(-1).astype(np.int64)
        in_range(col, days - 2440588, NS_MAX // DAY_NS - 1)
        return ((days - 2440588) * DAY_NS + nanos) // 1000 * 1000
    vals = vals.astype(np.int64)
    if t == "timestamp":  # to microseconds (nanoseconds rounded towards minus infinity), held as ns
        if col.unit in ("ms", "us"):
            in_range(col, vals, NS_MAX // (1_000_000 if col.unit == "ms" else 1000))
        return vals * 1_000_000 if col.unit == "ms" else vals * 1000 if col.unit == "us" else vals // 1000 * 1000
    if t == "date":
        return in_range(col, vals, NS_MAX // DAY_NS) * DAY_NS
    if col.unit == "unsigned":
        return vals.astype(np.int32).view(np.uint32).astype(np.int64)
    return vals


# --- pages of one column chunk --------------------------------------------------------

def check_count(n, left, col):
    """A data page's value count, which must fit in what is left of its row group."""
    if not 0 <= n <= left:
        raise Corrupt(f'a page of column "{col.name}" holds {n} values, but {left} are left in its row group')
    return n


def read_chunk(col, chunk, f, rows):
    """The chunk's `rows` values (numpy, in the Basin type's form) and validity (bool array, or None when none are null)."""
    f.seek(chunk["start"])
    b = f.read(chunk["length"])
    if len(b) != chunk["length"]:
        raise Corrupt("a column chunk lies outside the file")
    pos, end = 0, len(b)
    codec = chunk["codec"]
    dictionary = None
    values, levels = [], []
    got = 0
    while got < rows:
        if pos >= end:
            raise Corrupt(f'column "{col.name}" ends after {got} of its {rows} values')
        th = Thrift(b, pos, end)
        header = th.struct()
        pos = th.pos
        kind, raw_size, size = header.get(1), header.get(2, -1), header.get(3, -1)
        if size < 0 or raw_size < 0 or pos + size > end:
            raise Corrupt(f'a page of column "{col.name}" runs past the end of its column chunk')
        body = b[pos:pos + size]
        pos += size
        if kind == 2:  # dictionary page
            dh = header.get(7) or {}
            n = dh.get(1, 0)
            if dh.get(2, 0) not in (0, 2):
                raise Corrupt(f"a dictionary page uses encoding {ENCODINGS.get(dh.get(2), dh.get(2))}")
            page = decompress(codec, body, raw_size)
            dictionary = finish_values(col, plain(col.physical, page, 0, len(page), n))
            continue
        if kind == 0:
            dh = header.get(5) or {}
            n = check_count(dh.get(1, 0), rows - got, col)
            page = decompress(codec, body, raw_size)
            p = 0
            valid = None
            if col.optional:
                if dh.get(3, 3) == 4:  # the deprecated BIT_PACKED levels: MSB first, no length
                    nbytes = (n + 7) // 8
                    valid = np.unpackbits(np.frombuffer(page, dtype=np.uint8, count=nbytes), bitorder="big")[:n].astype(bool)
                    p = nbytes
                else:
                    if len(page) < 4:
                        raise Corrupt("a page's definition levels run past its end")
                    k = struct.unpack_from("<i", page, 0)[0]
                    if k < 0 or 4 + k > len(page):
                        raise Corrupt("a page's definition levels run past its end")
                    lv, _ = hybrid(page, 4, 4 + k, 1, n)
                    valid = lv.astype(bool)
                    p = 4 + k
            enc = dh.get(2, 0)
            present = n if valid is None else int(valid.sum())
            vals = decode_values(col, enc, page, p, len(page), present, dictionary)
        elif kind == 3:
            dh = header.get(8) or {}
            n, nulls, enc = check_count(dh.get(1, 0), rows - got, col), dh.get(2, 0), dh.get(4, 0)
            if not 0 <= nulls <= n:
                raise Corrupt(f"a page says it has {nulls} nulls among {n} values")
            dl, rl = dh.get(5, 0), dh.get(6, 0)
            if rl != 0 and rl is not None:
                raise Corrupt(f'column "{col.name}" has repetition levels (a nested column)')
            if dl < 0 or dl > size:
                raise Corrupt("a page's definition levels run past its end")
            valid = None
            if col.optional and dl:
                lv, _ = hybrid(body, 0, dl, 1, n)
                valid = lv.astype(bool)
                if int(n - valid.sum()) != nulls:
                    raise Corrupt(f"a page says it has {nulls} nulls but its levels have {int(n - valid.sum())}")
            elif nulls:
                raise Corrupt(f"a page says it has {nulls} nulls but has no definition levels")
            rest = body[dl:]
            page = decompress(codec, rest, raw_size - dl) if dh.get(7, True) else rest
            present = n - nulls
            vals = decode_values(col, enc, page, 0, len(page), present, dictionary)
        else:
            continue  # index pages and unknown pages carry no values
        if n <= 0:
            continue
        values.append(vals)
        levels.append(valid if valid is not None else np.ones(n, dtype=bool))
        got += n
    if got != rows:
        raise Corrupt(f'column "{col.name}" has {got} values in a row group of {rows} rows')
    vals = np.concatenate(values) if len(values) != 1 else values[0]
    valid = np.concatenate(levels) if len(levels) != 1 else levels[0]
    return vals, (None if valid.all() else valid)


def to_series(t, vals, valid, n):
    """A pandas Series of Basin type `t` from the non-null values and the validity."""
    if valid is not None:
        full = np.zeros(n, dtype=vals.dtype) if vals.dtype != object else np.full(n, None, dtype=object)
        full[valid] = vals
        vals = full
    mask = None if valid is None else ~valid
    if t == "int64":
        return pd.Series(pd.arrays.IntegerArray(vals.astype(np.int64), np.zeros(n, dtype=bool) if mask is None else mask))
    if t == "float64":
        return pd.Series(pd.arrays.FloatingArray(vals.astype(np.float64), np.zeros(n, dtype=bool) if mask is None else mask))
    if t == "bool":
        return pd.Series(pd.arrays.BooleanArray(vals.astype(bool), np.zeros(n, dtype=bool) if mask is None else mask))
    if t in ("date", "timestamp"):
        ns = vals.astype(np.int64)
        if mask is not None:
            ns = np.where(mask, np.iinfo(np.int64).min, ns)
        return pd.Series(ns.view("datetime64[ns]"))
    return pd.Series(pd.array(vals, dtype="string"))


# --- reading --------------------------------------------------------------------------

def read(path, groups, fields):
    """Row groups `groups` of the file, columns `fields` ([{name, type}] as the plan has them), as one frame."""
    try:
        with open(path, "rb") as f:
            try:
                footer = read_footer(path, f)
                return read_groups(footer, f, groups, fields)
            except Corrupt as e:
                raise corrupt_error(path, str(e))
            except OutOfRange as e:
                raise BridgeError("BASIN_IO", f"{path}: {e}")
            except Codec as e:
                raise BridgeError("BASIN_IO", f"{path} is compressed with {e}, which the Dask bridge does not read (it reads uncompressed, SNAPPY, GZIP and ZSTD); rewrite the file with one of those, or run this pipeline on the local cluster")
            except (ValueError, IndexError, TypeError, OverflowError, MemoryError, struct.error) as e:
                raise corrupt_error(path, f"its data does not decode ({type(e).__name__}: {e})")
    except FileNotFoundError:
        raise BridgeError("BASIN_IO", f"{path} does not exist on the Dask workers; put the data where every worker can read it (a shared file system)")
    except IsADirectoryError:
        raise BridgeError("BASIN_IO", f"{path} is a folder, not a Parquet file")
    except PermissionError:
        raise BridgeError("BASIN_IO", f"{path} cannot be read by the Dask workers (permission denied)")
    except OSError as e:
        raise BridgeError("BASIN_IO", f"{path} cannot be read by the Dask workers ({e.strerror or e})")


def read_groups(footer, f, groups, fields):
    cols = []
    for fl in fields:
        col = footer.columns.get(fl["name"])
        if col is None:
            raise BridgeError("BASIN_IO", f'{footer.path} has no column "{fl["name"]}" (it changed since the pipeline was planned?); the columns are: {", ".join(footer.columns)}')
        if col.type != fl["type"]:
            what = col.type["unsupported"] if isinstance(col.type, dict) else col.type
            raise BridgeError("BASIN_IO", f'{footer.path}: column "{col.name}" is {what} in the file but {fl["type"]} in the plan (did the file change since the pipeline was planned?)')
        cols.append(col)
    for g in groups:
        if g < 0 or g >= len(footer.row_groups):
            raise BridgeError("BASIN_IO", f"{footer.path} has {len(footer.row_groups)} row groups, not {g + 1}; did the file change while the pipeline ran?")
    if not groups:
        return empty_frame(fields)
    rows = sum(footer.row_groups[g]["rows"] for g in groups)
    if not fields:
        return pd.DataFrame(index=range(rows))
    out = {}
    for fl, col in zip(fields, cols):
        pieces = []
        for g in groups:
            rg = footer.row_groups[g]
            vals, valid = read_chunk(col, rg["chunks"][col.leaf], f, rg["rows"])
            pieces.append(to_series(fl["type"], vals, valid, rg["rows"]))
        out[fl["name"]] = pd.concat(pieces, ignore_index=True) if len(pieces) != 1 else pieces[0]
    return pd.DataFrame(out, copy=False)
