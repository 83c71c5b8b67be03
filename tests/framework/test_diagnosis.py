"""FitError text, byte for byte as kube-scheduler's framework.FitError.Error()."""

import numpy as np

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
