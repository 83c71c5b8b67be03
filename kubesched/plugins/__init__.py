"""Built-in plugins, named as kube-scheduler names them (v1.36 defaults), and the registry of
them every scheduler starts from (``in_tree_registry``, upstream's NewInTreeRegistry)."""

from kubesched.framework.registry import Registry

# name -> "module:Class"; imported lazily by the registry so start-up stays cheap.
BUILTIN: dict[str, str] = {
    "SchedulingGates": "kubesched.plugins.schedulinggates:SchedulingGates",
    "PrioritySort": "kubesched.plugins.queuesort:PrioritySort",
    "NodeUnschedulable": "kubesched.plugins.nodeunschedulable:NodeUnschedulable",
    "NodeName": "kubesched.plugins.nodename:NodeName",
    "TaintToleration": "kubesched.plugins.tainttoleration:TaintToleration",
    "NodeAffinity": "kubesched.plugins.nodeaffinity:NodeAffinity",
    "NodePorts": "kubesched.plugins.nodeports:NodePorts",
    "NodeResourcesFit": "kubesched.plugins.noderesources.fit:NodeResourcesFit",
    "VolumeRestrictions": "kubesched.plugins.volumerestrictions:VolumeRestrictions",
    "NodeVolumeLimits": "kubesched.plugins.nodevolumelimits:CSILimits",
    "VolumeBinding": "kubesched.plugins.volumebinding:VolumeBinding",
    "VolumeZone": "kubesched.plugins.volumezone:VolumeZone",
    "PodTopologySpread": "kubesched.plugins.podtopologyspread:PodTopologySpread",
    "InterPodAffinity": "kubesched.plugins.interpodaffinity:InterPodAffinity",
    "DynamicResources": "kubesched.plugins.dynamicresources:DynamicResources",
    "DefaultPreemption": "kubesched.plugins.defaultpreemption:DefaultPreemption",
    "NodeResourcesBalancedAllocation": "kubesched.plugins.noderesources.balanced_allocation:BalancedAllocation",
    "ImageLocality": "kubesched.plugins.imagelocality:ImageLocality",
    "DefaultBinder": "kubesched.plugins.defaultbinder:DefaultBinder",
    # kubesched's own strategies: known by name, not enabled by default; their args
    # reach the constructor raw and are validated there.
    "LowestLoad": "kubesched.plugins.lowestload:LowestLoad",
    "BusinessPriority": "kubesched.plugins.businesspriority:BusinessPriority",
    # LoadAware: scheduler-plugins' Trimaran scorers over Prometheus / simulator utilization
    "TargetLoadPacking": "kubesched.plugins.loadaware.targetloadpacking:TargetLoadPacking",
    "LoadVariationRiskBalancing": "kubesched.plugins.loadaware.loadvariationriskbalancing:LoadVariationRiskBalancing",
    # GPU sharing and the FGD paper's policies (docs/gpu-sharing.md): not enabled by
    # default; named as hkust-adsl/kubernetes-scheduler-simulator names them.
    "Open-Gpu-Share": "kubesched.plugins.gpushare.opengpushare:OpenGpuShare",
    "RandomScore": "kubesched.plugins.gpushare.random_score:RandomScore",
    "DotProductScore": "kubesched.plugins.gpushare.dotproduct:DotProductScore",
    "GpuClusteringScore": "kubesched.plugins.gpushare.clustering:GpuClusteringScore",
    "GpuPackingScore": "kubesched.plugins.gpushare.packing:GpuPackingScore",
    "BestFitScore": "kubesched.plugins.gpushare.bestfit:BestFitScore",
    "FGDScore": "kubesched.plugins.gpushare.fgd:FGDScore",
    # a node-selection policy learned with `kubesched learn`, run in numpy (docs/learning.md)
    "LearnedScore": "kubesched.plugins.learned:LearnedScore",
    # policies that look ahead (docs/learning.md): an offline packing plan, rollouts over FGD,
    # a value function of the whole cluster
    "PlanScore": "kubesched.plugins.lookahead.plan:PlanScore",
    "RolloutScore": "kubesched.plugins.lookahead.rollout:RolloutScore",
    "ValueScore": "kubesched.plugins.lookahead.value:ValueScore",
    # Gang scheduling and elastic quota, as scheduler-plugins ships them, with its
    # PodGroup / ElasticQuota objects (scheduling.x-k8s.io/v1alpha1); not enabled by default.
    "Coscheduling": "kubesched.plugins.coscheduling:Coscheduling",
    "CapacityScheduling": "kubesched.plugins.capacityscheduling:CapacityScheduling",
}


def in_tree_registry(*, entry_points: bool = True, import_module_names: bool = True) -> Registry:
    """A registry of the built-in plugins, plus installed entry points unless ``entry_points`` is False."""
    return Registry(BUILTIN, entry_points=entry_points, import_module_names=import_module_names)
