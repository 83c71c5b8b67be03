"""CapacityScheduling: elastic quotas per namespace (scheduler-plugins' ElasticQuota objects)."""

from kubesched.plugins.capacityscheduling.plugin import NAME, CapacityScheduling, PreFilterState
from kubesched.plugins.capacityscheduling.quota import ElasticQuotaInfo, ElasticQuotaInfos
from kubesched.plugins.capacityscheduling.usage import QuotaTracker

__all__ = ["NAME", "CapacityScheduling", "ElasticQuotaInfo", "ElasticQuotaInfos", "PreFilterState", "QuotaTracker"]
