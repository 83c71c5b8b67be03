"""The attach-detach controller, as far as scheduling sees it.

NodeVolumeLimits counts a node's CSI volumes from the pods on it and from its VolumeAttachments
(the volumes a dump shows attached). A pod that leaves a node in the simulation (completed,
preempted, node removed) stops counting at once; the attachments of its volumes that no other
pod on the node uses are deleted here, as the attach-detach controller detaches them, so the
node's attach limit has room again.
"""

from __future__ import annotations

from collections.abc import Iterable

from kubesched.api.objects import Pod
from kubesched.framework.status import PluginError
from kubesched.plugins.nodevolumelimits import CSILimits
from kubesched.state.storage import Storage


def detach_unused(storage: Storage, node_name: str, gone: Pod, staying: Iterable[Pod]) -> list[str]:
    """Delete the VolumeAttachments on ``node_name`` of ``gone``'s CSI volumes that none of
    ``staying`` (the pods left on the node) uses; returns their names."""
    if not gone.volumes or not storage.attachments:
        return []
    csi_node = storage.csi_nodes.get(node_name)
    leaving: dict[str, str] = {}
    kept: dict[str, str] = {}
    try:
        CSILimits.attachable_volumes(gone, csi_node, storage, leaving, new_pod=False)
        if not leaving:
            return []
        for pod in staying:
            if pod.volumes:
                CSILimits.attachable_volumes(pod, csi_node, storage, kept, new_pod=False)
    except PluginError:
        return []  # a volume the scheduler cannot read either: left as it is
    detached = []
    for va in storage.attachments_on(node_name):
        info = CSILimits.attachment_volume(va, storage)
        if info is not None and info[0] in leaving and info[0] not in kept:
            detached.append(va)
    for va in detached:
        storage.remove(va)  # VolumeAttachmentDelete: pods waiting for the limit move
    return [va.name for va in detached]
