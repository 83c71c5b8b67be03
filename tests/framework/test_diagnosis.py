"""FitError text, byte for byte as kube-scheduler's framework.FitError.Error()."""

import numpy as np
import pytest

from kubesched.framework.diagnosis import Diagnosis, NodeFailures, truncate_message
from kubesched.framework.status import Code, Status


def failures(plugin, rows, reasons, bits, code=Code.Unschedulable):
    n = len(rows)
    return NodeFailures(plugin, np.asarray(rows), np.full(n, int(code), np.int8), np.asarray(bits, np.int64), reasons)


def test_histogram_is_sorted_lexicographically_and_counts_every_reason():
    d = Diagnosis()
    d.failures.append(failures("NodeResourcesFit", [0, 1, 2], ("Insufficient cpu", "Insufficient memory"), [1, 3, 1]))
    d.failures.append(
        failures("NodeAffinity", [3, 4], ("node(s) didn't match Pod's node affinity/selector",), [1, 1],
                 Code.UnschedulableAndUnresolvable)
    )
    assert d.fit_error(5) == (
        "0/5 nodes are available: 1 Insufficient memory, 2 node(s) didn't match Pod's node affinity/selector, "
        "3 Insufficient cpu."
    )


def test_prefilter_message_replaces_the_histogram():
    d = Diagnosis(absent_status=Status(Code.UnschedulableAndUnresolvable, ("x",)), pre_filter_msg="x")
    assert d.fit_error(3) == "0/3 nodes are available: x."


def test_absent_nodes_take_the_absent_status_reason():
    d = Diagnosis(absent_status=Status(Code.UnschedulableAndUnresolvable, ("node(s) didn't satisfy plugin(s) [NodeAffinity]",)))
    d.failures.append(failures("TaintToleration", [0], ("node(s) had untolerated taint(s)",), [1]))
    assert d.fit_error(4) == (
        "0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )


def test_postfilter_message_is_appended_as_it_is():
    """FitError.Error() appends the PostFilter message with " %v": no period of its own, so the
    preemption text's own final period is the only one."""
    d = Diagnosis()
    d.failures.append(failures("NodeResourcesFit", [0, 1, 2], ("Insufficient cpu",), [1, 1, 1]))
    d.post_filter_msg = "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    assert d.fit_error(3) == (
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod."
    )


def test_truncate_message_caps_at_1024_with_ellipsis():
    assert truncate_message("a" * 1024) == "a" * 1024
    long = truncate_message("b" * 2000)
    assert len(long) == 1024 and long.endswith(" ...")


# ---- framework/types_test.go TestFitError_Error (all 8 cases) ---------------------------------
PRE = "Node(s) failed PreFilter plugin FalsePreFilter"
F1, F2 = "Node(s) failed Filter plugin FalseFilter-1", "Node(s) failed Filter plugin FalseFilter-2"
POST = "Error running PostFilter plugin FailedPostFilter"

FIT_ERROR_CASES = [
    # name, numAllNodes, per-node reasons (explicit statuses), PreFilterMsg, PostFilterMsg, want
    ("nodes failed Prefilter plugin", 3, [PRE] * 3, PRE, "",
     "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter."),
    ("nodes failed Prefilter plugin and the preemption also failed", 3, [PRE] * 3, PRE, POST,
     "0/3 nodes are available: Node(s) failed PreFilter plugin FalsePreFilter. "
     "Error running PostFilter plugin FailedPostFilter"),
    ("nodes failed one Filter plugin with an empty PostFilterMsg", 3, [F1] * 3, "", "",
     "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1."),
    ("nodes failed one Filter plugin with a non-empty PostFilterMsg", 3, [F1] * 3, "", POST,
     "0/3 nodes are available: 3 Node(s) failed Filter plugin FalseFilter-1. "
     "Error running PostFilter plugin FailedPostFilter"),
    ("nodes failed two Filter plugins with an empty PostFilterMsg", 3, [F1, F1, F2], "", "",
     "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, "
     "2 Node(s) failed Filter plugin FalseFilter-1."),
    ("nodes failed two Filter plugins with a non-empty PostFilterMsg", 3, [F1, F1, F2], "", POST,
     "0/3 nodes are available: 1 Node(s) failed Filter plugin FalseFilter-2, "
     "2 Node(s) failed Filter plugin FalseFilter-1. Error running PostFilter plugin FailedPostFilter"),
    ("failed to Permit on node", 1, ["Node failed Permit plugin Permit-1"], "", "",
     "0/1 nodes are available: 1 Node failed Permit plugin Permit-1."),
    ("failed to Reserve on node", 1, ["Node failed Reserve plugin Reserve-1"], "", "",
     "0/1 nodes are available: 1 Node failed Reserve plugin Reserve-1."),
]


@pytest.mark.parametrize(
    ("n", "reasons", "pre", "post", "want"), [c[1:] for c in FIT_ERROR_CASES], ids=[c[0] for c in FIT_ERROR_CASES]
)
def test_fit_error_error(n: int, reasons: list[str], pre: str, post: str, want: str) -> None:
    """NewNodeToStatus(explicit per-node statuses, UnschedulableAndUnresolvable without reasons)."""
    d = Diagnosis(absent_status=Status(Code.UnschedulableAndUnresolvable), pre_filter_msg=pre, post_filter_msg=post)
    for row, reason in enumerate(reasons):
        d.failures.append(failures("", [row], (reason,), [1]))
    assert d.fit_error(n) == want
