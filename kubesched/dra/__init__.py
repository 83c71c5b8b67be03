"""Dynamic Resource Allocation (resource.k8s.io/v1) with structured parameters.

``objects``: DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate and the pod's
references to claims, parsed once. ``validation``: what the API server checks of them. ``cel``:
device selectors in CEL. ``allocator``: the structured allocator of
k8s.io/dynamic-resource-allocation. ``store``: the objects of one cluster, as the scheduler's
listers see them (claims from templates included). The DynamicResources plugin is in
``kubesched.plugins.dynamicresources``.
"""
