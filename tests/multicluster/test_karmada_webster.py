"""Ported from Karmada v1.18 pkg/util/helper/webstermethod_test.go and binding_test.go (the Dispenser)."""

from __future__ import annotations

import pytest

from kubesched.multicluster.assign import (
    ClusterWeightInfo,
    Dispenser,
    Party,
    allocate_webster_seats,
    fnv32a,
    spread_replicas_by_target_clusters,
)
from tests.multicluster.karmada import MEMBER1, MEMBER2, MEMBER3, same, tc

VOTES = {"PartyA": 100000, "PartyB": 80000, "PartyC": 30000, "PartyD": 20000}


def _p(*rows):  # noqa: ANN002
    return [Party(n, v, s) for n, v, s in rows]


def test_ExampleAllocateWebsterSeats():
    got = allocate_webster_seats(4, {"Alpha": 1200, "Beta": 900, "Gamma": 400}, {})
    assert [(p.name, p.seats) for p in got] == [("Alpha", 2), ("Beta", 1), ("Gamma", 1)]


# TestAllocateWebsterSeats: the Sainte-Laguë example of Wikipedia, round by round, then edge cases
WEBSTER = [
    ("classic example, round 1", 1, VOTES, None, None, [1, 0, 0, 0]),
    ("classic example, round 2", 2, VOTES, None, None, [1, 1, 0, 0]),
    ("classic example, round 3", 3, VOTES, None, None, [2, 1, 0, 0]),
    ("classic example, round 4", 4, VOTES, None, None, [2, 1, 1, 0]),
    ("classic example, round 5", 5, VOTES, None, None, [2, 2, 1, 0]),
    ("classic example, round 6", 6, VOTES, None, None, [2, 2, 1, 1]),
    ("classic example, round 7", 7, VOTES, None, None, [3, 2, 1, 1]),
    ("classic example, round 8", 8, VOTES, None, None, [3, 3, 1, 1]),
]


@pytest.mark.parametrize("name,seats,votes,initial,tie,want", WEBSTER, ids=[w[0] for w in WEBSTER])
def test_AllocateWebsterSeats_classic(name, seats, votes, initial, tie, want):
    got = allocate_webster_seats(seats, votes, initial or {}, tie)
    assert got == _p(*[(n, VOTES[n], s) for n, s in zip(sorted(VOTES), want, strict=True)])


EDGE = [
    ("empty party votes, expect nil result", 1, {}, {}, None, []),
    ("party votes not empty, newSeats is 0, expect all seats 0", 0, {"PartyA": 100, "PartyB": 200}, {}, None,
     [("PartyA", 100, 0), ("PartyB", 200, 0)]),
    ("both party votes and newSeats are 0, expect nil result", 0, {}, {}, None, []),
    ("tie-breaker is nil, expect break tie by seats", 1, {"PartyA": 3, "PartyB": 1}, {"PartyA": 1, "PartyB": 0}, None,
     [("PartyA", 3, 1), ("PartyB", 1, 1)]),
    ("tie-breaker is nil, expect break tie by name", 1, {"PartyA": 1, "PartyB": 1}, {}, None,
     [("PartyA", 1, 1), ("PartyB", 1, 0)]),
    ("custom tie-breaker returns true, expect custom tie-breaker controls seat", 1, {"PartyA": 1, "PartyB": 1}, {},
     lambda a, b: a.name < b.name, [("PartyA", 1, 1), ("PartyB", 1, 0)]),
    ("custom tie-breaker returns false, expect custom tie-breaker controls seat", 1, {"PartyA": 1, "PartyB": 1}, {},
     lambda a, b: a.name > b.name, [("PartyA", 1, 0), ("PartyB", 1, 1)]),
    ("non-initial allocation, new party joins, only new party gets new seats", 2, {"NewParty1": 1, "NewParty2": 1},
     {"OldParty": 0}, None, [("NewParty1", 1, 1), ("NewParty2", 1, 1), ("OldParty", 0, 0)]),
    ("non-initial allocation, both new and old parties compete for new seats", 2, {"OldParty": 1, "NewParty": 1},
     {"OldParty": 1}, None, [("NewParty", 1, 2), ("OldParty", 1, 1)]),
    ("non-initial allocation, initialAssignments party not in partyVotes, expect no new seats for that party", 2,
     {"PartyA": 100}, {"PartyB": 3}, None, [("PartyA", 100, 2), ("PartyB", 0, 3)]),
]


