"""Entry points: load a KubeSchedulerConfiguration file or document into a ``SchedulerConfig``.

Any version (v1, v1beta3, v1beta2, v1beta1) is accepted and converted to v1 semantics; decoding is
strict like kube-scheduler's, and the first problem found is raised as one ``InputError`` line.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from kubesched.documents import load_documents, read_text
from kubesched.errors import InputError, join_path
from kubesched.framework.waiting import go_duration

from .decode import (
    Ctx,
    check_fields,
    expect_list,
    expect_map,
    fielded_items,
    opt_bool,
    opt_duration,
    opt_float,
    opt_int,
    opt_str,
    parse_duration,
    quote,
)
from .defaults import (
    CLIENT_CONNECTION_FIELDS,
    DEFAULT_PARALLELISM,
    DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE,
    DEFAULT_POD_INITIAL_BACKOFF_SECONDS,
    DEFAULT_POD_MAX_BACKOFF_SECONDS,
    EXTENDER_FIELDS,
    EXTENDER_TLS_FIELDS,
    LEADER_ELECTION_FIELDS,
    TOP_LEVEL_FIELDS,
    default_client_connection,
    default_leader_election,
)
from .field import Bare, duplicate, invalid, is_qualified_name, required
from .resolve import resolve_profile
from .types import KIND, SUPPORTED_VERSIONS, V1, PointsOf, SchedulerConfig

DEFAULTS_SOURCE = "<defaults>"


def default_config(points_of: PointsOf) -> SchedulerConfig:
    """The configuration kube-scheduler runs with when given none (v1 defaults)."""
    return parse_config({"apiVersion": V1, "kind": KIND}, DEFAULTS_SOURCE, points_of)


def load_config(path: str, points_of: PointsOf, *, plugin_names: Collection[str] = ()) -> SchedulerConfig:
    """Read a YAML or JSON config file; every problem is an InputError naming ``path``
    (``plugin_names``: see ``parse_config``)."""
    return parse_config(parse_document(read_text(path, "config file"), path), path, points_of, plugin_names=plugin_names)


def parse_document(text: str, source: str) -> Any:
    """The single YAML/JSON document in ``text``; malformed input names the file and line.

    Decoding is strict (duplicate keys are errors), as kube-scheduler's."""
    docs = load_documents(text, source)
    if not docs:
        raise InputError("empty document: expected a KubeSchedulerConfiguration", source=source)
    if len(docs) > 1:
        raise InputError(
            f"expected one YAML document, found {len(docs)} (a KubeSchedulerConfiguration is one document)",
            source=source,
        )
    return docs[0]


def parse_config(
    doc: Any, source: str, points_of: PointsOf, *, plugin_names: Collection[str] = ()
) -> SchedulerConfig:
    """Decode, default, convert and validate a KubeSchedulerConfiguration document.
    ``plugin_names`` (the registry's) are what an unknown plugin name is compared with for
    "did you mean"."""
    ctx = Ctx(source=source, version="", points_of=points_of, plugin_names=plugin_names)
    api_version = ctx.version = _api_version(ctx, doc)
    check_fields(ctx, doc, "", TOP_LEVEL_FIELDS[api_version])

    for removed in ("healthzBindAddress", "metricsBindAddress"):
        if doc.get(removed) is not None:
            opt_str(ctx, doc, removed, "")
            ctx.warn(
                removed,
                "ignored (removed in v1beta3; kubesched serves health and metrics on its own port)",
            )

    parallelism = _int_or(ctx, doc, "parallelism", DEFAULT_PARALLELISM)
    if parallelism <= 0:
        ctx.report("parallelism", invalid(parallelism, "should be an integer value greater than zero"))
    pct = _int_or(ctx, doc, "percentageOfNodesToScore", DEFAULT_PERCENTAGE_OF_NODES_TO_SCORE)
    if not 0 <= pct <= 100:
        ctx.report("percentageOfNodesToScore", invalid(pct, "not in valid range [0-100]"))
    initial = _int_or(ctx, doc, "podInitialBackoffSeconds", DEFAULT_POD_INITIAL_BACKOFF_SECONDS, bits=64)
    if initial <= 0:
        ctx.report("podInitialBackoffSeconds", invalid(initial, "must be greater than 0"))
    maximum = _int_or(ctx, doc, "podMaxBackoffSeconds", DEFAULT_POD_MAX_BACKOFF_SECONDS, bits=64)
    if maximum < initial:
        ctx.report("podMaxBackoffSeconds", invalid(maximum, "must be greater than or equal to PodInitialBackoffSeconds"))
    leader = _leader_election(ctx, doc.get("leaderElection"), "leaderElection")
    client = _client_connection(ctx, doc.get("clientConnection"), "clientConnection")
    profiling = opt_bool(ctx, doc, "enableProfiling", "")
    profiling = True if profiling is None else profiling
    contention = opt_bool(ctx, doc, "enableContentionProfiling", "")
    contention = profiling if contention is None else contention
    delay = opt_bool(ctx, doc, "delayCacheUntilActive", "") or False

    extenders, ignored_extended = _extenders(ctx, doc.get("extenders"), "extenders")

    results = _profiles(ctx, doc.get("profiles"), ignored_extended)
    ctx.check()

    return SchedulerConfig(
        api_version_loaded=api_version,
        parallelism=parallelism,
        percentage_of_nodes_to_score=pct,
        pod_initial_backoff_seconds=initial,
        pod_max_backoff_seconds=maximum,
        profiles=[r.profile for r in results],
        extenders=extenders,
        leader_election=leader,
        client_connection=client,
        explicit_fields=frozenset(
            f"{block}.{key}"
            for block in ("leaderElection", "clientConnection")
            for key, value in (doc.get(block) or {}).items()
            if value is not None and value != ""
        ),
        warnings=list(ctx.warnings),
        enable_profiling=profiling,
        enable_contention_profiling=contention,
        delay_cache_until_active=delay,
        source=source,
    )


