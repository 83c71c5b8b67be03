"""What simulate's outputs say: gated pods, GPUs written as nvidia.com/gpu, plot titles, units and
markers, the HTML report's configuration and failed pods, the one-instant warning, and the flags."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import matplotlib
import pytest
import yaml

from kubesched.api.objects import Node, Pod
from kubesched.cli import main
from kubesched.sim import Workload, simulate
from kubesched.sim.plots import draw_all, time_unit
from kubesched.sim.report import describe, write_outputs
from kubesched.testing import make_node, make_pod

matplotlib.use("Agg")

GATED = make_pod("held", requests={"cpu": "1"}, spec={"schedulingGates": [{"name": "example.com/quota"}]})


def _cluster(tmp_path: Path, docs: list[dict]) -> str:
    p = tmp_path / "cluster.yaml"
    p.write_text(yaml.safe_dump_all(docs))
    return str(p)


def _sim_json(capsys, *argv: str) -> tuple[dict, str]:
    assert main(["simulate", *argv, "--no-plots", "-o", "json"]) == 0
    out = capsys.readouterr()
    return json.loads(out.out), out.err


@pytest.mark.parametrize("mode", ["time", "arrival"])
def test_a_gated_pod_is_reported_gated_not_failed(tmp_path, capsys, mode):
    path = _cluster(tmp_path, [make_node("n1", cpu="4", memory="8Gi"), make_pod("a", requests={"cpu": "1"}), GATED])
    summary, _ = _sim_json(capsys, "-f", path, "--mode", mode, "-d", str(tmp_path / "out"))
    assert summary["pods"]["gated"] == 1 and summary["pods"]["failed"] == 0 and summary["pods"]["scheduled"] == 1
    msg = "waiting for scheduling gates: [example.com/quota] (SchedulingGates)"
    assert summary["gated_messages"] == {msg: 1} and summary["failed_messages"] == {}
    with (tmp_path / "out" / "pods.csv").open() as f:
        (row,) = [r for r in csv.DictReader(f) if r["pod"] == "default/held"]
    assert row["state"] == "gated" and row["message"] == msg


def test_nvidia_gpus_are_counted(tmp_path):
    nodes = [Node.parse(make_node(f"g{i}", cpu="32", memory="64Gi", extra={"nvidia.com/gpu": 4})) for i in range(2)]
    pods = [Pod.parse(make_pod(f"p{i}", requests={"cpu": "1", "nvidia.com/gpu": 2})) for i in range(3)]
    res = simulate(_default(), Workload(nodes, pods, [0.0] * 3, [None] * 3), mode="arrival")
    g = res.summary["gpu"]
    assert g["resources"] == ["nvidia.com/gpu"] and g["capacity_milli"] == 8000 and g["allocated_milli"] == 6000
    assert res.summary["allocation_pct"]["gpu"]["final"] == 75.0 and g["unallocated_pct"] == 25.0
    assert g["fragmentation_available"] is False and g["frag_pct"]["final"] is None
    assert res.pods["gpu_milli"] == [2000, 2000, 2000]


def test_gpu_sharing_annotations_take_precedence(tmp_path):
    from sim_helpers import node, pod

    res = simulate(_default(), Workload([node("a", gpus=2)], [pod("p", gpus=1, milli=500)], [0.0], [None]), mode="arrival")
    assert res.summary["gpu"]["resources"] == ["alibabacloud.com/gpu-count"]
    assert res.summary["gpu"]["allocated_milli"] == 500


def _default():  # noqa: ANN202
    from sim_helpers import default_cfg

    return default_cfg()[0]


def _figures(monkeypatch, result, tmp_path) -> dict:
    """draw_all, keeping each figure as it is saved."""
    from matplotlib.figure import Figure

    saved = {}
    real = Figure.savefig

    def keep(self, path, *a, **kw):  # noqa: ANN001, ANN202
        saved[Path(path).stem] = self
        return real(self, path, *a, **kw)

    monkeypatch.setattr(Figure, "savefig", keep)
    draw_all(result, tmp_path)
    return saved


def test_static_dump_plots_show_their_one_point(monkeypatch, tmp_path):
    nodes = [Node.parse(make_node("n1", cpu="4", memory="8Gi", extra={"nvidia.com/gpu": 2}))]
    pods = [Pod.parse(make_pod(f"p{i}", requests={"cpu": "1"})) for i in range(2)]
    res = simulate(_default(), Workload(nodes, pods, [0.0, 0.0], [None, None], source="dump.yaml"))
    assert len(res.bins["end"]) == 1
    figs = _figures(monkeypatch, res, tmp_path)
    assert set(figs) == {"allocation", "gpu", "queue", "utilization"}
    for name, fig in figs.items():
        ax = fig.axes[0]
        assert fig.get_suptitle(), name
        assert "dump.yaml · profile default-scheduler (default configuration) · time mode" in ax.get_title()
        assert "one sample (t = 0 s)" in ax.get_title()
        for line in ax.get_lines():
            assert line.get_marker() == "o" and list(line.get_xdata()) == [0.0]
        assert ax.get_legend() is None and fig.legends  # the legend is under the axes


def test_queue_plot_one_time_unit(monkeypatch, tmp_path):
    nodes = [Node.parse(make_node("n1", cpu="1", memory="8Gi"))]
    pods = [Pod.parse(make_pod(f"p{i}", requests={"cpu": "1"})) for i in range(3)]
    # three 2-hour pods on a one-CPU node: the second waits 2 h, the third 4 h
    res = simulate(_default(), Workload(nodes, pods, [0.0, 0.0, 0.0], [7200.0] * 3), bins=20)
    scale, unit = time_unit(res)
    assert (scale, unit) == (3600.0, "hours")
    figs = _figures(monkeypatch, res, tmp_path)
    ax, ax2 = figs["queue"].axes
    assert ax.get_xlabel() == "simulated time (hours)"
    assert ax2.get_ylabel().endswith("(hours)")
    (delay,) = ax2.get_lines()
    assert delay.get_label() == "queueing delay p50 (hours)"
    ys = [y for y in delay.get_ydata() if y == y]
    assert max(ys) == pytest.approx(4.0)  # 14,400 s, in hours
    assert all(line.get_marker() in ("o", "None") for line in ax.get_lines())
    labels = [t.get_text() for t in figs["queue"].legends[0].get_texts()]
    assert labels == ["pending pods", "running pods", "queueing delay p50 (hours)"]


def test_html_report_names_the_configuration_and_the_failed_pods(tmp_path):
    from kubesched.app import build_config, build_registry

    reg = build_registry([])
    cfg_path = tmp_path / "sched.yaml"
    cfg_path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "profiles": [
                    {"schedulerName": "default-scheduler", "plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 7}]}}}
                ],
            }
        )
    )
    config = build_config(str(cfg_path), reg)
    nodes = [Node.parse(make_node("n1", cpu="2", memory="8Gi"))]
    pods = [Pod.parse(d) for d in (make_pod("fits", requests={"cpu": "1"}), make_pod("huge", requests={"cpu": "64"}), GATED)]
    res = simulate(config, Workload(nodes, pods, [0.0] * 3, [None] * 3, source="c.yaml"), mode="arrival", registry=reg)
    write_outputs(res, tmp_path, plots=False)
    page = (tmp_path / "report.html").read_text()
    assert describe(res.summary) == "c.yaml · profile default-scheduler (sched.yaml) · arrival mode"
    assert "c.yaml · profile default-scheduler (sched.yaml) · arrival mode" in page
    assert "<h2>Configuration</h2>" in page and "- name: ImageLocality\n        weight: 7" in page
    assert "<h2>Pods that never got a node (1)</h2>" in page
    assert "<td>default/huge</td><td>failed</td><td>1</td><td>0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.</td>" in page
    assert "<h2>Pods held by scheduling gates (never tried) (1)</h2>" in page and "default/held" in page
    assert res.summary["config"] == str(cfg_path)


def test_one_instant_warning(tmp_path, capsys):
    path = _cluster(tmp_path, [make_node("n1", cpu="4", memory="8Gi"), make_pod("a", requests={"cpu": "1"})])
    _, err = _sim_json(capsys, "-f", path, "-d", str(tmp_path / "o1"))
    assert "warning: every event of this run happened at one instant" in err and err.count("\n") == 1
    _, err = _sim_json(capsys, "-f", path, "-d", str(tmp_path / "o2"), "--mode", "arrival")
    assert err == ""
    timed = make_pod("b", requests={"cpu": "1"})
    timed["metadata"]["annotations"] = {"kubesched.io/duration": "60"}
    path = _cluster(tmp_path, [make_node("n1", cpu="4", memory="8Gi"), timed])
    _, err = _sim_json(capsys, "-f", path, "-d", str(tmp_path / "o3"))
    assert err == ""


def test_out_dir_flags(tmp_path, capsys):
    path = _cluster(tmp_path, [make_node("n1", cpu="4", memory="8Gi"), make_pod("a", requests={"cpu": "1"})])
    base = ["simulate", "-f", path, "--mode", "arrival"]
    assert main([*base, "-d", str(tmp_path / "a"), "--no-plot"]) == 0  # --no-plot: --no-plots
    assert (tmp_path / "a" / "report.html").exists() and not (tmp_path / "a" / "queue.png").exists()
    capsys.readouterr()
    assert main([*base, "--out", str(tmp_path / "b"), "--no-plots"]) == 0  # the old spelling still works
    assert (tmp_path / "b" / "summary.json").exists()
    assert "warning: --out is deprecated: use -d/--out-dir" in capsys.readouterr().err
    with pytest.raises(SystemExit) as e:
        main([*base, "--output", "simdir"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "'simdir' is not an output format (table, json, yaml); the output folder is -d/--out-dir DIR" in err


def test_the_legend_fits_inside_its_figure(tmp_path):
    """The GPU figure's three labels on one row ran off both sides of the 800-px figure (the
    legend spanned -27 to 827 px): the legend takes as many columns as fit."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from kubesched.sim.plots import _save

    fig, ax = plt.subplots(figsize=(8, 4.8), layout="constrained")
    labels = ["unallocated GPU (% of capacity)", "fragmentation amount (% of capacity)", "fragmentation ratio (% of idle GPU)"]
    for label in labels:
        ax.plot([0, 1], [0, 1], label=label)
    _save(plt, fig, tmp_path / "gpu.png", ax)
    renderer = FigureCanvasAgg(fig).get_renderer()  # the figure was closed after saving
    fig.draw(renderer)
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    assert box.x0 >= 0 and box.x1 <= fig.bbox.width, box
    assert [t.get_text() for t in legend.get_texts()] == labels
