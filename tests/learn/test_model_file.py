"""The model file (``.npz`` for LearnedScore) is untrusted data: only the members the model needs
are read, each within size limits and never as a pickle, and every malformed file is one
InputError naming the file and the member, from the loader, ``learn eval --model`` and
``schedule`` with LearnedScore. Then property tests: mutated, truncated and garbage bytes, lying
array headers, huge declared shapes and deep ``meta`` always load or raise InputError."""

from __future__ import annotations

import io
import json
import struct
import tempfile
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.lib import format as npformat

from kubesched.cli import main
from kubesched.errors import InputError
from kubesched.learn.policies import learned_config
from kubesched.plugins.learned import model as model_module
from kubesched.plugins.learned.features import obs_size
from kubesched.plugins.learned.model import PolicyModel, load_model

K = 4
MiB = 1 << 20


def _genuine() -> bytes:
    rng = np.random.default_rng(0)
    widths = [obs_size(K), 8, K]
    m = PolicyModel(K, [rng.normal(size=(a, b)) for a, b in zip(widths[:-1], widths[1:], strict=True)],
                    [rng.normal(size=b) for b in widths[1:]], meta={"trace": "default", "seeds": [0, 1]})
    with tempfile.TemporaryDirectory() as d:
        m.save(Path(d) / "m.npz")
        return (Path(d) / "m.npz").read_bytes()


GENUINE = _genuine()


def _members(data: bytes = GENUINE) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n: z.read(n) for n in z.namelist()}


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return buf.getvalue()


def _npy(value: object) -> bytes:
    buf = io.BytesIO()
    npformat.write_array(buf, np.asarray(value), allow_pickle=False)
    return buf.getvalue()


def _with(**arrays: object) -> bytes:
    return _zip({**_members(), **{f"{k}.npy": _npy(v) for k, v in arrays.items()}})


def _header(shape: str, descr: str = "'<f4'", fortran: str = "False", data: bytes = b"") -> bytes:
    """A .npy member whose header says whatever it is told, followed by ``data``."""
    head = f"{{'descr': {descr}, 'fortran_order': {fortran}, 'shape': {shape}, }}".encode("latin1", "replace")
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head + data


def _patch(data: bytes, member: str, *, flags: int = 0, method: int | None = None) -> bytes:
    """Set bits in ``member``'s general-purpose flags or change its compression method, in both
    the local and the central header."""
    b = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        local = z.getinfo(member).header_offset
    central = data.index(b"PK\x01\x02")
    while data[central + 46:central + 46 + len(member)] != member.encode():
        central = data.index(b"PK\x01\x02", central + 4)
    for flag_at, method_at in ((local + 6, local + 8), (central + 8, central + 10)):
        b[flag_at] |= flags
        if method is not None:
            b[method_at:method_at + 2] = struct.pack("<H", method)
    return bytes(b)


def _corrupt_stream(data: bytes, member: str) -> bytes:
    """``member``'s deflate stream made invalid (a reserved block type), the zip left intact."""
    b = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        local = z.getinfo(member).header_offset
    name_len, extra_len = struct.unpack("<HH", data[local + 26:local + 30])
    b[local + 30 + name_len + extra_len] = 0b111  # final block, type 3: "invalid block type"
    return bytes(b)


def test_a_genuine_model_loads(tmp_path: Path) -> None:
    path = tmp_path / "m.npz"
    path.write_bytes(GENUINE)
    m = load_model(path, k=K)
    assert m.k == K and [w.shape for w in m.weights] == [(obs_size(K), 8), (8, K)]
    assert m.meta == {"trace": "default", "seeds": [0, 1]} and m.base == "FGD"


