"""The HTTP layer the scheduler serves on: the server (``httpd``: limits, deadlines, TLS), access
control (``security``) and Prometheus metrics (``metrics``), used by ``kubesched run`` and the
extender (``kubesched.extender``).

Everything here validates at the edge (a bad request is HTTP 4xx with one line naming the field).
"""
