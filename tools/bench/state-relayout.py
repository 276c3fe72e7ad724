#!/usr/bin/env python3
"""Rewrites the documents file of a change state (STATE_DIR/changes/*/meta.json names it) with each
record's fields in the order of their names ("old": as releases before the id and URL were put
first wrote them) or with the id and URL first ("new": as the merge writes them now). Decoding does
not depend on the order, so either is a valid state of the same index; the benchmark of that change
runs the build before on the old order and the build after on the new one, in turns on one state.

    tools/bench/state-relayout.py STATE_DIR old|new [URL_FIELD [ID_FIELD]]   (sku, id)

The format (src/store/changes/state.rs): records `[u32 length][u64 id hash][i64 version][body]`,
the body maybe led by a derived part `[254][u16 length][bytes]`, then per field its place in the
state's fields (or `[255][u16 length][name]`) and its value (src/store/codec.rs).
"""
import glob
import json
import os
import struct
import sys

state, mode = sys.argv[1], sys.argv[2]
url_field = sys.argv[3] if len(sys.argv) > 3 else "sku"
id_field = sys.argv[4] if len(sys.argv) > 4 else "id"
if mode not in ("old", "new"):
    sys.exit("state-relayout.py: the order is old or new, not " + mode)
if url_field == id_field:
    sys.exit("state-relayout.py: the URL field and the id field are one: " + url_field)
metas = glob.glob(os.path.join(state, "changes", "*", "meta.json"))
if len(metas) != 1:
    sys.exit(f"state-relayout.py: {len(metas)} change states in {state}, expected one")
meta = json.load(open(metas[0]))
fields = meta["fields"]
lead = [fields.index(f) for f in (id_field, url_field) if f in fields]


def entries(b):
    """(name, place, bytes) of each field of a record's fields part."""
    i, out = 0, []
    while i < len(b):
        start = i
        place = b[i]
        i += 1
        name = ""
        if place == 255:
            (n,) = struct.unpack_from("<H", b, i)
            name = b[i + 2:i + 2 + n].decode()
            i += 2 + n
            place = fields.index(name) if name in fields else None
        tag = b[i]
        i += 1
        if tag == 3:
            i += 8
        elif tag in (4, 6):
            (n,) = struct.unpack_from("<I", b, i)
            i += 4 + n
        elif tag == 5:
            (n,) = struct.unpack_from("<I", b, i)
            i += 4 + 8 * n
        elif tag not in (0, 1, 2):
            raise ValueError(f"a value with tag {tag}")
        out.append((name or fields[place], place, b[start:i]))
    return out


path = os.path.join(os.path.dirname(metas[0]), meta["docs"])
data = open(path, "rb").read()
out = bytearray()
at = records = moved = 0
while at < len(data):
    (length,) = struct.unpack_from("<I", data, at)
    head, body = data[at:at + 20], data[at + 20:at + 20 + length]
    at += 20 + length
    derived = 0
    if body[:1] == b"\xfe":
        (n,) = struct.unpack_from("<H", body, 1)
        derived = 3 + n
    fields_part = body[derived:]
    es = entries(fields_part)
    if len({e[0] for e in es}) < len(es):
        pass  # a field twice: kept as it is, as the worker keeps it
    elif mode == "old":
        es.sort(key=lambda e: e[0])  # by name, as a document's fields are written
    else:
        es = [e for p in lead for e in es if e[1] == p] + [e for e in es if e[1] not in lead]
    new = b"".join(e[2] for e in es)
    assert len(new) == len(fields_part)
    moved += new != fields_part
    out += head + body[:derived] + new
    records += 1
if records != meta["count"]:
    sys.exit(f"state-relayout.py: {records} records, the state says {meta['count']}")
with open(path + ".tmp", "wb") as f:
    f.write(out)
os.replace(path + ".tmp", path)
print(f"{mode}: {records} records, {moved} reordered")
