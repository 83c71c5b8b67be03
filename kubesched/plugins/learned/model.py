"""A trained node-selection policy as a small ``.npz``, run with numpy alone (no torch).

The file holds the actor of the trained network (linear layers with tanh between them, the last
one giving one logit per candidate), the candidate count K, the feature names it was trained on
and the base policy. The chosen candidate is the feasible one with the highest logit.

Keys: ``format`` (``kubesched-nodeselect-mlp``), ``version`` (1), ``k``, ``features`` (names),
``feature_set``, ``base``, ``layers`` (count), ``W0``, ``b0``, ... (``W`` is in x out), and
``meta`` (JSON text: how it was trained).
"""

from __future__ import annotations

import io
import json
import math
import tokenize
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib import format as npformat

from kubesched.archive import Archive, MiB, why
from kubesched.errors import InputError, describe
from kubesched.plugins.learned.features import FEATURE_SET, feature_names, obs_size

FORMAT = "kubesched-nodeselect-mlp"
VERSION = 1

# Limits, far above what ``learn train`` writes (K=16, 64-64 layers: a 58 KB .npz whose largest
# array, W0, is 38 KB; K=1000 makes W0 2.3 MB), so that a file can cost little memory.
MAX_FILE = 256 * MiB  # the .npz on disk
MAX_MEMBER = 64 * MiB  # one array, decompressed (a 4096 x 4096 float32 layer)
MAX_TOTAL = 256 * MiB  # every array read
MAX_SMALL = 64 * 1024  # format, version, k, feature_set, base, layers (features: MAX_MEMBER)
MAX_META = 4 * MiB  # the meta JSON text (1 Mi characters)
MAX_META_DEPTH = 32
MAX_HEADER = 1024  # .npy header text (numpy writes about 128 bytes for these arrays)
_HEADERS = {(1, 0): npformat.read_array_header_1_0, (2, 0): npformat.read_array_header_2_0}
_KINDS = {"floating point": "f", "integer": "iu", "text": "U"}  # numpy dtype kinds (never "O": objects)