def _api_version(ctx: Ctx, doc: Any) -> str:
    """The document's apiVersion, once it and its kind are known ones."""
    if doc is None:
        raise ctx.error(None, "empty document: expected a KubeSchedulerConfiguration")
    if not isinstance(doc, dict):
        raise ctx.error(None, f"expected a KubeSchedulerConfiguration mapping, got {_what(doc)}")
    api_version = doc.get("apiVersion")
    if api_version is None or api_version == "":
        raise ctx.error("apiVersion", f"required (one of {', '.join(SUPPORTED_VERSIONS)})")
    if api_version not in SUPPORTED_VERSIONS:
        raise ctx.error(
            "apiVersion", f"unknown value {quote(api_version)} (supported: {', '.join(SUPPORTED_VERSIONS)})"
        )
    kind = doc.get("kind")
    if kind is None or kind == "":
        raise ctx.error("kind", f'required ("{KIND}")')
    if kind != KIND:
        raise ctx.error("kind", f'unknown value {quote(kind)} (expected "{KIND}")')
    return api_version


def _profiles(ctx: Ctx, value: Any, ignored_extended: list[str]) -> list:
    """Each profile resolved; scheduler names unique, one queue sort for all."""
    raw_profiles = expect_list(ctx, value, "profiles") or [{}]
    single = len(raw_profiles) == 1
    results = [
        resolve_profile(ctx, raw, join_path("profiles", i), single=single, ignored_extended=ignored_extended)
        for i, raw in enumerate(raw_profiles)
    ]
    seen: dict[str, str] = {}
    for result in results:
        name = result.profile.scheduler_name
        if name in seen:  # the duplicate's value is the first one's path, printed bare
            ctx.report(join_path(result.path, "schedulerName"), duplicate(Bare(f"{seen[name]}.schedulerName")))
        seen[name] = result.path
    _check_common_queue_sort(ctx, results)
    return results


def _what(value: Any) -> str:
    from .decode import describe

    return describe(value)


def _int_or(ctx: Ctx, obj: dict, key: str, default: int, *, bits: int = 32) -> int:
    value = opt_int(ctx, obj, key, "", bits=bits)
    return default if value is None else value


def _check_common_queue_sort(ctx: Ctx, results: list) -> None:
    """validateCommonQueueSort: the one queue sort (and its args) is shared by every profile."""
    first = results[0].profile
    canon = first.names("queueSort")
    canon_args = first.plugin_args.get(canon[0]) if canon else None
    for result in results[1:]:
        prof = result.profile
        if prof.names("queueSort") != canon:
            ctx.report(
                join_path(join_path(result.path, "plugins"), "queueSort"),
                invalid(", ".join(prof.names("queueSort")), f"must be the same for all profiles (profiles[0]: {', '.join(canon)})"),
            )
            continue
        if prof.plugin_args.get(canon[0]) != canon_args:
            if result.queue_sort_config_path:
                where = f"{result.queue_sort_config_path}.args"
            else:
                where = join_path(result.path, "pluginConfig")
            ctx.report(where, invalid(canon[0], "queueSort must be the same for all profiles"))


def _leader_election(ctx: Ctx, raw: Any, path: str) -> dict:
    """component-base LeaderElectionConfiguration: defaults, then ValidateLeaderElectionConfiguration."""
    body = expect_map(ctx, raw, path)
    check_fields(ctx, body, path, LEADER_ELECTION_FIELDS)
    out = default_leader_election()
    elect = opt_bool(ctx, body, "leaderElect", path)
    if elect is not None:
        out["leaderElect"] = elect
    for key in ("leaseDuration", "renewDeadline", "retryPeriod"):
        value = opt_duration(ctx, body, key, path)
        if value is not None and parse_duration(value) != 0:
            out[key] = value
    for key in ("resourceLock", "resourceName", "resourceNamespace"):
        value = opt_str(ctx, body, key, path)
        if value:
            out[key] = value
    if out["leaderElect"]:
        lease, renew, retry = (
            parse_duration(out[k]) for k in ("leaseDuration", "renewDeadline", "retryPeriod")
        )
        # metav1.Duration prints through time.Duration.String() (10s, 1m30s), unquoted
        for key, value in (("leaseDuration", lease), ("renewDeadline", renew), ("retryPeriod", retry)):
            if value is not None and value <= 0:
                ctx.report(join_path(path, key), invalid(Bare(go_duration(value)), "must be greater than zero"))
        if lease is not None and renew is not None and lease <= renew:  # the value shown is RenewDeadline
            ctx.report(
                join_path(path, "leaseDuration"),
                invalid(Bare(go_duration(renew)), "LeaseDuration must be greater than RenewDeadline"),
            )
        if out["resourceLock"] != "leases":
            ctx.report(join_path(path, "resourceLock"), invalid(out["resourceLock"], 'resourceLock value must be "leases"'))
    return out


