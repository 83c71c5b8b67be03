"""The cluster-level layer: which member clusters a workload goes to, with Karmada's semantics.

``api`` (Karmada's objects), ``framework`` and ``network`` (cluster plugins), ``spread`` and
``assign`` (selection and replica division), ``estimate`` and ``simulated`` (available replicas),
``scheduler`` (the pipeline), ``member`` and ``federation`` (members as kubesched clusters),
``load`` and ``cli`` (files and commands), ``experiment`` (the edge-cloud experiment).
See docs/multicluster.md.
"""
