"""Who hears plugin calls: observers (each call's time and status: the per-plugin metrics, the
UI's timings) and recorders (each call's arguments and result: the UI's per-point results), as
``Framework.call`` tells them while some observer is added (``Framework.add_observer``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kubesched.framework.status import Status

#: Observer of plugin executions: (plugin, extension point, status code name, seconds).
PluginObserver = Callable[[str, str, str, float], None]
#: Recorder of what plugin calls returned, heard while an observer is added: (plugin, extension
#: point, the call's arguments, its result: a Status, PreFilterResult, (status, timeout), ...; a
#: failure's Status).
PluginRecorder = Callable[[str, str, tuple[Any, ...], Any], None]


def tell(observers: list[PluginObserver], plugin: str, point: str, code: str, seconds: float) -> None:
    for observer in observers:
        observer(plugin, point, code, seconds)


def record(recorders: list[PluginRecorder], plugin: str, point: str, args: tuple[Any, ...], out: Any) -> None:
    for recorder in recorders:
        recorder(plugin, point, args, out)


def code_of(out: Any) -> str:
    """The status code name a plugin call returned, for the observers: a Status, or one inside a
    tuple (Permit's (status, timeout), PostFilter's (node, status)); anything else is Success."""
    if isinstance(out, Status):
        return out.code.name
    if isinstance(out, tuple):
        for x in out:
            if isinstance(x, Status):
                return x.code.name
    return "Success"
