"""The registry's built-ins declare exactly kube-scheduler's extension points."""

from kubesched.config import BUILTIN_POINTS
from kubesched.plugins import BUILTIN, in_tree_registry


def test_builtin_plugins_implement_upstream_points():
    reg = in_tree_registry(entry_points=False)
    for name, points in BUILTIN_POINTS.items():
        assert reg.points_of(name) == points, name


def test_every_builtin_resolves_and_unknown_names_do_not():
    reg = in_tree_registry(entry_points=False)
    for name in BUILTIN:
        assert reg.resolve(name).name == name
    assert reg.points_of("NoSuchPlugin") is None
