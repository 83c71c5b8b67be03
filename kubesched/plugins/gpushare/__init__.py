"""GPU-sharing plugins of the FGD paper's simulator (hkust-adsl/kubernetes-scheduler-simulator).

Open-Gpu-Share filters and reserves GPUs; RandomScore, DotProductScore, GpuClusteringScore,
GpuPackingScore, BestFitScore and FGDScore are its policies, with the simulator's integer
formulas. The GPU model they share lives in ``kubesched.gpu`` (see docs/gpu-sharing.md).
"""