def test_unknown_members_are_not_read(tmp_path: Path) -> None:
    """A 256 MiB array of zeros (1 MB deflated) the model does not name, and a member whose
    deflate stream is broken: neither is decompressed (the old loader read every member: 6.4 GB
    resident for a 6 GiB one)."""
    path = tmp_path / "bomb.npz"
    path.write_bytes(_corrupt_stream(_zip({**_members(), "broken.npy": _npy(np.ones(100))}), "broken.npy"))
    with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED, compresslevel=1) as z, z.open("junk.npy", "w") as w:
        n = 256 * MiB // 8
        npformat.write_array_header_1_0(w, {"descr": "<f8", "fortran_order": False, "shape": (n,)})
        for _ in range(16):
            w.write(bytes(16 * MiB))
    assert path.stat().st_size < 2 * MiB
    tracemalloc.start()
    try:
        m = load_model(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert m.k == K
    assert peak < 8 * MiB, f"{peak:,} bytes allocated at the peak"


def test_a_member_over_the_limit_is_refused_before_it_is_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sizes = {n: len(b) for n, b in _members().items()}
    limit = sizes["W0.npy"] - 1  # W0 is the largest member: every other one is read
    assert max(b for n, b in sizes.items() if n != "W0.npy") <= limit
    monkeypatch.setattr(model_module, "MAX_MEMBER", limit)
    path = tmp_path / "m.npz"
    path.write_bytes(_corrupt_stream(GENUINE, "W0.npy"))  # refused on its declared size: never inflated
    with pytest.raises(InputError) as e:
        load_model(path)
    assert str(e.value) == f"{path}: W0: {sizes['W0.npy']:,} bytes decompressed, over the limit of {limit:,}"


def test_a_file_over_the_limit_is_refused_unopened(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model_module, "MAX_FILE", 1000)
    path = tmp_path / "m.npz"
    path.write_bytes(GENUINE)
    with pytest.raises(InputError, match=f"^{path}: {len(GENUINE):,} bytes, over the limit of 1,000$"):
        load_model(path)


def _deep(n: int) -> str:
    return '{"a":' * n + "1" + "}" * n


#: malformed files (the fuzz campaign's kinds) -> the field named and the start of the message
MALFORMED = {
    "not-a-zip": (lambda: b"not a zip", None, "not a readable .npz model (BadZipFile"),
    "truncated": (lambda: GENUINE[: len(GENUINE) // 2], None, "not a readable .npz model"),
    "bad-zlib-stream": (lambda: _corrupt_stream(GENUINE, "W0.npy"), "W0", "unreadable (error: Error -3"),
    "crc": (lambda: _flip_stored(), "k", "unreadable (BadZipFile: Bad CRC-32"),
    "encrypted": (lambda: _patch(GENUINE, "b1.npy", flags=1), "b1", "encrypted"),
    "lzma": (lambda: _patch(GENUINE, "features.npy", method=14), "features", "compression method 14"),
    "unknown-method": (lambda: _patch(GENUINE, "W1.npy", method=99), "W1", "compression method 99"),
    "huge-shape": (lambda: _zip({**_members(), "W0.npy": _header("(1099511627776, 8)")}), "W0",
                   "the header declares 35,184,372,088,832 bytes of data, 0 follow"),
    "negative-shape": (lambda: _zip({**_members(), "b0.npy": _header("(-8,)")}), "b0", "an array of shape (-8,)"),
    "short-data": (lambda: _zip({**_members(), "b0.npy": _header("(8,)", data=b"\0" * 31)}), "b0",
                   "the header declares 32 bytes of data, 31 follow"),
    "object-array": (lambda: _zip({**_members(), "W0.npy": _header("(2,)", "'|O'", data=b"\0" * 16)}), "W0",
                     "an array of object (expected floating point)"),
    "structured": (lambda: _zip({**_members(), "W0.npy": _header("(1,)", "[('a', '<f4', (1099511627776,))]")}),
                   "W0", "not a readable .npy array (ValueError: invalid shape"),
    "header-garbage": (lambda: _zip({**_members(), "k.npy": _header("((((((((") }), "k", "not a readable .npy array"),
    "header-deep-unary": (lambda: _zip({**_members(), "k.npy": b"\x93NUMPY\x01\x00\x00\x04" + b"-" * 1023 + b"1"}),
                          "k", "not a readable .npy array"),
    "header-too-long": (lambda: _zip({**_members(), "k.npy": _header("(" + " " * 2000 + ")")}), "k",
                        "not a readable .npy array (ValueError: Header info length"),
    "npy-version-9": (lambda: _zip({**_members(), "k.npy": b"\x93NUMPY\x09\x00" + _npy(4)[8:]}), "k",
                      "not a readable .npy array (ValueError: .npy version 9.0)"),
    "k-vector": (lambda: _with(k=[1, 2, 3]), "k", "an array of shape (3,) (expected 0 dimensions)"),
    "k-text": (lambda: _with(k="4"), "k", "an array of <U1 (expected integer)"),
    "k-zero": (lambda: _with(k=0), "k", "made for K=0 candidates (expected at least 1)"),
    "version-nan": (lambda: _with(version=np.nan), "version", "an array of float64 (expected integer)"),
    "format-bytes": (lambda: _with(format=b"kubesched-nodeselect-mlp"), "format", "an array of |S24 (expected text)"),
    "layers-huge": (lambda: _with(layers=2**62), "W2", "missing"),
    "layers-zero": (lambda: _with(layers=0), "layers", "0 layers (expected at least 1)"),
    "W-complex": (lambda: _with(W0=np.ones((obs_size(K), 8), complex)), "W0", "an array of complex128"),
    "W-text": (lambda: _with(W1=np.full((8, K), "a")), "W1", "an array of <U1 (expected floating point)"),
    "W-nan": (lambda: _with(W1=np.full((8, K), np.nan)), "W1", "layer 1 has shape (8, 4) / (4,)"),
    # finite in float64, infinite in the float32 the model computes in
    "W-beyond-float32": (lambda: _with(b1=np.full(K, 1e39)), "W1",
                         "layer 1 has shape (8, 4) / (4,) (expected 8 inputs, values finite in float32)"),
    "features-2d": (lambda: _with(features=[["a"]]), "features", "an array of shape (1, 1) (expected 1 dimensions)"),
    "meta-deep": (lambda: _with(meta=_deep(100_000)), "meta", "nested too deeply"),
    "meta-33-levels": (lambda: _with(meta=_deep(33)), "meta", "nested more than 32 levels deep"),
    "meta-list": (lambda: _with(meta="[1, 2]"), "meta", "expected a JSON object, got a list"),
    "meta-not-json": (lambda: _with(meta="{bad"), "meta", "not JSON"),
}


def _flip_stored() -> bytes:
    """k.npy stored (not deflated) with one data byte changed: the CRC no longer matches."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        for name, data in _members().items():
            z.writestr(name, data)
    data = bytearray(buf.getvalue())
    at = data.index(_members()["k.npy"]) + len(_members()["k.npy"]) - 1
    data[at] ^= 0xFF
    return bytes(data)


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_model_is_one_line(case: str, tmp_path: Path) -> None:
    make, field, message = MALFORMED[case]
    path = tmp_path / f"{case}.npz"
    path.write_bytes(make())
    with pytest.raises(InputError) as e:
        load_model(path)
    assert e.value.source == str(path) and e.value.path == field, str(e.value)
    assert e.value.reason.startswith(message), e.value.reason
    assert "\n" not in str(e.value)


@pytest.fixture(scope="module")
def typical():
    from tests.learn.conftest import SMALL

    return SMALL.prepare(0).typical


@pytest.mark.parametrize("case", ["bad-zlib-stream", "huge-shape", "meta-deep", "encrypted", "k-vector"])
def test_cli_readers_give_one_line(case: str, tmp_path: Path, typical, capsys: pytest.CaptureFixture[str]) -> None:
    """``learn eval --model`` and ``schedule`` with LearnedScore: exit 2, one line naming the
    model file and the member."""
    make, field, message = MALFORMED[case]
    path = tmp_path / "m.npz"
    path.write_bytes(make())
    assert main(["learn", "eval", "--model", str(path), "-d", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kubesched: error: {path}: {field}: {message}") and err.count("\n") == 1, err
    assert not (tmp_path / "o").exists()
    cfg = tmp_path / "learned.yaml"
    cfg.write_text(yaml.safe_dump(learned_config(path, typical)))
    assert main(["schedule", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}: {field}: {message}" in err, err


def test_eval_takes_meta_as_training_info(tmp_path: Path) -> None:
    """A meta that is JSON but not an object used to load, then fail in ``learn eval`` where it is
    merged into the candidate's training info."""
    path = tmp_path / "m.npz"
    path.write_bytes(_with(meta='{"cpu_seconds": 12.5, "kind": "rl"}'))
    assert load_model(path).meta == {"cpu_seconds": 12.5, "kind": "rl"}


# ---- properties -------------------------------------------------------------------------------

PROPS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
MEMBERS = sorted(_members())


def _loads_or_input_error(data: bytes, tmp_path: Path, peak_limit: int = 32 * MiB) -> None:
    path = tmp_path / "m.npz"
    path.write_bytes(data)
    tracemalloc.start()
    try:
        try:
            load_model(path)
        except InputError as e:
            assert "\n" not in str(e) and e.source == str(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < peak_limit, f"{peak:,} bytes at the peak"


@PROPS
@given(flips=st.lists(st.tuples(st.integers(0, len(GENUINE) - 1), st.integers(0, 255)), min_size=1, max_size=8),
       cut=st.one_of(st.none(), st.integers(0, len(GENUINE))))
def test_mutated_bytes(flips: list[tuple[int, int]], cut: int | None, tmp_path: Path) -> None:
    data = bytearray(GENUINE)
    for at, value in flips:
        data[at] = value
    _loads_or_input_error(bytes(data[:cut]), tmp_path)


@PROPS
@given(data=st.binary(max_size=600))
def test_garbage_bytes(data: bytes, tmp_path: Path) -> None:
    _loads_or_input_error(data, tmp_path)


@PROPS
@given(member=st.sampled_from(MEMBERS), flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=6),
       cut=st.one_of(st.none(), st.integers(0, 300)))
def test_mutated_members_in_a_valid_zip(member: str, flips: list[tuple[int, int]], cut: int | None,
                                        tmp_path: Path) -> None:
    """The zip is sound, the .npy inside is not: flipped header bytes, truncated data."""
    members = _members()
    data = bytearray(members[member])
    for at, value in flips:
        data[at % len(data)] = value
    members[member] = bytes(data[:cut])
    _loads_or_input_error(_zip(members), tmp_path)


dims = st.one_of(st.integers(-(2**70), 2**70), st.sampled_from([0, 1, 8, obs_size(K), 2**31, 2**63, 2**64]))
descrs = st.one_of(
    st.sampled_from(["'<f4'", "'>f8'", "'<f2'", "'<i8'", "'|b1'", "'<U24'", "'|O'", "'<c16'", "'|V8'", "'<M8[s]'",
                     "'<U0'", "'|S3'", "[('a', '<f4')]", "'<f4' if 1 else 0", "None", "7", "'garbage'"]),
    st.text(max_size=12).map(repr),
)


@PROPS
@given(member=st.sampled_from(MEMBERS), shape=st.lists(dims, max_size=3), descr=descrs,
       fortran=st.sampled_from(["False", "True", "1", "None"]), payload=st.integers(0, 4096))
def test_lying_array_headers(member: str, shape: list[int], descr: str, fortran: str, payload: int,
                             tmp_path: Path) -> None:
    """Any shape (huge, negative, many dimensions) and dtype in the header, whatever data follows:
    nothing is allocated at the declared size."""
    text = "(" + "".join(f"{d}, " for d in shape) + ")"
    members = {**_members(), member: _header(text, descr, fortran, bytes(payload))}
    _loads_or_input_error(_zip(members), tmp_path, peak_limit=4 * MiB)


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=8)),
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=4), c, max_size=3)),
    max_leaves=12,
)


@PROPS
@given(meta=st.one_of(
    json_values.map(json.dumps),
    st.integers(0, 3000).map(lambda n: "[" * n + "]" * n),
    st.integers(0, 3000).map(_deep),
    st.integers(0, 5000).map(lambda n: "[" * n),
    st.text(max_size=40),
))
def test_any_meta(meta: str, tmp_path: Path) -> None:
    path = tmp_path / "m.npz"
    path.write_bytes(_with(meta=meta))
    try:
        m = load_model(path)
    except InputError as e:
        assert e.path == "meta" and "\n" not in str(e)
    else:
        assert isinstance(m.meta, dict)
        json.dumps({"training": {"kind": "rl", **m.meta}})  # what learn eval writes
