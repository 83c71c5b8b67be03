"""NodePool disruption budgets, ported from Karpenter's pkg/apis/v1/nodepool_budgets_test.go
("Budgets": GetAllowedDisruptionsByReason, AllowedDisruptions, IsActive), and the reader's
checks of the fields Karpenter's CRD validates."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kubesched.autoscale.nodepool import (
    DRIFTED,
    EMPTY,
    UNBOUNDED,
    UNDERUTILIZED,
    Budget,
    NodePool,
    read_node_pools,
)
from kubesched.errors import InputError

REASONS = (EMPTY, UNDERUTILIZED, DRIFTED)
H = 3600.0


def at(*args: int) -> float:
    """Seconds since the epoch of a UTC date (the provisioner's clock)."""
    return datetime(*args, tzinfo=UTC).timestamp()


NOW = at(2000, 6, 15, 12, 30, 30)  # "the middle of the year of 2000, the best year ever"


def budgets() -> list[Budget]:
    """The BeforeEach's six budgets."""
    return [
        Budget("10", "* * * * *", H),
        Budget("100", "* * * * *", H),
        Budget("100%", "* * * * *", H),
        Budget("15", "* * * * *", H, (DRIFTED, UNDERUTILIZED)),
        Budget("5", "* * * * *", H, (DRIFTED,)),
        Budget("0", "@weekly", H, (UNDERUTILIZED, DRIFTED, EMPTY)),
    ]


def pool(bs: list[Budget]) -> NodePool:
    return NodePool("np", budgets=tuple(bs))


def test_get_allowed_disruptions_by_reason():
    """GetAllowedDisruptionsByReason, 5 of 5 cases."""
    # should return 0 for all reasons if a budget is active for all reasons
    bs = budgets()
    bs[5] = Budget("0", "* * * * *", H, bs[5].reasons)
    assert [pool(bs).allowed_disruptions(NOW, 100, r) for r in REASONS] == [0, 0, 0]
    # should return MaxInt32 for all reasons when there are no active budgets
    bs = [Budget(b.nodes, "@yearly", H, b.reasons) for b in budgets()]
    assert [pool(bs).allowed_disruptions(NOW, 100, r) for r in REASONS] == [UNBOUNDED] * 3
    # should ignore reason-defined budgets when inactive
    bs = budgets()
    bs[3] = Budget("15", "@yearly", H, bs[3].reasons)
    bs[4] = Budget("5", "@yearly", H, bs[4].reasons)
    assert [pool(bs).allowed_disruptions(NOW, 100, r) for r in REASONS] == [10, 10, 10]
    # should return the budget for all disruption reasons when undefined
    assert [pool(budgets()[:1]).allowed_disruptions(NOW, 100, r) for r in REASONS] == [10, 10, 10]
    # should get the minimum budget for each reason
    bs = [*budgets(), Budget("4", "* * * * *", H, (EMPTY,))]
    assert pool(bs).allowed_disruptions(NOW, 100, EMPTY) == 4
    assert pool(bs).allowed_disruptions(NOW, 100, DRIFTED) == 5
    assert pool(bs).allowed_disruptions(NOW, 100, UNDERUTILIZED) == 10  # the reason-less budget wins


def test_allowed_disruptions():
    """AllowedDisruptions, 3 of 5 cases (an invalid schedule or nodes value cannot be built here:
    the reader refuses it, see test_reader_refuses_what_the_crd_refuses)."""
    bs = budgets()
    # should return MaxInt32 when a budget is inactive
    assert Budget("10", "@yearly", H).allowed(NOW, 100) == UNBOUNDED
    # should return the int value when a budget is active
    assert bs[0].allowed(NOW, 100) == 10
    # should return the string value when a budget is active
    assert bs[2].allowed(NOW, 100) == 100


def test_percentages_round_up():
    # 5 % of 10 nodes: one node rather than none (as PDBs' maxUnavailable)
    assert Budget("5%").allowed(NOW, 10) == 1
    assert Budget("10%").allowed(NOW, 0) == 0
    assert Budget("50%").allowed(NOW, 7) == 4


def test_is_active():
    """IsActive, 6 of 7 cases (the cron parse error's text is robfig/cron's; here the reader
    refuses such a schedule)."""
    # should always consider a schedule and time in UTC: June 0 2000 00:00 at UTC+1 is
    # May 30 23:00 UTC, 23 hours after the daily hit, outside its 30 minutes
    assert not Budget("10", "@daily", 30 * 60).is_active(at(2000, 5, 30, 23, 0, 0))
    # should return that a schedule is active when schedule and duration are nil
    assert Budget("10").is_active(NOW)
    # should return that a schedule is active
    assert budgets()[0].is_active(NOW)
    # should return that a schedule is inactive
    assert not Budget("10", "@yearly", H).is_active(NOW)
    # active when the schedule hit is in the middle of the duration (here 1970: Python's dates
    # start at year 1, but the clock is seconds since 1970)
    assert Budget("10", "@yearly", 24 * H).is_active(at(1971, 1, 1, 12, 0, 0))
    # active when the duration is longer than the recurrence
    assert Budget("10", "@daily", 48 * H).is_active(at(2024, 1, 7, 0, 0, 0))
    # inactive when the schedule hit is after the duration: Sunday 2024-01-07 00:00 is before
    # that day's 06:30 hit, and the previous Sunday's window closed at 12:30
    assert not Budget("10", "30 6 * * SUN", 6 * H).is_active(at(2024, 1, 7, 0, 0, 0))


def test_window_opens_and_closes():
    b = Budget("0", "0 9 * * 1-5", 8 * H)  # no disruption 09:00-17:00 on weekdays
    monday = at(2024, 1, 8, 0, 0, 0)
    assert [b.allowed(monday + h * H, 10) for h in (8, 9, 12, 16, 17, 20)] == [UNBOUNDED, 0, 0, 0, UNBOUNDED, UNBOUNDED]
    assert b.allowed(at(2024, 1, 13, 12, 0, 0), 10) == UNBOUNDED  # Saturday


def doc(**disruption) -> dict:
    return {
        "apiVersion": "karpenter.sh/v1",
        "kind": "NodePool",
        "metadata": {"name": "default"},
        "spec": {"template": {"spec": {"requirements": []}}, "disruption": disruption},
    }


def test_reader_reads_budgets():
    (p,) = read_node_pools([doc(budgets=[{"nodes": "20%", "reasons": ["Empty", "Drifted"]}, {"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"}])])
    assert p.budgets == (Budget("20%", None, None, (EMPTY, DRIFTED)), Budget("0", "0 9 * * mon-fri", 8 * H, None))
    (q,) = read_node_pools([doc()])
    assert q.budgets == (Budget("10%"),)  # the CRD's default: one budget of 10 %


@pytest.mark.parametrize(
    ("budget", "path", "text"),
    [
        ({"nodes": "1000a%"}, "budgets[0].nodes", 'invalid value "1000a%"'),
        ({"nodes": "101%"}, "budgets[0].nodes", 'invalid value "101%"'),
        ({"nodes": 3}, "budgets[0].nodes", "number 3"),
        ({"nodes": "1", "schedule": "@wrongly", "duration": "1h"}, "budgets[0].schedule", 'invalid value "@wrongly"'),
        ({"nodes": "1", "schedule": "0 0 * * * *", "duration": "1h"}, "budgets[0].schedule", "5 fields"),
        ({"nodes": "1", "schedule": "0 0 * *", "duration": "1h"}, "budgets[0].schedule", "5 fields"),
        ({"nodes": "1", "schedule": "@daily"}, "budgets[0]", "'schedule' must be set with 'duration'"),
        ({"nodes": "1", "duration": "1h"}, "budgets[0]", "'schedule' must be set with 'duration'"),
        ({"nodes": "1", "schedule": "@daily", "duration": "30s"}, "budgets[0].duration", 'invalid value "30s"'),
        ({"nodes": "1", "reasons": ["Expired"]}, "budgets[0].reasons[0]", 'unknown reason "Expired"'),
    ],
)
def test_reader_refuses_what_the_crd_refuses(budget, path, text):
    with pytest.raises(InputError) as e:
        read_node_pools([doc(budgets=[budget])], "as.yaml")
    assert e.value.source == "as.yaml"
    assert e.value.path == f"nodePools[0].spec.disruption.{path}"
    assert text in str(e.value)
