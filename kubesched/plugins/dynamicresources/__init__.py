"""DynamicResources: pods' ResourceClaims allocated with structured parameters (DRA)."""

from kubesched.plugins.dynamicresources.plugin import NAME, DynamicResources

__all__ = ["NAME", "DynamicResources"]
