"""A stable-baselines3 MaskablePPO checkpoint (the ``ppo.zip`` of ``learn train``) read as data.

stable-baselines3's own ``load`` unpickles (cloudpickle) the objects its ``data`` member stores,
so a crafted checkpoint runs code while it is loaded. This reader never unpickles: ``data`` is
read as JSON and only its plain fields are used (the action and observation spaces' sizes, the
policy class's module, ``policy_kwargs`` when they were stored as JSON), the pickled ones
(``:serialized:``) are skipped, and the weights come from ``policy.pth`` through torch's
weights-only loader, which builds tensors and plain containers and nothing else. A checkpoint
whose network cannot be known without unpickling (pickled ``policy_kwargs``: a custom activation
or features extractor) is refused with one line, as is anything malformed. Needs torch.
"""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from kubesched.archive import Archive, MiB, why
from kubesched.plugins.learned.features import obs_size
from kubesched.plugins.learned.model import PolicyModel, check_layers

# Limits far above what ``learn train`` writes (K=16, 64-64 actor and critic: ``data`` 16 KB,
# ``policy.pth`` 170 KB); ``policy.optimizer.pth`` and the rest are never read.
MAX_FILE = 1024 * MiB
MAX_DATA = 16 * MiB  # the JSON member
MAX_POLICY = 256 * MiB  # the weights, and every record inside them

POLICY_MODULE = "sb3_contrib.common.maskable.policies"  # MaskableActorCriticPolicy ("MlpPolicy")
DISCRETE = "<class 'gymnasium.spaces.discrete.Discrete'>"
BOX = "<class 'gymnasium.spaces.box.Box'>"
#: the actor's linear layers: index 0, 2, ... of a Sequential with the (default tanh) activation between
ACTOR = re.compile(r"mlp_extractor\.policy_net\.([0-9]+)\.(weight|bias)")
HEAD = ("action_net.weight", "action_net.bias")
CRITIC = ("mlp_extractor.value_net.", "value_net.")


def read_checkpoint(path: str | Path, source: str | None = None) -> PolicyModel:
    """The actor of the MaskablePPO checkpoint at ``path`` as a numpy model (base policy FGD)."""
    src = source or str(path)
    with Archive(path, src, what="stable-baselines3 checkpoint", max_file=MAX_FILE, max_member=MAX_POLICY,
                 max_total=MAX_DATA + MAX_POLICY) as zf:
        data = _data(zf)
        k = _check_spaces(zf, data)
        state = _state_dict(zf, zf.read("policy.pth"))
    layers = _actor(zf, state)
    check_layers(k, layers, src)
    return PolicyModel(k, [w for _, w, _ in layers], [b for _, _, b in layers], "FGD",
                       meta={"exported_from": Path(path).name})


def _data(zf: Archive) -> dict[str, Any]:
    try:
        data = json.loads(zf.read("data", MAX_DATA))
    except ValueError:
        raise zf.error("not JSON", "data") from None
    except RecursionError:
        raise zf.error("nested too deeply", "data") from None
    if not isinstance(data, dict):
        raise zf.error("expected a JSON object", "data")
    return data


def _check_spaces(zf: Archive, data: dict[str, Any]) -> int:
    """K (the action count) after checking the policy and the spaces; only plain fields are read."""
    cls = data.get("policy_class")
    module = cls.get("__module__") if isinstance(cls, dict) else None
    if module != POLICY_MODULE:
        raise zf.error(f"a policy from {module!r}, not sb3-contrib's MaskablePPO MlpPolicy", "data.policy_class")
    kwargs = data.get("policy_kwargs", {})
    if not isinstance(kwargs, dict) or ":serialized:" in kwargs:
        raise zf.error("stored pickled (a custom activation or features extractor?): only the default tanh "
                       "network can be read without unpickling", "data.policy_kwargs")
    act = data.get("action_space")
    n = act.get("n") if isinstance(act, dict) else None
    if (not isinstance(act, dict) or act.get(":type:") != DISCRETE or not isinstance(n, str)
            or not re.fullmatch(r"[1-9][0-9]{0,8}", n) or act.get("start", "0") != "0"):
        raise zf.error("expected gymnasium's Discrete(n) from 0", "data.action_space")
    k = int(n)
    obs = data.get("observation_space")
    shape = obs.get("_shape") if isinstance(obs, dict) else None
    if not isinstance(obs, dict) or obs.get(":type:") != BOX or shape != [obs_size(k)]:
        raise zf.error(f"observation shape {shape} is not this feature set's for K={k} ({obs_size(k)} values)",
                       "data.observation_space")
    return k


def _state_dict(zf: Archive, raw: bytes) -> dict[str, Any]:
    """``policy.pth`` through torch's weights-only loader, after checking it is torch's zip format
    with stored records within the limits (torch allocates each record at its declared size)."""
    import torch

    with Archive(raw, zf.source, what="torch weights file", inner="policy.pth", max_file=MAX_POLICY,
                 max_member=MAX_POLICY, max_total=MAX_POLICY) as inner:
        inner.check_all(methods=(zipfile.ZIP_STORED,))
    try:
        state = torch.load(io.BytesIO(raw), map_location="cpu", weights_only=True)
    except Exception as e:  # noqa: BLE001 - torch's reader raises many types on bad bytes, all the file's fault
        raise zf.error(f"not a weights-only torch file ({why(e)})", "policy.pth") from None
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                              for k, v in state.items()):
        raise zf.error("expected a state dict (names to tensors)", "policy.pth")
    return state


def _actor(zf: Archive, state: dict[str, Any]) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(name, W in x out, b) of the actor's linear layers, then the action head."""
    import torch

    parts: dict[str, dict[str, Any]] = {}
    for key, t in state.items():
        m = ACTOR.fullmatch(key)
        if m:
            parts.setdefault(f"mlp_extractor.policy_net.{int(m[1])}", {})[m[2]] = t
        elif key in HEAD:
            parts.setdefault("action_net", {})[key.split(".")[1]] = t
        elif not key.startswith(CRITIC):
            raise zf.error(f"a parameter {key!r} that MaskablePPO's MlpPolicy does not have", "policy.pth")
    hidden = sorted(int(name.rsplit(".", 1)[1]) for name in parts if name != "action_net")
    if hidden != list(range(0, 2 * len(hidden), 2)):
        raise zf.error(f"actor layers at {hidden} (expected 0, 2, ...: linear layers with the activation between)",
                       "policy.pth")
    names = [f"mlp_extractor.policy_net.{i}" for i in hidden] + ["action_net"]
    layers = []
    for name in names:
        w, b = parts.get(name, {}).get("weight"), parts.get(name, {}).get("bias")
        for t, what in ((w, "weight"), (b, "bias")):
            if t is None or t.layout != torch.strided or not t.is_floating_point():
                raise zf.error(f"{name}.{what}: missing or not a dense floating-point tensor", "policy.pth")
        layers.append((name, w.detach().to(torch.float32).numpy().T.copy(), b.detach().to(torch.float32).numpy().copy()))
    return layers
