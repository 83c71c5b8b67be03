"""A filter plugin the concurrency tests hold shut: while armed, every call waits until the test
opens it, so a request that schedules or explains is provably still running when the test sends
its next request. Enabled by its module path, ``tests.ui.gate:Gate``."""

from __future__ import annotations

import threading

from kubesched.framework.simple import NodeFilterPlugin


class Gate(NodeFilterPlugin):
    name = "Gate"
    armed = False
    calls = 0  # filter calls, counted (the cancel tests read how far a run went)
    entered = threading.Event()  # set by the first call made while armed
    opened = threading.Event()

    @classmethod
    def arm(cls) -> None:
        cls.entered.clear()
        cls.opened.clear()
        cls.armed = True

    @classmethod
    def open(cls) -> None:
        cls.armed = False
        cls.opened.set()

    def filter_node(self, pod, node) -> bool:  # noqa: ANN001
        type(self).calls += 1
        if type(self).armed:
            type(self).entered.set()
            type(self).opened.wait(60)
        return True


CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    filter:
      enabled: [{name: "tests.ui.gate:Gate"}]
"""


def trusted_registry():  # noqa: ANN201
    """The registry `kubesched ui --config gated.yaml --import-plugins` would have: Gate resolved from
    the command line's configuration, so the page's what-if may name it (it may not import others)."""
    from kubesched.app import build_registry

    reg = build_registry()
    reg.resolve("tests.ui.gate:Gate")
    return reg