@dataclass
class PolicyModel:
    k: int
    weights: list[np.ndarray]  # (in, out) per layer
    biases: list[np.ndarray]
    base: str = "FGD"
    features: list[str] = field(default_factory=feature_names)
    feature_set: str = FEATURE_SET
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # float32, as the file stores them and as torch trained them: half the bytes to read
        # from the caches every decision, and the observation (float32) is not converted
        self.weights = [np.ascontiguousarray(w, np.float32) for w in self.weights]
        self.biases = [np.ascontiguousarray(b, np.float32) for b in self.biases]

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """One logit per candidate, computed in float32."""
        x = np.asarray(obs, np.float32)
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            x = x @ w
            x += b  # in place: no second array per layer
            if i < last:
                np.tanh(x, out=x)
        return x

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The feasible candidate with the highest logit (the first on ties)."""
        z = self.logits(obs)
        return int(np.argmax(np.where(mask, z, -np.inf)))

    def act_first(self, obs: np.ndarray, n: int) -> int:
        """``act`` when the feasible candidates are the first ``n`` (the plugin's case)."""
        return int(self.logits(obs)[:n].argmax())

    def save(self, path: str | Path) -> None:
        arrays: dict[str, Any] = {
            "format": np.array(FORMAT),
            "version": np.array(VERSION),
            "k": np.array(self.k),
            "features": np.array(self.features),
            "feature_set": np.array(self.feature_set),
            "base": np.array(self.base),
            "layers": np.array(len(self.weights)),
            "meta": np.array(json.dumps(self.meta, sort_keys=True)),
        }
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            arrays[f"W{i}"] = np.asarray(w, np.float32)
            arrays[f"b{i}"] = np.asarray(b, np.float32)
        with open(path, "wb") as f:
            np.savez_compressed(f, **arrays)


def load_model(path: str | Path, *, k: int | None = None, source: str | None = None) -> PolicyModel:
    """Read and check a model; anything wrong is an InputError naming the file and the field.

    The file is data from anywhere: only the members named above are read (others are ignored
    unread), each within the size limits and as a plain numeric or text array (never a pickle).
    """
    src = source or str(path)
    with Archive(path, src, what=".npz model", max_file=MAX_FILE, max_member=MAX_MEMBER, max_total=MAX_TOTAL) as zf:
        fmt = _text(zf, "format")
        if fmt != FORMAT:
            raise zf.error(f"expected {FORMAT!r}, got {fmt!r}", "format")
        version = _integer(zf, "version")
        if version != VERSION:
            raise zf.error(f"unsupported version {version} (this kubesched reads {VERSION})", "version")
        feature_set = _text(zf, "feature_set")
        features = [str(f) for f in _array(zf, "features", "text", 1)]
        if feature_set != FEATURE_SET or features != feature_names():
            raise zf.error(f"trained on feature set {feature_set!r}; this kubesched computes {FEATURE_SET!r}",
                           "features")
        mk = _integer(zf, "k")
        if mk < 1:
            raise zf.error(f"made for K={mk} candidates (expected at least 1)", "k")
        if k is not None and mk != k:
            raise zf.error(f"made for K={mk} candidates, not {k}", "k")
        base = _text(zf, "base")
        n = _integer(zf, "layers")
        if n < 1:
            raise zf.error(f"{n} layers (expected at least 1)", "layers")
        layers = []
        for i in range(n):
            with np.errstate(over="ignore"):  # a value beyond float32 becomes inf, refused below
                layers.append((f"W{i}", _array(zf, f"W{i}", "floating point", 2).astype(np.float32),
                               _array(zf, f"b{i}", "floating point", 1).astype(np.float32)))
        check_layers(mk, layers, src)
        meta = _meta(zf) if "meta.npy" in zf else {}
    return PolicyModel(mk, [w for _, w, _ in layers], [b for _, _, b in layers], base, feature_names(), FEATURE_SET,
                       meta)


def check_layers(k: int, layers: list[tuple[str, np.ndarray, np.ndarray]], source: str) -> None:
    """Each (field, W in x out, b) takes the previous one's outputs, from the observation of K
    candidates to one logit per candidate, with finite values."""
    width = obs_size(k)
    for i, (name, w, b) in enumerate(layers):
        if w.ndim != 2 or w.shape[0] != width or b.shape != (w.shape[1],) or not np.isfinite(w).all() or not np.isfinite(b).all():
            raise InputError(f"layer {i} has shape {w.shape} / {b.shape} (expected {width} inputs, values finite in float32)",
                             source=source, path=name)
        width = w.shape[1]
    if not layers or width != k:
        raise InputError(f"the last layer gives {width} outputs, not one per candidate ({k})", source=source,
                         path="layers")


def _array(zf: Archive, key: str, kind: str, ndim: int, limit: int | None = None) -> np.ndarray:
    """The array ``key`` of ``kind`` (``_KINDS``) with ``ndim`` dimensions, its header checked
    against the bytes that follow it before anything is allocated."""
    data = zf.read(f"{key}.npy", limit, field=key)
    fp = io.BytesIO(data)
    try:
        version = npformat.read_magic(fp)
        if version not in _HEADERS:
            raise ValueError(f".npy version {version[0]}.{version[1]}")
        shape, fortran, dtype = _HEADERS[version](fp, max_header_size=MAX_HEADER)
    except (ValueError, TypeError, OverflowError, SyntaxError, tokenize.TokenError) as e:  # numpy's parse of the text
        raise zf.error(f"not a readable .npy array ({why(e)})", key) from None
    if dtype.kind not in _KINDS[kind] or dtype.fields is not None or dtype.subdtype is not None or not dtype.itemsize:
        raise zf.error(f"an array of {dtype} (expected {kind})", key)
    if len(shape) != ndim or any(d < 0 for d in shape):
        raise zf.error(f"an array of shape {shape} (expected {ndim} dimensions)", key)
    size = math.prod(shape) * dtype.itemsize
    if size != len(data) - fp.tell():
        raise zf.error(f"the header declares {size:,} bytes of data, {len(data) - fp.tell():,} follow", key)
    return np.frombuffer(data, dtype, math.prod(shape), fp.tell()).reshape(shape, order="F" if fortran else "C")


def _text(zf: Archive, key: str) -> str:
    return str(_array(zf, key, "text", 0, MAX_SMALL)[()])


def _integer(zf: Archive, key: str) -> int:
    return int(_array(zf, key, "integer", 0, MAX_SMALL)[()])


def _meta(zf: Archive) -> dict[str, Any]:
    text = str(_array(zf, "meta", "text", 0, MAX_META)[()])
    try:
        meta = json.loads(text)
    except ValueError:
        raise zf.error("not JSON", "meta") from None
    except RecursionError:
        raise zf.error("nested too deeply", "meta") from None
    if not isinstance(meta, dict):
        raise zf.error(f"expected a JSON object, got {describe(meta)}", "meta")
    level: list[Any] = [meta]
    for _ in range(MAX_META_DEPTH):  # breadth first: meta is shown and written back into results
        level = [c for v in level for c in (v.values() if isinstance(v, dict) else v) if isinstance(c, dict | list)]
    if level:
        raise zf.error(f"nested more than {MAX_META_DEPTH} levels deep", "meta")
    return meta
