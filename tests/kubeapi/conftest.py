"""Fixtures for the test API server's own tests: official-client APIs and background watches."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from kubernetes import client, config, watch

from tests.kubeapi.fixtures import kube_api, kubeconfig  # noqa: F401


@pytest.fixture
def api_client(kubeconfig: str) -> Iterator[client.ApiClient]:  # noqa: F811
    """An ApiClient built from the kubeconfig file (the global default config is left alone)."""
    c = config.new_client_from_config(config_file=kubeconfig)
    yield c
    c.close()


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


class Stream:
    """Runs watch.Watch().stream(...) in a thread and collects its events (or the error that ended it)."""

    def __init__(self, func: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self.events: list[dict[str, Any]] = []
        self.error: BaseException | None = None
        self.watch = watch.Watch()
        self.done = threading.Event()
        threading.Thread(target=self._run, args=(func, args, kwargs), daemon=True).start()

    def _run(self, func: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        try:
            for event in self.watch.stream(func, *args, **kwargs):
                self.events.append(event)
        except BaseException as e:  # noqa: BLE001 (the test inspects it)
            self.error = e
        finally:
            self.done.set()

    def types(self, skip_bookmarks: bool = True) -> list[tuple[str, str]]:
        """(type, name) of the events so far."""
        return [(e["type"], e["raw_object"].get("metadata", {}).get("name", ""))
                for e in list(self.events) if not (skip_bookmarks and e["type"] == "BOOKMARK")]


@pytest.fixture
def stream() -> Iterator[Callable[..., Stream]]:
    """Start background watches; they are stopped at teardown."""
    started: list[Stream] = []

    def start(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Stream:
        s = Stream(func, *args, **kwargs)
        started.append(s)
        return s

    yield start
    for s in started:
        s.watch.stop()
