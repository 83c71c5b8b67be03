"""How the framework words a plugin's failure: ``PluginFailure`` (an Error status naming the
plugin and the extension point, as framework/runtime/framework.go words it) and the helpers that
build one from a plugin's exception or its non-success status."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kubesched.framework.status import Code, Status, exception_text, go_quote

if TYPE_CHECKING:
    from kubesched.framework.interfaces import Plugin

#: How the framework words a plugin's Error status at each point (framework/runtime/framework.go);
#: ``{q}`` is the plugin's name as Go's %q prints it, ``{m}`` the status' message.
ERROR_TEXT: dict[str, str] = {
    "PreEnqueue": "running PreEnqueue plugin {q}: {m}",
    "PreFilter": "running PreFilter plugin {q}: {m}",
    "AddPod": "running AddPod on PreFilter plugin {q}: {m}",
    "RemovePod": "running RemovePod on PreFilter plugin {q}: {m}",
    "Filter": "running {q} filter plugin: {m}",
    "PostFilter": "{m}",
    "PreScore": "running PreScore plugin {q}: {m}",
    "Score": "running Score plugins: plugin {q} failed with: {m}",
    "NormalizeScore": "running Normalize on Score plugins: plugin {q} failed with: {m}",
    "Reserve": "running Reserve plugin {q}: {m}",
    "Permit": "running Permit plugin {q}: {m}",
    "PreBindPreFlight": "running PreBindPreFlight {q}: {m}",
    "PreBind": "running PreBind plugin {q}: {m}",
    "Bind": "running Bind plugin {q}: {m}",
}


class PluginFailure(Exception):
    """A plugin's Error status, worded as the framework words it at its point. ``cause`` is the
    exception the plugin raised, if it raised one (``--debug`` prints its traceback)."""

    def __init__(self, status: Status, cause: BaseException | None = None) -> None:
        super().__init__(status.message)
        self.status = status
        self.cause = cause


def plugin_error(point: str, plugin: str, message: str, cause: BaseException | None = None) -> PluginFailure:
    """The Error status of ``plugin`` failing at ``point`` with ``message``."""
    text = ERROR_TEXT[point].format(q=go_quote(plugin), m=message)
    return PluginFailure(Status(Code.Error, (text,), plugin), cause)


def raised(plugin: Plugin, point: str, e: Exception) -> PluginFailure:
    """The failure of ``plugin`` raising ``e`` at ``point``."""
    return plugin_error(point, plugin.name, exception_text(e), e)


def reword_error(st: Status, source: str, point: str) -> Status:
    """An Error status the framework worded at ``source``, worded as at ``point`` instead (a
    preemption dry run re-runs PreFilter where upstream runs its RemovePod/AddPod extensions)."""
    head = ERROR_TEXT[source].format(q=go_quote(st.plugin), m="")
    if st.code != Code.Error or not st.plugin or not st.message.startswith(head):
        return st
    return plugin_error(point, st.plugin, st.message[len(head) :]).status


def named_failure(point: str, pl: Plugin, st: Status) -> Status:
    """A plugin's non-success status at ``point``: a rejection naming the plugin, or the Error
    worded as the framework words it."""
    if not st.rejected:
        return error_status(point, pl.name, st)
    st.plugin = pl.name
    return st


def error_status(point: str, plugin: str, st: Status) -> Status:
    """A non-success, non-rejection status a plugin returned, as the framework reports it."""
    return plugin_error(point, plugin, st.message).status
