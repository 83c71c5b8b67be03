"""The registry's built-ins declare exactly kube-scheduler's extension points."""

from kubesched.config import BUILTIN_POINTS
from kubesched.framework.registry import Registry
from kubesched.plugins import BUILTIN


def test_builtin_plugins_implement_upstream_points():
    reg = Registry(entry_points=False)
    for name, points in BUILTIN_POINTS.items():
        assert reg.points_of(name) == points, name


def test_every_builtin_resolves_and_unknown_names_do_not():
    reg = Registry(entry_points=False)
    for name in BUILTIN:
        assert reg.resolve(name).name == name
    assert reg.points_of("NoSuchPlugin") is None
