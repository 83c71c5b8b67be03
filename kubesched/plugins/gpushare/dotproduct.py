"""DotProductScore: Tetris-style alignment, preferring the node LEAST aligned with the pod.

With the paper's settings (GPU dimensions merged, both vectors divided by 128 CPUs and 8 GPUs):
``dot = (cpuLeft/128000)(cpu/128000) + (gpuLeft/8000)(gpu/8000)``, score ``int(100 (1 - dot/2))``;
0 where the node lacks the pod's CPU. ``gpuLeft`` sums the node's GPUs, ``gpu`` is count x milli.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kubesched.framework.plugin_args import args_body
from kubesched.plugins.gpushare import scores
from kubesched.plugins.gpushare.common import CpuGpuLeftScore

if TYPE_CHECKING:
    from kubesched.framework.handle import Handle

NAME = "DotProductScore"


class DotProductScore(CpuGpuLeftScore):
    name = NAME
    few_rows = staticmethod(scores.dotprod_rows)
    many_rows = staticmethod(scores.dotprod_array)

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        super().__init__(args, handle)
        args_body(NAME, args, ())
