"""``kubesched learn export`` reads a stable-baselines3 checkpoint as data: a pickle anywhere in it
runs nothing, a genuine MaskablePPO checkpoint exports to the same weights as the policy in
memory, and every malformed checkpoint is one line and exit 2."""

from __future__ import annotations

import base64
import io
import json
import pickle
import zipfile
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
import torch
from sb3_contrib import MaskablePPO

from kubesched.cli import main
from kubesched.learn import checkpoint as checkpoint_module
from kubesched.learn.train import export
from kubesched.plugins.learned.features import obs_size

K = 3


class _Env(gym.Env):
    """Only the spaces of kubesched/NodeSelect-v0 for K candidates: nothing is stepped."""

    def __init__(self, k: int = K) -> None:
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (obs_size(k),), np.float32)
        self.action_space = gym.spaces.Discrete(k)

    def reset(self, seed: int | None = None, options: dict | None = None):
        return np.zeros(self.observation_space.shape, np.float32), {}

    def step(self, action: int):
        return np.zeros(self.observation_space.shape, np.float32), 0.0, True, False, {}

    def action_masks(self) -> np.ndarray:
        return np.ones(self.action_space.n, bool)


@pytest.fixture(scope="module")
def genuine(tmp_path_factory: pytest.TempPathFactory) -> tuple[MaskablePPO, Path]:
    """A MaskablePPO as ``learn train`` builds it (tanh MLP, separate actor and critic), smaller."""
    ppo = MaskablePPO("MlpPolicy", _Env(), policy_kwargs={"net_arch": {"pi": [8, 8], "vf": [8]}}, n_steps=64,
                      batch_size=32, seed=0, device="cpu")
    path = tmp_path_factory.mktemp("ckpt") / "ppo.zip"
    ppo.save(path)
    return ppo, path


class _Payload:
    """Unpickling this creates the marker file: what a crafted checkpoint would do instead."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (open, (str(self.marker), "w"))


def _members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as z:
        return {n: z.read(n) for n in z.namelist()}


def _write(path: Path | io.BytesIO, members: dict[str, bytes], method: int = zipfile.ZIP_STORED) -> Path | io.BytesIO:
    with zipfile.ZipFile(path, "w", method) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def _data(path: Path) -> dict:
    return json.loads(_members(path)["data"])


def _with_data(genuine_path: Path, out: Path, data: dict) -> Path:
    return _write(out, {**_members(genuine_path), "data": json.dumps(data).encode()})


def _export(ckpt: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, Path]:
    npz = tmp_path / "out.npz"
    rc = main(["learn", "export", str(ckpt), str(npz)])
    return rc, capsys.readouterr().err, npz


def test_export_gives_the_weights_of_the_policy(genuine, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The .npz equals, array by array, what the export from the loaded policy wrote before."""
    ppo, path = genuine
    rc, err, npz = _export(path, tmp_path, capsys)
    assert rc == 0, err
    before = tmp_path / "before.npz"
    export(ppo.policy, K, {"exported_from": "ppo.zip"}).save(before)
    with np.load(npz) as got, np.load(before) as want:
        assert sorted(got.files) == sorted(want.files)
        for key in want.files:
            assert np.array_equal(got[key], want[key]), key


def _pickle_b64(marker: Path) -> str:
    return base64.b64encode(pickle.dumps(_Payload(marker))).decode()


