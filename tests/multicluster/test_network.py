"""The shipped Azure P95 table, the latency file, LatencyBudget and NetworkOverhead at the cluster level."""

from __future__ import annotations

import pytest

from kubesched.errors import InputError
from kubesched.multicluster.api import Binding, Cluster, Placement
from kubesched.multicluster.network import (
    MAX_COST,
    LatencyTable,
    NetworkOverhead,
    azure_table_path,
    parse_network,
)


def test_azure_table_is_the_articles_matrix():
    t = LatencyTable.read(azure_table_path())
    assert len(t.regions) == 54
    # spot checks against the article (July 30, 2026, P95 ms): rows are sources
    assert t.between("Japan East", "West US 2") == 103
    assert t.between("West US 2", "Japan East") == 102
    assert t.between("UK South", "UK West") == 9 and t.between("UK West", "UK South") == 10
    assert t.between("Brazil South", "Indonesia Central") == 348
    assert t.between("East US", "East US") == 0.0
    assert len(t.rtt) == 54 * 53  # every pair of distinct regions, no intra-region figure


def _net(**kw):  # noqa: ANN003
    doc = {"kind": "NetworkLatency", "accessRttMs": 5, "defaultClass": "batch",
           "classes": [{"name": "interactive", "budgetMs": 60}, {"name": "batch"}], **kw}
    return parse_network(doc, "")


def _b(region: str, cls: str = "interactive", depends: str = "") -> Binding:
    ann = {"kubesched.io/user-region": region, "kubesched.io/latency-class": cls}
    if depends:
        ann["kubesched.io/depends-on"] = depends
    return Binding("apps/v1", "Deployment", "default", "w", "", 1, None, Placement(), annotations=ann)


def test_network_overhead_cost_model_and_normalisation():
    net = _net()
    clusters = {n: Cluster(n, region=r, zone=z) for n, r, z in
                [("tokyo", "Japan East", "a"), ("osaka", "Japan West", "a"), ("seoul", "Korea Central", ""), ("nowhere", "", "")]}
    p = NetworkOverhead(net, clusters)
    b = _b("Japan East")
    costs = [p.score(b, clusters[n]) for n in ("tokyo", "osaka", "seoul", "nowhere")]
    assert costs == [5, 5 + 14, 5 + 35, MAX_COST]  # access, access + P95 between regions, unknown
    assert p.normalize(b, costs) == [100, 100 - int(100 * 14 / 95), 100 - int(100 * 35 / 95), 0]
    assert p.normalize(b, [7, 7]) == [100, 100]  # upstream: max == min scores MaxNodeScore - 0
    assert p.normalize(b, [0, 0]) == [0, 0]
    # a dependency on a placed workload: same cluster 0, same region and zone 1, other regions by the table
    net.placements["default/db"] = ["osaka"]
    dep = _b("Japan East", depends="db")
    assert p.score(dep, clusters["osaka"]) == 19 + 0 and p.score(dep, clusters["tokyo"]) == 5 + 14
    assert p.filter(_b("Japan East"), clusters["seoul"]).ok  # 40 ms <= 60
    res = p.filter(_b("West Europe"), clusters["seoul"])
    assert res.reasons == ("Cluster seoul does not meet several network requirements from Workload dependencies: Satisfied: 0 Violated: 1",)


@pytest.mark.parametrize(
    "doc,path",
    [
        ({"kind": "NetworkLatency", "classes": [{"name": "a", "budget": 3}]}, 'classes[0].budget: unknown field "budget"'),
        ({"kind": "NetworkLatency", "classes": [{"name": "a", "budgetMs": -1}]}, "classes[0].budgetMs"),
        ({"kind": "NetworkLatency", "defaultClass": "x"}, 'defaultClass: no class named "x"'),
        ({"kind": "NetworkLatency", "accessRtt": 3}, 'accessRtt: unknown field "accessRtt"'),
        ({"kind": "Latency"}, "kind"),
        # NaN and infinity are no milliseconds (NaN passed every comparison before)
        ({"kind": "NetworkLatency", "classes": [{"name": "a", "budgetMs": float("nan")}]}, "classes[0].budgetMs"),
        ({"kind": "NetworkLatency", "classes": [{"name": "a", "timeoutSeconds": float("nan")}]}, "classes[0].timeoutSeconds"),
        ({"kind": "NetworkLatency", "weight": 2**40}, "weight: invalid value 1099511627776"),
    ],
)
def test_bad_latency_files(doc, path):
    with pytest.raises(InputError) as e:
        parse_network(doc, "")
    assert path in str(e.value)


@pytest.mark.parametrize(
    "table,message",
    [
        # read as every input file is: a non-UTF-8 byte was a UnicodeDecodeError traceback
        (b"Source,A\nA,1\xff\n", "not UTF-8 text (byte 0xff at line 2"),
        (b"Source,A\nA,\x00\n", 'line 2: "\\x00" is not a number of milliseconds'),
        # infinite and negative round trips were taken as they came: int(inf) then failed in scoring
        (b"Source,A,B\nA,0,inf\n", 'line 2: "inf" is not a number of milliseconds, 0 or more'),
        (b"Source,A,B\nA,0,-4\n", 'line 2: "-4" is not a number of milliseconds'),
    ],
)
def test_bad_latency_tables_name_the_file(tmp_path, table, message):
    f = tmp_path / "rtt.csv"
    f.write_bytes(table)
    with pytest.raises(InputError) as e:
        LatencyTable.read(f)
    assert str(e.value).startswith(f"{f}: ") and message in str(e.value) and "\n" not in str(e.value)