@pytest.mark.parametrize("name,seats,votes,initial,tie,want", EDGE, ids=[e[0] for e in EDGE])
def test_AllocateWebsterSeats(name, seats, votes, initial, tie, want):
    assert allocate_webster_seats(seats, votes, initial, tie) == _p(*want)


EMPTY_UID, EVEN_UID, ODD_UID = "", "4858ca61-3ff8-4095-8267-f3d059d8074c", "d43fdeeb-d750-4e2b-bee3-64eb94534f4c"


def test_uid_parity_matches_fnv32a():
    assert fnv32a(b"") == 0x811C9DC5  # the FNV-32a offset basis
    assert fnv32a(EVEN_UID.encode()) & 1 == 0 and fnv32a(ODD_UID.encode()) & 1 == 1


ABC = [("A", 1), ("B", 2), ("C", 3)]
DISPENSER = [
    ("Scale up 6 replicas", 6, EMPTY_UID, ABC, ABC, [("A", 2), ("B", 4), ("C", 6)]),
    ("Scale up 3 replicas", 3, EMPTY_UID, ABC, ABC, [("A", 2), ("B", 3), ("C", 4)]),
    ("Scale up 2 replicas", 2, EMPTY_UID, ABC, ABC, [("A", 1), ("B", 3), ("C", 4)]),
    ("HA scenario with weight 2:1: assign 1 replica", 1, EMPTY_UID, [], [("A", 2), ("B", 1)], [("A", 1), ("B", 0)]),
    ("HA scenario with weight 2:1: assign 2 replicas", 2, EMPTY_UID, [], [("A", 2), ("B", 1)], [("A", 1), ("B", 1)]),
    ("HA scenario with weight 2:1: assign 3 replicas", 3, EMPTY_UID, [], [("A", 2), ("B", 1)], [("A", 2), ("B", 1)]),
    ("brand new assign 5 replicas", 5, EMPTY_UID, [], [("A", 170), ("B", 110), ("C", 60)], [("A", 2), ("B", 2), ("C", 1)]),
    ("brand new assign 6 replicas", 6, EMPTY_UID, [], [("A", 170), ("B", 110), ("C", 60)], [("A", 3), ("B", 2), ("C", 1)]),
    ("brand new assign 5 replicas with odd uuid", 5, ODD_UID, [], [("A", 1), ("B", 1)], [("A", 2), ("B", 3)]),
    ("brand new assign 5 replicas with even uuid", 5, EVEN_UID, [], [("A", 1), ("B", 1)], [("A", 3), ("B", 2)]),
]


@pytest.mark.parametrize("name,new,uid,initial,weights,want", DISPENSER, ids=[d[0] for d in DISPENSER])
def test_dispenser_AllocateByWeight(name, new, uid, initial, weights, want):
    d = Dispenser(new, tc(initial), uid)
    d.allocate_by_weight([ClusterWeightInfo(n, w) for n, w in weights])
    assert d.done
    assert same(d.result, tc(want))


SPREAD = [
    ("empty clusters", [], 10, [[]]),
    ("1 cluster, 5 replicas, 10 sum", [(MEMBER1, 5)], 10, [[(MEMBER1, 10)]]),
    ("3 cluster, 1:1:1, 12 sum", [(MEMBER1, 5), (MEMBER2, 5), (MEMBER3, 5)], 12, [[(MEMBER1, 4), (MEMBER2, 4), (MEMBER3, 4)]]),
    ("3 cluster, 1:1:1, 10 sum", [(MEMBER1, 5), (MEMBER2, 5), (MEMBER3, 5)], 10,
     [[(MEMBER1, 4), (MEMBER2, 3), (MEMBER3, 3)], [(MEMBER1, 3), (MEMBER2, 4), (MEMBER3, 3)], [(MEMBER1, 3), (MEMBER2, 3), (MEMBER3, 4)]]),
    ("3 cluster, 1:2:3, 13 sum", [(MEMBER1, 1), (MEMBER2, 2), (MEMBER3, 3)], 13, [[(MEMBER1, 2), (MEMBER2, 4), (MEMBER3, 7)]]),
]


@pytest.mark.parametrize("name,clusters,total,wants", SPREAD, ids=[s[0] for s in SPREAD])
def test_DispenseReplicasByTargetClusters(name, clusters, total, wants):
    got = spread_replicas_by_target_clusters(total, tc(clusters), [], "")
    assert any(same(got, tc(w)) for w in wants), got
