"""Learning to schedule: policy search over the GPU scorers, reinforcement learning over the
simulator, the offline bound and the paired evaluation (docs/learning.md)."""
