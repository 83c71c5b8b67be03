"""Load-aware scoring as scheduler-plugins' Trimaran: TargetLoadPacking and LoadVariationRiskBalancing.

Utilization comes from Prometheus (``prometheus.py``, PromQL over node-exporter series, cached,
with a staleness limit), from the simulator's model (``Handle.utilization``), or, when neither
answers, from the pods' requests (``source.py``). Args: ``args.py``. Docs:
docs/plugins/TargetLoadPacking.md and docs/plugins/LoadVariationRiskBalancing.md.
"""

from kubesched.plugins.loadaware.loadvariationriskbalancing import LoadVariationRiskBalancing
from kubesched.plugins.loadaware.targetloadpacking import TargetLoadPacking

__all__ = ["LoadVariationRiskBalancing", "TargetLoadPacking"]
