"""ElasticQuotaInfo: ports of scheduler-plugins' pkg/capacityscheduling/elasticquota_test.go.

TestReserveResource, TestUnReserveResource, TestUsedOverMinWith, TestUsedOverMaxWith,
TestUsedOverMin and TestNewElasticQuotaInfo, case by case (amounts as framework.Resource fields).
"""

from __future__ import annotations

import pytest
from quota_testlib import GPU, MID, qpod

from kubesched.api.objects import Pod
from kubesched.plugins.capacityscheduling.quota import (
    UPPER_BOUND_OF_MAX,
    ElasticQuotaInfo,
    ElasticQuotaInfos,
    add,
    as_resource,
    is_scalar,
    pod_request,
)


def R(**kw: int) -> dict[str, int]:
    """framework.Resource{MilliCPU, Memory, EphemeralStorage, ScalarResources{GPU}}."""
    names = {"milli_cpu": "cpu", "memory": "memory", "ephemeral": "ephemeral-storage", "gpu": GPU}
    return as_resource({names[k]: v for k, v in kw.items()})


def info(used: dict | None = None, min: dict | None = None, max: dict | None = None) -> ElasticQuotaInfo:
    return ElasticQuotaInfo("ns1", min, max, used if used is not None else R())


PODS = [
    qpod("t1-p1", "ns1", 50, 1000, 1, MID, "t1-p1"),
    qpod("t1-p2", "ns2", 100, 2000, 0, MID, "t1-p2"),
    qpod("t1-p3", "ns2", 0, 0, 2, MID, "t1-p3"),
]


def test_reserve_resource() -> None:
    used = R(milli_cpu=1000, memory=200, gpu=2)
    for d in PODS:
        add(used, pod_request(Pod.parse(d).requests))
    assert used == R(milli_cpu=4000, memory=350, gpu=5)


def test_unreserve_resource() -> None:
    used = R(milli_cpu=4000, memory=200, gpu=5)
    for d in PODS:
        add(used, {k: -v for k, v in pod_request(Pod.parse(d).requests).items()})
    assert used == R(milli_cpu=1000, memory=50, gpu=2)


@pytest.mark.parametrize(
    ("name", "eq", "req", "want"),
    [
        ("Sum Of PodRequest And Used Is Bigger Than Min",
         info(R(milli_cpu=4000, memory=200, gpu=5), min=R(milli_cpu=3000, memory=100, gpu=5)),
         R(milli_cpu=1500, memory=100), True),
        ("Sum Of PodRequest And Used Is Not Bigger Than Min",
         info(R(milli_cpu=300, memory=100, gpu=5), min=R(milli_cpu=4000, memory=200, gpu=5)),
         R(milli_cpu=100, memory=50), False),
        ("ElasticQuotaInfo Doesn't Have Min", info(R(milli_cpu=3900, memory=100, gpu=5)), R(milli_cpu=100, memory=100), True),
        ("Used And Min Don't Have GPU Value",
         info(R(milli_cpu=10, memory=10), min=R(milli_cpu=3000, memory=100)),
         R(milli_cpu=10, memory=10, gpu=5), True),
        ("EphemeralStorage",
         info(R(milli_cpu=10, memory=10, ephemeral=10), min=R(milli_cpu=3000, memory=100, ephemeral=100)),
         R(milli_cpu=10, memory=10, ephemeral=10), False),
    ],
)
def test_used_over_min_with(name: str, eq: ElasticQuotaInfo, req: dict, want: bool) -> None:
    assert eq.used_over_min_with(req) is want


@pytest.mark.parametrize(
    ("name", "eq", "req", "want"),
    [
        ("Sum Of PodRequest And Used Is Bigger Than Max",
         info(R(milli_cpu=4000, memory=200, gpu=5), max=R(milli_cpu=4000, memory=200, gpu=5)),
         R(milli_cpu=100, memory=100), True),
        ("Sum Of PodRequest And Used Is Not Bigger Than Max",
         info(R(milli_cpu=3900, memory=100, gpu=5), max=R(milli_cpu=4000, memory=200, gpu=5)),
         R(milli_cpu=100, memory=100), False),
        ("ElasticQuotaInfo Doesn't Have Max", info(R(milli_cpu=3900, memory=100, gpu=5)), R(milli_cpu=100, memory=100), False),
        ("Used And Max Don't Have GPU Value",
         info(R(milli_cpu=10, memory=10), max=R(milli_cpu=3000, memory=100)),
         R(milli_cpu=10, memory=10, gpu=5), False),
        ("EphemeralStorage",
         info(R(milli_cpu=10, memory=10, ephemeral=10), max=R(milli_cpu=3000, memory=100, ephemeral=100)),
         R(milli_cpu=10, memory=10, ephemeral=100), True),
    ],
)
def test_used_over_max_with(name: str, eq: ElasticQuotaInfo, req: dict, want: bool) -> None:
    assert eq.used_over_max_with(req) is want


