"""The scheduler extender: kube-scheduler's extender protocol (filter, prioritize, preempt, bind)
served over HTTP (``service``), its wire format (``wire``) and, when it binds, its own watch of
the cluster (``watch``). Built on the HTTP layer of ``kubesched.server`` and the live cluster
cache of ``kubesched.live``.
"""
