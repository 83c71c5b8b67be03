"""The object model: Kubernetes objects parsed once, at the edge, into frozen validated values.

``objects`` (Pod, Node, Namespace, PriorityClass and the scheduler-plugins objects), ``quantity``
and ``resources`` (resource amounts), ``selectors``, ``taints`` and ``affinity`` (what a pod asks
of nodes and of other pods), ``load`` (cluster files and API lists into objects). Errors name the
field path; the loader adds the file.
"""
