"""`kubesched bench`: kube-scheduler's scheduler_perf workloads, rebuilt in memory and measured.

templates (the upstream YAML templates as wire dicts), workloads (the registry by upstream
name), runner (build, schedule, measure), report (rich table and JSON), kernel (the bare numpy
fit-and-score loop the framework is compared with).
"""
