"""Trace loaders (openb) and the FGD paper's experiment protocol (``kubesched.trace.protocol``)."""
