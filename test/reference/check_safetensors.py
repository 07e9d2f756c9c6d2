#!/usr/bin/python3
"""Checks metart's safetensors files against a reader and a writer written here.

safetensors files are what PyTorch users exchange parameters in, so the
runtime's must be the format exactly. Debian's python3 has no `safetensors`
package; this script holds a small reader and writer of the format (the
8-byte little-endian header length, the JSON header, the data section) and
checks, through `metart-safetensors-tool` (runtime/test/data/), that:

1. a file the runtime writes parses here and is laid out as the reference
   implementation lays it out: the header padded with spaces to a multiple
   of 8 bytes, tensors ordered by decreasing dtype (I64, F64, F32, I32) and
   then by name,
   each entry's keys in the order dtype, shape, data_offsets, the data
   contiguous and in the same order, the values exact;
2. a file written here in another layout (metadata, unsorted names with
   escaped Unicode, offsets out of key order, an unpadded header leaving the
   data misaligned, a 0-d and an empty tensor) reads back exactly through
   the runtime;
3. the runtime refuses a truncated file with a message naming it;
4. where the reference implementation's Python package (`safetensors`, with
   numpy) can be imported, as in a virtual environment with both, the
   runtime's file is byte for byte the file it writes for the same tensors.

Run with /usr/bin/python3 (the standard library suffices for 1-3):
    check_safetensors.py [--tool build/bin/metart-safetensors-tool]
"""

import argparse
import json
import math
import pathlib
import struct
import subprocess
import sys
import tempfile

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]

# dtype -> (struct format character, element size)
FORMATS = {"F32": ("f", 4), "F64": ("d", 8), "I32": ("i", 4), "I64": ("q", 8)}
# The reference implementation writes tensors by decreasing dtype in the
# order of its Dtype enum (... I32, U32, F32, C64, F64, I64, U64), then name.
DTYPE_ORDER = {"I32": 0, "F32": 1, "F64": 2, "I64": 3}

# What `metart-safetensors-tool write` writes: name -> (dtype, shape, values).
FIXED = {
    "fc1.weight": ("F32", [3, 4], [(j - 5) * 0.25 for j in range(12)]),
    "fc1.bias": ("F64", [4], [1.0 / (j + 3.0) for j in range(4)]),
    "step": ("I64", [], [123456789012345]),
    "labels": ("I32", [2, 3], [j * j - 7 for j in range(6)]),
    "empty": ("F32", [0, 5], []),
    "z.last": ("F64", [1, 1, 1], [6.02214076e23]),
}


def fail(message):
    sys.exit(f"check_safetensors.py: FAIL: {message}")


def read_safetensors(path):
    """Parses a file: (header length, header dict, data section, tensors as
    name -> (dtype, shape, values)), checking the format's rules."""
    data = path.read_bytes()
    if len(data) < 8:
        fail(f"{path}: shorter than 8 bytes")
    (length,) = struct.unpack("<Q", data[:8])
    if 8 + length > len(data):
        fail(f"{path}: header length {length} past the end")
    header_text = data[8 : 8 + length].decode("utf-8")
    header = json.loads(header_text, object_pairs_hook=dict)
    body = data[8 + length :]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype, shape = info["dtype"], info["shape"]
        begin, end = info["data_offsets"]
        fmt, size = FORMATS[dtype]
        count = math.prod(shape)
        if end - begin != count * size or end > len(body):
            fail(f"{path}: tensor {name}: offsets {begin, end} for {shape}")
        values = list(struct.unpack(f"<{count}{fmt}", body[begin:end]))
        tensors[name] = (dtype, shape, values)
    return length, header_text, header, body, tensors


def write_safetensors(path, entries, metadata):
    """Writes `entries` [(name, dtype, shape, values)] with the header keys in
    the given order, the data in reverse order and no header padding."""
    blobs = {}
    for name, dtype, shape, values in entries:
        fmt, _ = FORMATS[dtype]
        blobs[name] = struct.pack(f"<{len(values)}{fmt}", *values)
    offsets, position = {}, 0
    for name, *_ in reversed(entries):
        offsets[name] = [position, position + len(blobs[name])]
        position += len(blobs[name])
    header = {"__metadata__": metadata}
    for name, dtype, shape, _ in entries:
        header[name] = {"data_offsets": offsets[name], "shape": shape,
                        "dtype": dtype}
    text = json.dumps(header, ensure_ascii=True).encode("utf-8")
    if (8 + len(text)) % 8 == 0:
        text += b" "  # misalign every tensor
    body = b"".join(blobs[name] for name, *_ in reversed(entries))
    path.write_bytes(struct.pack("<Q", len(text)) + text + body)


