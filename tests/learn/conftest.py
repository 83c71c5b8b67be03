from __future__ import annotations

import pytest

from kubesched.learn.data import Instance

#: a small fixed instance of the shipped default trace: 60 nodes (the model mix kept), 400 pods
SMALL = Instance("default", "gpu", max_nodes=60, max_pods=400)


@pytest.fixture
def small() -> Instance:
    return SMALL
