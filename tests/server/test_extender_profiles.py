"""Profiles and user plugins behind the extender: selection by schedulerName, plugin failures."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from extender_testlib import cluster_docs, post, preemptor_pod, running_extender, web_pod, write

PLUGINS = '''
from kubesched.framework.simple import filter_plugin, score_plugin


@filter_plugin("Picky")
def picky(pod, node):
    if pod.labels.get("boom"):
        raise RuntimeError("kaput")
    return int(node.name[1:]) % 2 == 0 or "node(s) are odd"


@score_plugin("Flat")
def flat(pod, node):
    if pod.labels.get("boom"):
        raise RuntimeError("kaput")
    return 50
'''

ALL = ["n1", "n2", "n3", "n4", "n5", "n6", "n7"]


@pytest.fixture
def server(tmp_path: Path):
    plugin_file = tmp_path / "myplugins.py"
    plugin_file.write_text(PLUGINS)
    config = tmp_path / "sched.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {
                        "schedulerName": "picky-scheduler",
                        "plugins": {
                            "filter": {"enabled": [{"name": "Picky"}]},
                            "score": {"enabled": [{"name": "Flat", "weight": 2}]},
                        },
                    },
                    {
                        "schedulerName": "taint-blind",
                        "plugins": {"filter": {"disabled": [{"name": "TaintToleration"}]}},
                    },
                    {
                        "schedulerName": "no-preemption",
                        "plugins": {"postFilter": {"disabled": [{"name": "DefaultPreemption"}]}},
                    },
                ],
            }
        )
    )
    cluster = write(tmp_path, "cluster.yaml", cluster_docs())
    with running_extender([cluster], config_path=str(config), plugin_paths=[str(plugin_file)]) as (ext, url):
        yield ext, url


def test_first_profile_and_user_filter_reasons(server):
    """default-scheduler is no profile here: the first one (picky-scheduler) answers."""
    _, url = server
    _, res = post(f"{url}/filter", {"Pod": web_pod(), "NodeNames": ALL})
    assert res["NodeNames"] == ["n6"]
    assert res["FailedNodes"] == {"n1": "Insufficient cpu", "n5": "node(s) are odd", "n7": "node(s) are odd"}


def test_profile_chosen_by_scheduler_name(server):
    _, url = server
    _, res = post(f"{url}/filter", {"Pod": web_pod(schedulerName="taint-blind"), "NodeNames": ALL})
    assert res["NodeNames"] == ["n2", "n5", "n6", "n7"]  # the tainted n2 passes without TaintToleration


def test_user_score_plugin_weight_in_the_rescale(server):
    _, url = server
    _, res = post(f"{url}/prioritize", {"Pod": web_pod(), "NodeNames": ["n6"]})
    assert len(res) == 1 and res[0]["Host"] == "n6" and 0 <= res[0]["Score"] <= 10


def test_plugin_failures(server):
    """filter: the protocol's Error field (kube-scheduler fails the pod); prioritize: HTTP 500."""
    _, url = server
    pod = web_pod()
    pod["metadata"]["labels"] = {"boom": "yes"}
    status, res = post(f"{url}/filter", {"Pod": pod, "NodeNames": ["n6"]})
    assert status == 200
    assert res == {
        "Nodes": None,
        "NodeNames": None,
        "FailedNodes": {},
        "FailedAndUnresolvableNodes": {},
        "Error": 'running "Picky" filter plugin: RuntimeError: kaput (node n6)',
    }
    status, body = post(f"{url}/prioritize", {"Pod": pod, "NodeNames": ["n6"]})
    assert status == 500
    assert body == 'prioritize: running Score plugins: plugin "Flat" failed with: RuntimeError: kaput (node n6)\n'
    assert post(f"{url}/filter", {"Pod": web_pod(), "NodeNames": ["n6"]})[1]["NodeNames"] == ["n6"]


def test_preempt_uses_the_profiles_filters(server):
    """n1 is odd: the Picky profile cannot place the pod there whatever is evicted; n6 is even."""
    _, url = server
    victims = {
        "n1": {"Pods": [{"UID": "default-low-a"}, {"UID": "default-low-b"}]},
        "n6": {"Pods": [{"UID": "default-busy6"}]},
    }
    pod = preemptor_pod()
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "3"
    _, res = post(f"{url}/preempt", {"Pod": pod, "NodeNameToMetaVictims": victims})
    assert res == {"NodeNameToMetaVictims": {"n6": {"Pods": [{"UID": "default-busy6"}], "NumPDBViolations": 0}}}


def test_preempt_without_a_preemption_plugin(server):
    """A profile without DefaultPreemption still selects victims with upstream's defaults."""
    _, url = server
    pod = preemptor_pod()
    pod["spec"]["schedulerName"] = "no-preemption"
    victims = {"n1": {"Pods": [{"UID": u} for u in ("default-low-a", "default-low-b", "default-mid")]}}
    _, res = post(f"{url}/preempt", {"Pod": pod, "NodeNameToMetaVictims": victims})
    assert res == {
        "NodeNameToMetaVictims": {
            "n1": {"Pods": [{"UID": "default-low-a"}, {"UID": "default-low-b"}], "NumPDBViolations": 1}
        }
    }
