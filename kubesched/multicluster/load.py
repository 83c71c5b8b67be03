"""Read a multi-cluster setup from files: Karmada objects, resource templates, member cluster dumps.

``-f FILE`` holds Cluster, PropagationPolicy, ClusterPropagationPolicy and ClusterTaintPolicy
objects and the resource templates to propagate (Deployment, StatefulSet, ReplicaSet, Job, Pod). ``-f NAME=FILE``
is member cluster NAME's dump (anything ``kubesched schedule`` reads). A member without a Cluster
object gets one named after it; a Cluster without a dump is judged by its status alone. A Cluster's
``status.conditions`` taint it as Karmada's cluster controller and ClusterTaintPolicies would
(``kubesched.multicluster.failover.taint_by_conditions``).

Each template gets its policy as Karmada's detector picks it: a PropagationPolicy of its namespace
before any ClusterPropagationPolicy; among those, the highest ``spec.priority``, then the most
specific selector (by name, by label selector, by kind), then the first name alphabetically.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.api.fields import as_int32, as_map, as_str, str_map
from kubesched.api.objects import Pod
from kubesched.errors import InputError, join_path
from kubesched.load import kind_items, load_cluster, read_documents
from kubesched.multicluster.api import (
    CLUSTER_API,
    DEFAULT_RESOURCE_MODELS,
    POLICY_API,
    Binding,
    Cluster,
    ClusterTaintPolicy,
    PropagationPolicy,
    ResourceSelector,
    parse_cluster,
    parse_cluster_taint_policy,
    parse_policy,
)
from kubesched.multicluster.taints import cluster_conditions, taint_by_conditions

#: kubesched creates every replica it assigns in the member clusters (their schedulers place each):
#: the resource templates may ask for this many in all, which one process simulates in a minute.
MAX_REPLICAS = 100_000
TEMPLATE_KINDS = {"Deployment": "apps/v1", "StatefulSet": "apps/v1", "ReplicaSet": "apps/v1", "Job": "batch/v1", "Pod": "v1"}
MATCH_NAME, MATCH_LABELS, MATCH_ALL = 3, 2, 1


@dataclass
class Template:
    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    replicas: int
    pod: Pod
    source: str

    @property
    def key(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


@dataclass
class Setup:
    clusters: dict[str, Cluster] = field(default_factory=dict)
    dumps: dict[str, str] = field(default_factory=dict)  # member name -> dump file
    policies: list[PropagationPolicy] = field(default_factory=list)
    templates: list[Template] = field(default_factory=list)
    replicas: int = 0  # of all templates
    conditions: dict[str, dict[str, str]] = field(default_factory=dict)  # Cluster name -> status.conditions
    taint_policies: list[ClusterTaintPolicy] = field(default_factory=list)


def split_file_arg(arg: str) -> tuple[str | None, str]:
    """``NAME=FILE`` (a member dump) or ``FILE``."""
    name, sep, path = arg.partition("=")
    if sep and name and "/" not in name and not name.startswith("."):
        return name, path
    return None, arg


def read_setup(args: list[str], modeling: bool = True) -> Setup:
    """The objects of ``args`` (``-f`` values). ``modeling``: Karmada's CustomizedClusterResourceModeling
    gate (``parse_cluster``); a member with a dump and no Cluster object gets the Cluster Karmada
    creates when it joins, with the default models when the gate is on."""
    setup = Setup()
    for arg in args:
        member, path = split_file_arg(arg)
        if member is not None:
            if member in setup.dumps:
                raise InputError(f'member cluster "{member}" is given twice', source=arg)
            setup.dumps[member] = path
            continue
        for dpath, doc in read_documents(path):
            try:
                items = kind_items(dpath, doc)
            except InputError as e:
                raise e.within(source=path) from None
            for ipath, m in items:
                try:
                    _add(setup, m, ipath or "document", path, modeling)
                except InputError as e:
                    raise e.within(source=path) from None
    for name in setup.dumps:
        setup.clusters.setdefault(name, Cluster(name, resource_models=DEFAULT_RESOURCE_MODELS if modeling else ()))
    taint_by_conditions(setup.clusters, setup.conditions, setup.taint_policies)
    return setup


def _check_api(m: dict, path: str, want: str) -> None:
    got = m.get("apiVersion")
    if got is not None and got != want:
        raise InputError(f'unsupported apiVersion "{got}" for kind {m["kind"]} (expected {want})', path=join_path(path, "apiVersion"))


def _add(setup: Setup, m: dict, path: str, source: str, modeling: bool) -> None:
    kind = m["kind"]
    if kind == "Cluster":
        _check_api(m, path, CLUSTER_API)
        c = parse_cluster(m, path, modeling)
        if c.name in setup.clusters:
            raise InputError(f'duplicate Cluster "{c.name}"', path=path)
        setup.clusters[c.name] = c
        setup.conditions[c.name] = cluster_conditions(m, path)
    elif kind == "ClusterTaintPolicy":
        _check_api(m, path, POLICY_API)
        tp = parse_cluster_taint_policy(m, path)
        if any(q.name == tp.name for q in setup.taint_policies):
            raise InputError(f'duplicate ClusterTaintPolicy "{tp.name}"', path=path)
        setup.taint_policies.append(tp)
    elif kind in ("PropagationPolicy", "ClusterPropagationPolicy"):
        _check_api(m, path, POLICY_API)
        p = parse_policy(m, path)
        if any(q.kind == p.kind and q.namespace == p.namespace and q.name == p.name for q in setup.policies):
            raise InputError(f'duplicate {p.key}', path=path)
        setup.policies.append(PropagationPolicy(**{**p.__dict__, "source": source}))
    elif kind in TEMPLATE_KINDS:
        t = parse_template(m, path, source)
        setup.replicas += t.replicas
        if setup.replicas > MAX_REPLICAS:
            raise InputError(
                f"the resource templates ask for more than {MAX_REPLICAS:,} replicas in all (kubesched creates each "
                "in the member clusters)",
                path=join_path(path, "spec"),
            )
        setup.templates.append(t)
    elif kind in ("Node", "Namespace", "PriorityClass"):
        raise InputError(f'a {kind} belongs to a member cluster: give member dumps as NAME=FILE', path=join_path(path, "kind"))
    else:
        raise InputError(f'unknown kind "{kind}"', path=join_path(path, "kind"))


def parse_template(m: dict, path: str, source: str) -> Template:
    kind = m["kind"]
    api = TEMPLATE_KINDS[kind]
    _check_api(m, path, api)
    md = as_map(m.get("metadata"), join_path(path, "metadata"))
    mp = join_path(path, "metadata")
    name = as_str(md.get("name"), join_path(mp, "name"))
    if not name:
        raise InputError("metadata.name is required", path=join_path(mp, "name"))
    ns = as_str(md.get("namespace"), join_path(mp, "namespace")) or "default"
    spec = as_map(m.get("spec"), join_path(path, "spec"))
    sp = join_path(path, "spec")
    if kind == "Pod":
        replicas, pod_doc, pp = 1, {"metadata": {**md, "namespace": ns}, "spec": {**spec, "nodeName": ""}}, path
    else:
        tp = join_path(sp, "template")
        tmpl = as_map(spec.get("template"), tp)
        tmd = as_map(tmpl.get("metadata"), join_path(tp, "metadata"))
        pod_doc = {"metadata": {**tmd, "name": name, "namespace": ns}, "spec": tmpl.get("spec")}
        pp = tp
        if kind == "Job":
            par = _count(spec.get("parallelism"), join_path(sp, "parallelism"), 1)
            replicas = min(par, _count(spec.get("completions"), join_path(sp, "completions"), par))
        else:
            replicas = _count(spec.get("replicas"), join_path(sp, "replicas"), 1)
    pod = Pod.parse(pod_doc, pp)
    return Template(
        api, kind, ns, name, as_str(md.get("uid"), join_path(mp, "uid")),
        str_map(md.get("labels"), join_path(mp, "labels")), str_map(md.get("annotations"), join_path(mp, "annotations")),
        replicas, pod, source,
    )


def _count(value: object, path: str, default: int) -> int:
    """A replica count: an *int32 field, at least 0 (apps/v1 and batch/v1 validation)."""
    n = as_int32(value, path, default)
    assert n is not None
    if n < 0:
        raise InputError("must be greater than or equal to 0", path=path)
    return n


# ---- matching templates to policies (the detector) ----------------------------------------------
def selector_priority(t: Template, rs: ResourceSelector) -> int:
    """ResourceSelectorPriority: 0 no match, 1 kind, 2 label selector, 3 name."""
    if t.api_version != rs.api_version or t.kind != rs.kind or (rs.namespace and t.namespace != rs.namespace):
        return 0
    if rs.name:
        return MATCH_NAME if rs.name == t.name else 0
    if rs.label_selector is None:
        return MATCH_ALL
    return MATCH_LABELS if rs.label_selector.matches(t.labels) else 0


def match_policy(t: Template, policies: list[PropagationPolicy]) -> PropagationPolicy | None:
    for kind in ("PropagationPolicy", "ClusterPropagationPolicy"):
        best: PropagationPolicy | None = None
        best_key: tuple[int, int] | None = None
        for p in policies:
            if p.kind != kind or (kind == "PropagationPolicy" and p.namespace != t.namespace):
                continue
            implicit = max((selector_priority(t, rs) for rs in p.resource_selectors), default=0)
            if implicit == 0:
                continue
            key = (p.priority, implicit)
            if best_key is None or key > best_key or (key == best_key and p.name < best.name):  # type: ignore[union-attr]
                best, best_key = p, key
        if best is not None:
            return best
    return None


def has_requirements(pod: Pod) -> bool:
    """GenerateReplicaRequirements != nil: resource requests or a node claim."""
    na = pod.node_affinity
    required = getattr(na, "required", None) if na is not None else None
    return bool(any(v for v in pod.requests.values()) or pod.node_selector or required or pod.tolerations)


def to_binding(t: Template, policy: PropagationPolicy) -> Binding:
    return Binding(
        api_version=t.api_version,
        kind=t.kind,
        namespace=t.namespace,
        name=t.name,
        uid=t.uid,
        replicas=t.replicas,
        template=t.pod,
        placement=policy.placement,
        policy=policy.key,
        requirements=has_requirements(t.pod),
        labels=t.labels,
        annotations=t.annotations,
        failover=policy.failover,
        propagate_deps=policy.propagate_deps,
    )


def load_members(setup: Setup, config, registry, seed: int | None) -> list:  # noqa: ANN001 - lazy imports
    """MemberCluster for every Cluster, with the kubesched cluster of its dump when one was given."""
    from kubesched.multicluster.member import MemberCluster

    members = []
    for name, cluster in setup.clusters.items():
        objs = load_cluster([setup.dumps[name]]) if name in setup.dumps else None
        members.append(MemberCluster(cluster, objs, config, registry, seed))
    return members

