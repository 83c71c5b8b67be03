"""A trained node-selection policy as a small ``.npz``, run with numpy alone (no torch).

The file holds the actor of the trained network (linear layers with tanh between them, the last
one giving one logit per candidate), the candidate count K, the feature names it was trained on
and the base policy. The chosen candidate is the feasible one with the highest logit.

Keys: ``format`` (``kubesched-nodeselect-mlp``), ``version`` (1), ``k``, ``features`` (names),
``feature_set``, ``base``, ``layers`` (count), ``W0``, ``b0``, ... (``W`` is in x out), and
``meta`` (JSON text: how it was trained).
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kubesched.errors import InputError
from kubesched.learn.features import FEATURE_SET, feature_names, obs_size

FORMAT = "kubesched-nodeselect-mlp"
VERSION = 1


@dataclass
class PolicyModel:
    k: int
    weights: list[np.ndarray]  # (in, out) per layer
    biases: list[np.ndarray]
    base: str = "FGD"
    features: list[str] = field(default_factory=feature_names)
    feature_set: str = FEATURE_SET
    meta: dict[str, Any] = field(default_factory=dict)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, np.float64)
        last = len(self.weights) - 1
        for i, (w, b) in enumerate(zip(self.weights, self.biases, strict=True)):
            x = x @ w + b
            if i < last:
                x = np.tanh(x)
        return x

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The feasible candidate with the highest logit (the first on ties)."""
        z = self.logits(obs)
        return int(np.argmax(np.where(mask, z, -np.inf)))

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
    """Read and check a model; anything wrong is an InputError naming the file and the field."""
    src = source or str(path)

    def bad(msg: str, fld: str | None = None) -> InputError:
        return InputError(msg, source=src, path=fld)

    try:
        with np.load(path, allow_pickle=False) as z:
            data = {key: z[key] for key in z.files}
    except FileNotFoundError:
        raise bad("no such file") from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise bad(f"not a readable .npz model ({type(e).__name__})") from None
    for key in ("format", "version", "k", "features", "feature_set", "base", "layers"):
        if key not in data:
            raise bad("missing (not a kubesched model?)", key)
    if str(data["format"]) != FORMAT:
        raise bad(f"expected {FORMAT!r}, got {str(data['format'])!r}", "format")
    if int(data["version"]) != VERSION:
        raise bad(f"unsupported version {int(data['version'])} (this kubesched reads {VERSION})", "version")
    if str(data["feature_set"]) != FEATURE_SET or [str(f) for f in data["features"]] != feature_names():
        raise bad(f"trained on feature set {str(data['feature_set'])!r}; this kubesched computes {FEATURE_SET!r}",
                  "features")
    mk = int(data["k"])
    if k is not None and mk != k:
        raise bad(f"made for K={mk} candidates, not {k}", "k")
    weights, biases = [], []
    n = int(data["layers"])
    width = obs_size(mk)
    for i in range(n):
        if f"W{i}" not in data or f"b{i}" not in data:
            raise bad("missing layer", f"W{i}")
        w, b = np.asarray(data[f"W{i}"], np.float64), np.asarray(data[f"b{i}"], np.float64)
        if w.ndim != 2 or w.shape[0] != width or b.shape != (w.shape[1],) or not np.isfinite(w).all() or not np.isfinite(b).all():
            raise bad(f"layer {i} has shape {w.shape} / {b.shape} (expected {width} inputs, finite values)", f"W{i}")
        weights.append(w)
        biases.append(b)
        width = w.shape[1]
    if n < 1 or width != mk:
        raise bad(f"the last layer gives {width} outputs, not one per candidate ({mk})", "layers")
    try:
        meta = json.loads(str(data["meta"])) if "meta" in data else {}
    except ValueError:
        raise bad("not JSON", "meta") from None
    return PolicyModel(mk, weights, biases, str(data["base"]), feature_names(), FEATURE_SET, meta)
