"""The RL track: behaviour cloning + MaskablePPO on a small instance, the numpy export and the
LearnedScore plugin that runs it (same placements as the environment)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from kubesched.cli import main
from kubesched.experiment.protocol import run
from kubesched.learn.data import Instance
from kubesched.learn.episode import Episode
from kubesched.learn.policies import learned_config
from kubesched.learn.search import evaluate
from kubesched.learn.train import TrainConfig, actor_logits, train
from kubesched.plugins.learned.features import CandidateFeatures
from kubesched.plugins.learned.model import load_model

K = 8
INST = Instance("default", "gpu", max_nodes=60, max_pods=400)
VAL = (100, 101, 102)


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory):
    cfg = TrainConfig(seeds=[0, 1], k=K, max_nodes=60, max_pods=400, ppo_steps=1024, n_steps=512, batch_size=128)
    res = train(cfg)
    path = tmp_path_factory.mktemp("rl") / "policy.npz"
    res.model.save(path)
    return res, path


def _episode(seed: int, choose) -> Episode:
    ep = Episode(INST.prepare(seed), CandidateFeatures(K))
    ep.advance()
    while not ep.done:
        ep.act(choose(ep))
        ep.advance()
    return ep


def test_cloning_starts_at_the_base_policy(trained) -> None:
    res, _ = trained
    assert res.bc_samples > 100
    assert res.bc_accuracy >= 0.95
    assert res.ppo_steps == 1024 and res.cpu_seconds > 0


def _margins(model, seed: int) -> np.ndarray:
    """Candidate 0's logit less the best other feasible candidate's, on FGD's decisions."""
    out = []

    def first(ep):
        n = int(ep.pending.mask.sum())
        z = model.logits(ep.pending.obs)
        out.append(float(z[0] - z[1:n].max()))
        return 0

    _episode(seed, first)
    return np.array(out)


def test_smoothed_cloning_is_sure_of_fgd_only_up_to_a_margin() -> None:
    """``bc_smoothing``: the clone still picks FGD's candidate, by a logit margin near the one
    its target sets (log((1 - e + e/n) / (e/n)) for n feasible), below the plain clone's."""
    plain = train(TrainConfig(seeds=[0, 1], k=K, max_nodes=60, max_pods=400, ppo_steps=0)).model
    res = train(TrainConfig(seeds=[0, 1], k=K, max_nodes=60, max_pods=400, ppo_steps=0, bc_smoothing=0.3))
    assert res.bc_accuracy >= 0.95 and res.model.meta["bc_smoothing"] == 0.3
    sure, soft = _margins(plain, 100), _margins(res.model, 100)
    assert len(soft) > 100
    bound = np.log((0.7 + 0.3 / K) / (0.3 / K))  # the target's margin with all K feasible (the largest)
    # measured: median 3.4 against 4.4 (bound 3.0; on seeds it did not clone, near it)
    assert 0 < np.median(soft) < bound + 1.0
    assert np.median(sure) > np.median(soft) + 0.5


def test_numpy_export_matches_torch(trained) -> None:
    res, path = trained
    model = load_model(path, k=K)
    obs = np.random.default_rng(0).uniform(-1, 1, (32, res.model.weights[0].shape[0])).astype(np.float32)
    with torch.no_grad():
        want = actor_logits(res.checkpoint.policy, torch.as_tensor(obs)).numpy()
    got = np.stack([model.logits(o) for o in obs])
    assert np.allclose(got, want, atol=1e-4)


def test_learned_plugin_places_as_the_environment(trained) -> None:
    _, path = trained
    model = load_model(path)
    for seed in VAL[:2]:
        prep = INST.prepare(seed)
        via_plugin = run(prep.nodes, prep.pods, "learned", seed, prep.typical, keep_snapshot=False,
                         config=learned_config(path, prep.typical), until_percent=100.5)
        via_env = _episode(seed, lambda ep: model.act(ep.pending.obs, ep.pending.mask)).result()
        assert np.array_equal(via_plugin.used_milli, via_env.used_milli)
        assert np.array_equal(via_plugin.placed, via_env.placed)


def test_scheduling_with_a_model_imports_no_torch(trained, tmp_path: Path) -> None:
    import subprocess
    import sys

    _, path = trained
    cfg = tmp_path / "learned.yaml"
    cfg.write_text(yaml.safe_dump(learned_config(path, INST.prepare(0).typical)))
    code = (
        "import sys; from kubesched.cli import main; rc = main(['schedule', '--config', sys.argv[1], '-o', 'json']);"
        "assert rc == 0, rc; assert 'torch' not in sys.modules and 'stable_baselines3' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code, str(cfg)], check=True, capture_output=True, timeout=120)


def test_learned_policy_beats_random_choice(trained) -> None:
    """Learning happened: on seeds it never saw, the exported policy leaves less GPU unallocated
    than picking uniformly among the same candidates."""
    _, path = trained
    typical = INST.prepare(0).typical
    learned = np.mean([evaluate(INST, learned_config(path, typical), s)[0] for s in VAL])
    rng = np.random.default_rng(0)
    rand = np.mean([
        _episode(s, lambda ep: int(rng.choice(np.flatnonzero(ep.pending.mask)))).result().unallocated_at(100)
        for s in VAL
    ])
    assert learned < rand


def test_bad_models_are_one_line(trained, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res, path = trained
    cases = {}
    cases["corrupt"] = tmp_path / "corrupt.npz"
    cases["corrupt"].write_bytes(path.read_bytes()[:200])
    cases["other-k"] = tmp_path / "k.npz"
    m = load_model(path)
    m.k = 4
    m.weights[-1] = m.weights[-1][:, :4]
    m.biases[-1] = m.biases[-1][:4]
    with pytest.raises(Exception, match="layer 0 has shape"):
        m.save(cases["other-k"])
        load_model(cases["other-k"])
    cases["features"] = tmp_path / "f.npz"
    m = load_model(path)
    m.features = [*m.features[:-1], "node.something_else"]
    m.save(cases["features"])
    with pytest.raises(Exception, match="made for K=8 candidates, not 16"):
        load_model(path, k=16)
    expect = {
        "corrupt": "not a readable .npz model",
        "other-k": "layer 0 has shape",
        "features": "features: trained on feature set",
    }
    typical = INST.prepare(0).typical
    for name, f in cases.items():
        cfg = tmp_path / f"{name}.yaml"
        cfg.write_text(yaml.safe_dump(learned_config(f, typical)))
        assert main(["schedule", "--config", str(cfg)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and expect[name] in err and str(f) in err, err


def test_train_cli_refuses_held_out_seeds(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["learn", "train", "--seeds", "40-45", "-d", str(tmp_path / "o")]) == 2
    assert "held out for evaluation" in capsys.readouterr().err
    assert main(["learn", "export", str(tmp_path / "missing.zip")]) == 2
    assert "missing.zip: no such file" in capsys.readouterr().err
