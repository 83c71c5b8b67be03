"""``kubesched run``: the scheduling core as a secondary scheduler against a Kubernetes API.

Modules: ``client`` (raw-JSON requests over the official client), ``informer`` (list+watch),
``cache`` (deltas into the snapshot and queue), ``binding`` (the asynchronous binding cycle),
``backend`` (bindings, events, status patches, victims), ``leader`` (Lease), ``runner`` (the loop),
``cli`` (flags).
"""