def check_runtime_file(tool, path):
    subprocess.run([tool, "write", str(path)], check=True)
    if path.with_name(path.name + ".tmp").exists():
        fail("the temporary file is left behind")
    length, text, header, body, tensors = read_safetensors(path)
    if length % 8 != 0:
        fail(f"header length {length} is not a multiple of 8")
    if not text.rstrip(" ").endswith("}"):
        fail("the header is padded with something other than spaces")
    if "__metadata__" in header:
        fail("the runtime wrote metadata it was not given")
    expected_order = sorted(
        FIXED, key=lambda name: (-DTYPE_ORDER[FIXED[name][0]], name))
    if list(header) != expected_order:
        fail(f"tensor order {list(header)}, expected {expected_order}")
    position = 0
    for name in expected_order:
        info = header[name]
        if list(info) != ["dtype", "shape", "data_offsets"]:
            fail(f"{name}: entry keys {list(info)}")
        if info["data_offsets"][0] != position:
            fail(f"{name}: data not contiguous at {position}")
        position = info["data_offsets"][1]
    if position != len(body):
        fail(f"the data section has {len(body)} bytes, tensors {position}")
    for name, (dtype, shape, values) in FIXED.items():
        if tensors[name] != (dtype, shape, values):
            fail(f"{name}: read {tensors[name]}, expected "
                 f"{(dtype, shape, values)}")


def check_python_file(tool, path):
    entries = [
        ("b.small", "I32", [3], [-(2**31), 0, 2**31 - 1]),
        ("a.big", "F64", [2, 2], [0.1, -2.5e-308, 1e308, -0.0]),
        ("caf\u00e9.\u00fcn\u00ef", "F32", [], [0.375]),
        ("zero", "I64", [0], []),
        ("ids", "I64", [2], [-(2**63), 2**63 - 1]),
    ]
    write_safetensors(path, entries, {"format": "pt", "note": "\u263a"})
    names = [name for name, *_ in entries]
    result = subprocess.run([tool, "dump", str(path), *names],
                            capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"the runtime cannot read a Python file: {result.stderr}")
    dumped = json.loads(result.stdout)
    for name, dtype, shape, values in entries:
        got = dumped[name]
        if (got["dtype"], got["shape"], got["values"]) != (dtype, shape,
                                                           values):
            fail(f"{name}: the runtime read {got}, expected "
                 f"{(dtype, shape, values)}")


def check_corrupt_file(tool, source, path):
    path.write_bytes(source.read_bytes()[:-3])
    result = subprocess.run([tool, "dump", str(path), "step"],
                            capture_output=True, text=True)
    prefix = f"metart_safetensors_open: {path}: "
    if result.returncode != 1 or not result.stderr.startswith(prefix):
        fail(f"a truncated file gave exit {result.returncode} and "
             f"{result.stderr!r}")


def check_reference_bytes(path):
    """Compares the runtime's file with the reference implementation's;
    returns whether the reference could be imported."""
    try:
        import numpy
        import safetensors.numpy
    except ImportError:
        return False
    arrays = {}
    for name, (dtype, shape, values) in FIXED.items():
        numpy_type = {"F32": numpy.float32, "F64": numpy.float64,
                      "I32": numpy.int32, "I64": numpy.int64}[dtype]
        arrays[name] = numpy.array(values, dtype=numpy_type).reshape(shape)
    reference = safetensors.numpy.save(arrays)
    if path.read_bytes() != reference:
        fail("the runtime's file differs from the reference implementation's")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tool",
        default=str(SOURCE_ROOT / "build" / "bin" / "metart-safetensors-tool"),
        help="the metart-safetensors-tool executable")
    tool = parser.parse_args().tool
    if not pathlib.Path(tool).is_file():
        sys.exit(f"check_safetensors.py: error: no tool at {tool}; build "
                 "the metart-safetensors-tool target or pass --tool")
    with tempfile.TemporaryDirectory() as directory:
        root = pathlib.Path(directory)
        check_runtime_file(tool, root / "runtime.safetensors")
        check_python_file(tool, root / "python.safetensors")
        check_corrupt_file(tool, root / "runtime.safetensors",
                           root / "truncated.safetensors")
        compared = check_reference_bytes(root / "runtime.safetensors")
    print("check_safetensors.py: PASS: runtime files match the format, "
          "Python files read back exactly, a truncated file is refused; "
          + ("the runtime's file is the reference implementation's, byte for "
             "byte" if compared else "(no `safetensors` package to compare "
             "bytes with)"))


if __name__ == "__main__":
    main()
