"""InterPodAffinity, laid out as kube-scheduler's plugins/interpodaffinity: filtering, scoring, plugin."""

from kubesched.plugins.interpodaffinity.plugin import InterPodAffinity

__all__ = ["InterPodAffinity"]