def _client_connection(ctx: Ctx, raw: Any, path: str) -> dict:
    """ClientConnectionConfiguration with the scheduler's QPS/burst defaults."""
    body = expect_map(ctx, raw, path)
    check_fields(ctx, body, path, CLIENT_CONNECTION_FIELDS)
    out = default_client_connection()
    for key in ("kubeconfig", "acceptContentTypes", "contentType"):
        value = opt_str(ctx, body, key, path)
        if value:
            out[key] = value
    qps = opt_float(ctx, body, "qps", path)
    if qps:
        out["qps"] = qps
    burst = opt_int(ctx, body, "burst", path)
    if burst is not None and burst < 0:
        ctx.report(join_path(path, "burst"), invalid(burst, "must be non-negative"))
    if burst:
        out["burst"] = burst
    return out


def _extended_resource_errors(name: str) -> list[str]:
    """validateExtendedResourceName: why ``name`` is not a qualified name, or else why it is not an
    extended resource name (v1helper.IsExtendedResourceName)."""
    reasons = is_qualified_name(name)
    if reasons:
        return reasons
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return ["is an invalid extended resource name"]
    if is_qualified_name("requests." + name):
        return ["is an invalid extended resource name"]
    return []


def _extenders(ctx: Ctx, raw: Any, path: str) -> tuple[list[dict], list[str]]:
    """Validated extender configs (validateExtenders) and their ignoredByScheduler resources."""
    out: list[dict] = []
    ignored: list[str] = []
    binders = 0
    managed_seen: set[str] = set()
    for _, ipath, body in fielded_items(ctx, raw, path, EXTENDER_FIELDS):
        url = opt_str(ctx, body, "urlPrefix", ipath) or ""
        if not url:  # kubesched's own check: an extender it serves or calls needs an address
            ctx.report(join_path(ipath, "urlPrefix"), required())
        ext: dict = {"urlPrefix": url}
        for verb in ("filterVerb", "preemptVerb", "prioritizeVerb", "bindVerb"):
            ext[verb] = opt_str(ctx, body, verb, ipath) or ""
        ext["weight"] = opt_int(ctx, body, "weight", ipath, bits=64) or 0
        if ext["prioritizeVerb"] and ext["weight"] <= 0:
            ctx.report(join_path(ipath, "weight"), invalid(ext["weight"], "must have a positive weight applied to it"))
        if ext["bindVerb"]:
            binders += 1
        ext["enableHTTPS"] = opt_bool(ctx, body, "enableHTTPS", ipath) or False
        tls = body.get("tlsConfig")
        if tls is not None:
            tpath = join_path(ipath, "tlsConfig")
            tls = expect_map(ctx, tls, tpath)
            check_fields(ctx, tls, tpath, EXTENDER_TLS_FIELDS)
            opt_bool(ctx, tls, "insecure", tpath)
            for key in EXTENDER_TLS_FIELDS - {"insecure"}:
                opt_str(ctx, tls, key, tpath)
            ext["tlsConfig"] = dict(tls)
        ext["httpTimeout"] = opt_duration(ctx, body, "httpTimeout", ipath) or "5s"
        ext["nodeCacheCapable"] = opt_bool(ctx, body, "nodeCacheCapable", ipath) or False
        ext["ignorable"] = opt_bool(ctx, body, "ignorable", ipath) or False
        managed = []
        mpath = join_path(ipath, "managedResources")
        for _, rpath, res in fielded_items(ctx, body.get("managedResources"), mpath, ("name", "ignoredByScheduler")):
            name = opt_str(ctx, res, "name", rpath) or ""
            npath = join_path(rpath, "name")
            for reason in _extended_resource_errors(name):
                ctx.report(npath, invalid(name, reason))
            if name in managed_seen:
                ctx.report(npath, invalid(name, "duplicate extender managed resource name"))
            managed_seen.add(name)
            ignored_by = opt_bool(ctx, res, "ignoredByScheduler", rpath) or False
            if ignored_by:
                ignored.append(name)
            managed.append({"name": name, "ignoredByScheduler": ignored_by})
        ext["managedResources"] = managed
        out.append(ext)
    if binders > 1:
        ctx.report(path, invalid(f"found {binders} extenders implementing bind", "only one extender can implement bind"))
    return out, ignored