@pytest.mark.parametrize(
    ("name", "eq", "want"),
    [
        ("Used Is Bigger Than Min", info(R(milli_cpu=4000, memory=200, gpu=5), min=R(milli_cpu=3000, memory=300, gpu=5)), True),
        ("Used Is Not Bigger Than Min", info(R(milli_cpu=300, memory=100, gpu=5), min=R(milli_cpu=4000, memory=200, gpu=5)), False),
        ("ElasticQuotaInfo Doesn't Have Min", info(R(milli_cpu=3900, memory=100, gpu=5)), True),
        ("Used Has GPU But Min Doesn't Have GPU", info(R(milli_cpu=300, memory=100, gpu=5), min=R(milli_cpu=4000, memory=200)), True),
        ("EphemeralStorage", info(R(milli_cpu=300, memory=100, ephemeral=100), min=R(milli_cpu=4000, memory=200, ephemeral=10)), True),
    ],
)
def test_used_over_min(name: str, eq: ElasticQuotaInfo, want: bool) -> None:
    assert eq.used_over_min() is want


@pytest.mark.parametrize(
    ("name", "min", "max", "want_min", "want_max"),
    [
        ("ElasticQuota", {"cpu": 10, "memory": 100}, {"cpu": 100, "memory": 1000}, R(milli_cpu=10, memory=100), R(milli_cpu=100, memory=1000)),
        ("ElasticQuota Without Max", {"cpu": 10, "memory": 100}, None, R(milli_cpu=10, memory=100),
         R(milli_cpu=UPPER_BOUND_OF_MAX, memory=UPPER_BOUND_OF_MAX, ephemeral=UPPER_BOUND_OF_MAX)),
        ("ElasticQuota Without Min", None, {"cpu": 100, "memory": 1000}, R(), R(milli_cpu=100, memory=1000)),
        ("ElasticQuota Without Max and Min", None, None, R(),
         R(milli_cpu=UPPER_BOUND_OF_MAX, memory=UPPER_BOUND_OF_MAX, ephemeral=UPPER_BOUND_OF_MAX)),
    ],
)
def test_new_elastic_quota_info(name: str, min: dict | None, max: dict | None, want_min: dict, want_max: dict) -> None:
    eq = ElasticQuotaInfo.new("ns1", min, max, {"cpu": 0, "memory": 0})
    assert (eq.min, eq.max, eq.used, eq.pods) == (want_min, want_max, R(), set())


def test_a_max_without_cpu_caps_cpu_at_zero_as_upstream() -> None:
    eq = ElasticQuotaInfo.new("ns1", None, {GPU: 4})
    assert eq.used_over_max_with(R(milli_cpu=1))  # cpu missing from a given max: 0
    assert not eq.used_over_max_with(R(gpu=4)) and eq.used_over_max_with(R(gpu=5))


def test_aggregated_used_over_min_with() -> None:
    infos = ElasticQuotaInfos(
        ns1=ElasticQuotaInfo.new("ns1", {"memory": 1000}, {"memory": 2000}, {"memory": 1800}),
        ns2=ElasticQuotaInfo.new("ns2", {"memory": 1000}, {"memory": 2000}, {"memory": 200}),
    )
    assert not infos.aggregated_used_over_min_with(R(memory=0))
    assert infos.aggregated_used_over_min_with(R(memory=1))  # 2000 used of 2000 min: nothing left to borrow


def test_add_and_delete_count_a_pod_once() -> None:
    eq = ElasticQuotaInfo.new("ns1", None, None)
    eq.add_pod_if_not_present("a", R(memory=5))
    eq.add_pod_if_not_present("a", R(memory=5))
    eq.delete_pod_if_present("b", R(memory=5))
    assert eq.used["memory"] == 5 and eq.pods == {"a"}
    eq.delete_pod_if_present("a", R(memory=5))
    assert eq.used["memory"] == 0 and eq.pods == set()


@pytest.mark.parametrize(
    ("name", "scalar"),
    [("nvidia.com/gpu", True), ("hugepages-2Mi", True), ("attachable-volumes-aws-ebs", True),
     ("kubernetes.io/batch-cpu", True), ("requests.example.com/x", False), ("foo", False), ("cpu", False)],
)
def test_is_scalar(name: str, scalar: bool) -> None:
    assert is_scalar(name) is scalar