def test_pickles_in_data_are_never_loaded(genuine, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every pickled field of ``data`` carries a payload: the export still works from the plain
    fields and the weights, and no payload ran (stable-baselines3's load ran them all)."""
    _, path = genuine
    marker = tmp_path / "pwned"
    data = _data(path)
    for value in data.values():
        if isinstance(value, dict) and ":serialized:" in value:
            value[":serialized:"] = _pickle_b64(marker)
    rc, err, _ = _export(_with_data(path, tmp_path / "ppo.zip", data), tmp_path, capsys)
    assert rc == 0, err
    assert not marker.exists()


def test_a_crafted_checkpoint_is_refused_and_runs_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The smallest crafted file: a payload where stable-baselines3 looks first."""
    marker = tmp_path / "pwned"
    data = {"policy_class": {":type:": "<class 'abc.ABCMeta'>", ":serialized:": _pickle_b64(marker)}}
    ckpt = _write(tmp_path / "ppo.zip", {"data": json.dumps(data).encode(), "policy.pth": b""})
    rc, err, npz = _export(ckpt, tmp_path, capsys)
    assert not marker.exists()
    assert rc == 2 and err == (f"kubesched: error: {ckpt}: data.policy_class: a policy from None, not sb3-contrib's "
                               "MaskablePPO MlpPolicy\n")
    assert not npz.exists()


def test_a_pickle_in_the_weights_is_refused(genuine, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, path = genuine
    marker = tmp_path / "pwned"
    buf = io.BytesIO()
    torch.save({"action_net.weight": _Payload(marker)}, buf)
    ckpt = _write(tmp_path / "ppo.zip", {**_members(path), "policy.pth": buf.getvalue()})
    rc, err, _ = _export(ckpt, tmp_path, capsys)
    assert not marker.exists()
    assert rc == 2 and err.startswith(f"kubesched: error: {ckpt}: policy.pth: not a weights-only torch file "
                                      "(UnpicklingError: ") and err.count("\n") == 1, err


def _legacy_weights(path: Path) -> bytes:
    buf = io.BytesIO()
    torch.save(torch.load(io.BytesIO(_members(path)["policy.pth"]), weights_only=True), buf,
               _use_new_zipfile_serialization=False)
    return buf.getvalue()


def _deflated_weights(path: Path) -> bytes:
    buf = io.BytesIO()
    _write(buf, _members_of(_members(path)["policy.pth"]), zipfile.ZIP_DEFLATED)
    return buf.getvalue()


def _members_of(data: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return {n: z.read(n) for n in z.namelist()}


def _state(path: Path, **changes: torch.Tensor | None) -> bytes:
    state = torch.load(io.BytesIO(_members(path)["policy.pth"]), weights_only=True)
    for key, value in changes.items():
        key = key.replace("__", ".")
        if value is None:
            del state[key]
        else:
            state[key] = value
    buf = io.BytesIO()
    torch.save(state, buf)
    return buf.getvalue()


def _edit(**fields):
    """data with ``fields`` replaced (None: removed)."""
    def make(path: Path) -> dict[str, bytes]:
        data = _data(path)
        for key, value in fields.items():
            if value is None:
                data.pop(key)
            else:
                data[key] = value(data[key]) if callable(value) else value
        return {**_members(path), "data": json.dumps(data).encode()}
    return make


def _space(**over):
    return lambda space: {**space, **over}


#: malformed checkpoints -> (members from the genuine one, field, start of the message)
MALFORMED = {
    "not-a-zip": (lambda p: None, None, "not a readable stable-baselines3 checkpoint (BadZipFile"),
    "no-data": (lambda p: {k: v for k, v in _members(p).items() if k != "data"}, "data", "missing"),
    "data-not-json": (lambda p: {**_members(p), "data": b"\x80\x04not json"}, "data", "not JSON"),
    "data-deep": (lambda p: {**_members(p), "data": b"[" * 100_000}, "data", "nested too deeply"),
    "data-list": (lambda p: {**_members(p), "data": b"[]"}, "data", "expected a JSON object"),
    "other-policy": (_edit(policy_class=_space(__module__="stable_baselines3.common.policies")), "data.policy_class",
                     "a policy from 'stable_baselines3.common.policies'"),
    "pickled-kwargs": (_edit(policy_kwargs={":type:": "<class 'dict'>", ":serialized:": "gAR9lC4="}),
                       "data.policy_kwargs", "stored pickled (a custom activation or features extractor?)"),
    "box-actions": (_edit(action_space=_space(**{":type:": "<class 'gymnasium.spaces.box.Box'>"})),
                    "data.action_space", "expected gymnasium's Discrete(n) from 0"),
    "n-not-decimal": (_edit(action_space=_space(n="٣")), "data.action_space", "expected gymnasium's Discrete"),
    "n-start-1": (_edit(action_space=_space(start="1")), "data.action_space", "expected gymnasium's Discrete"),
    "other-k": (_edit(action_space=_space(n="4")), "data.observation_space",
                f"observation shape [{obs_size(K)}] is not this feature set's for K=4 ({obs_size(4)} values)"),
    "no-weights": (lambda p: {k: v for k, v in _members(p).items() if k != "policy.pth"}, "policy.pth", "missing"),
    "weights-legacy-format": (lambda p: {**_members(p), "policy.pth": _legacy_weights(p)}, "policy.pth",
                              "not a readable torch weights file (BadZipFile"),
    "weights-deflated": (lambda p: {**_members(p), "policy.pth": _deflated_weights(p)}, "policy.pth/archive/data.pkl",
                         "deflated (expected stored)"),
    "weights-truncated": (lambda p: {**_members(p), "policy.pth": _members(p)["policy.pth"][:-300]}, "policy.pth",
                          "not a readable torch weights file"),
    "weights-not-a-dict": (lambda p: {**_members(p), "policy.pth": _tensor_file()}, "policy.pth",
                           "expected a state dict (names to tensors)"),
    "cnn-extractor": (lambda p: {**_members(p), "policy.pth": _state(p, features_extractor__cnn__0__weight=torch.ones(2))},
                      "policy.pth", "a parameter 'features_extractor.cnn.0.weight'"),
    "gap-in-actor": (lambda p: {**_members(p), "policy.pth": _state(p, mlp_extractor__policy_net__0__weight=None,
                                                                    mlp_extractor__policy_net__0__bias=None)},
                     "policy.pth", "actor layers at [2] (expected 0, 2, ..."),
    "no-head": (lambda p: {**_members(p), "policy.pth": _state(p, action_net__bias=None)}, "policy.pth",
                "action_net.bias: missing or not a dense floating-point tensor"),
    "integer-weights": (lambda p: {**_members(p), "policy.pth": _state(p, action_net__weight=torch.ones(3, 8).long())},
                        "policy.pth", "action_net.weight: missing or not a dense floating-point tensor"),
    "wrong-shape": (lambda p: {**_members(p), "policy.pth": _state(p, action_net__weight=torch.ones(5, 8))},
                    "action_net", "layer 2 has shape (8, 5) / (3,)"),
}


def _tensor_file() -> bytes:
    buf = io.BytesIO()
    torch.save(torch.ones(2), buf)
    return buf.getvalue()


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_checkpoint_is_one_line(case: str, genuine, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    _, path = genuine
    make, field, message = MALFORMED[case]
    members = make(path)
    ckpt = tmp_path / "ppo.zip"
    if members is None:
        ckpt.write_bytes(b"PK\x03\x04 not really")
    else:
        _write(ckpt, members)
    rc, err, npz = _export(ckpt, tmp_path, capsys)
    prefix = f"kubesched: error: {ckpt}: " + (f"{field}: " if field else "")
    assert rc == 2 and err.startswith(prefix + message) and err.count("\n") == 1, err
    assert not npz.exists()


def test_members_over_the_limits_are_refused_unread(genuine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _, path = genuine
    size = len(_members(path)["data"])
    monkeypatch.setattr(checkpoint_module, "MAX_DATA", size - 1)
    rc, err, _ = _export(path, tmp_path, capsys)
    assert rc == 2 and err == f"kubesched: error: {path}: data: {size:,} bytes decompressed, over the limit of {size - 1:,}\n"
    monkeypatch.setattr(checkpoint_module, "MAX_FILE", 1000)
    rc, err, _ = _export(path, tmp_path, capsys)
    assert rc == 2 and err == f"kubesched: error: {path}: {path.stat().st_size:,} bytes, over the limit of 1,000\n"


def test_missing_and_unreadable_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, err, _ = _export(tmp_path / "missing.zip", tmp_path, capsys)
    assert rc == 2 and err == f"kubesched: error: {tmp_path / 'missing.zip'}: no such file\n"
    rc, err, _ = _export(tmp_path, tmp_path, capsys)
    assert rc == 2 and err == f"kubesched: error: {tmp_path}: not a regular file\n"
    rc, err, _ = _export(Path("/dev/zero"), tmp_path, capsys)
    assert rc == 2 and err == "kubesched: error: /dev/zero: not a regular file\n"
