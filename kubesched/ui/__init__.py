"""``kubesched ui``: a web page over a cluster, a simulation or an experiment (``server``: the
Starlette app and its JSON API; ``views``, ``timeline``, ``whatif``: what the API answers)."""
