"""Score plugins that look at where the cluster is heading (docs/learning.md): ``PlanScore``
steers by an offline packing plan of the expected pod-shape mix, ``RolloutScore`` simulates FGD
on sampled futures among FGD's near-ties, ``ValueScore`` asks a value function of the whole
cluster which of FGD's near-ties leaves it best placed."""
