"""openb CSV loader: objects as the paper's YAML, and bad input named by file, line and field."""


import pytest

from kubesched.errors import InputError
from kubesched.gpu.model import GPU_COUNT, GPU_MILLI, GPU_MODEL, pod_gpu_ask
from kubesched.trace.bundled import node_list, pod_list
from kubesched.trace.openb import check_fits, read_nodes, read_pods

POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_nodes(tmp_path):
    p = write(
        tmp_path, "n.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,96000,393216,8,G2\nc0,32000,262144,0,\n"
    )
    n0, c0 = read_nodes(p)
    assert n0.name == "n0" and n0.labels[GPU_MODEL] == "G2"
    assert n0.allocatable["cpu"] == 96000 and n0.allocatable["memory"] == 393216 * 2**20
    assert (
        n0.allocatable["pods"] == 1001
        and n0.allocatable[GPU_COUNT] == 8
        and n0.allocatable[GPU_MILLI] == 8000
    )
    assert GPU_COUNT not in c0.allocatable and GPU_MODEL not in c0.labels


def test_pods(tmp_path):
    p = write(
        tmp_path,
        "p.csv",
        POD_HEADER
        + "a,6000,12288,1,460,,LS,Running,10,200,10\n"
        + "b,4000,1024,0,0,,BE,Failed,20,,\n"
        + "c,8000,2048,2,1000,V100M16|V100M32,LS,Running,30,40,30\n",
    )
    t = read_pods(p, namespace="trace")
    a, b, c = t.pods
    assert (a.namespace, a.uid, a.requests["cpu"], a.requests["memory"]) == (
        "trace",
        "trace/a",
        6000,
        12288 * 2**20,
    )
    assert a.annotations == {GPU_MILLI: "460", GPU_COUNT: "1"} and b.annotations == {}
    assert pod_gpu_ask(c).models == ("V100M16", "V100M32") and pod_gpu_ask(c).total_milli == 2000
    assert t.creation_time == [10.0, 20.0, 30.0] and t.deletion_time == [200.0, None, 40.0]
    assert t.lines == [2, 3, 4] and t.skipped == []
    a.annotations["x"] = "y"  # pods sharing parsed fields still own their annotations
    assert "x" not in b.annotations and "x" not in c.annotations


def test_pods_without_time_columns(tmp_path):
    t = read_pods(
        write(tmp_path, "m.csv", "name,cpu_milli,memory_mib,num_gpu,gpu_milli\nx,1000,100,8,1000\n")
    )
    assert t.creation_time == [0.0] and t.deletion_time == [None]


@pytest.mark.parametrize(
    ("body", "line", "expected"),
    [
        ("a,6000,12288,1,460,,LS,Running,10,200\n", 3, "malformed row: 10 fields"),
        ("a,6k,12288,1,460,,LS,Running,10,200,10\n", 3, "cpu_milli: invalid integer"),
        ("a,6000,-1,1,460,,LS,Running,10,200,10\n", 3, "memory_mib: must be at least 0"),
        ("a,6000,1,1,0,,LS,Running,10,200,10\n", 3, "gpu_milli: must be positive"),
        ("a,6000,1,1,1200,,LS,Running,10,200,10\n", 3, "gpu_milli: at most 1000"),
        ("a,6000,1,2,500,,LS,Running,10,200,10\n", 3, "gpu_milli: must be 1000"),
        ("a,6000,1,1,500,,LS,Running,ten,200,10\n", 3, "creation_time: invalid number"),
        ("a,6000,1,1,500,,LS,Running,10,5,10\n", 3, "deletion_time: before creation_time"),
        ("a,1,1,0,0,,,,1,,\na,1,1,0,0,,,,1,,\n", 4, "name: duplicate pod name"),
    ],
)
def test_bad_pod_rows(tmp_path, body, line, expected):
    p = write(tmp_path, "p.csv", POD_HEADER + "ok,1000,1,0,0,,LS,Running,0,,\n" + body)
    with pytest.raises(InputError) as e:
        read_pods(p)
    assert str(e.value).startswith(f"{p}:{line}: {expected}")
    t = read_pods(p, skip_invalid=True)  # skipped rows are listed, never dropped silently
    assert len(t.skipped) == 1 and t.skipped[0].startswith(f"{p}:{line}: {expected}")
    assert [q.name for q in t.pods] == ["ok"] + (["a"] if line == 4 else [])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name,cpu_milli,memory_mib,num_gpu,gpu_milli,colour\n", "p.csv:1: colour: unknown column"),
        ("name,cpu_milli,memory_mib,num_gpu\n", "p.csv:1: gpu_milli: missing column"),
        ("", "p.csv: empty file"),
    ],
)
def test_bad_headers(tmp_path, text, expected):
    with pytest.raises(InputError, match=expected):
        read_pods(write(tmp_path, "p.csv", text), skip_invalid=True)


def test_bad_nodes(tmp_path):
    head = "sn,cpu_milli,memory_mib,gpu,model\n"
    with pytest.raises(InputError, match=r"n.csv:2: cpu_milli: node without capacity"):
        read_nodes(write(tmp_path, "n.csv", head + "n0,0,100,1,G2\n"))
    with pytest.raises(InputError, match=r"n.csv:3: gpu: invalid integer"):
        read_nodes(write(tmp_path, "n.csv", head + "n0,1,100,1,G2\nn1,1,1,x,G2\n"))
    with pytest.raises(InputError, match=r"nope.csv: cannot read"):
        read_nodes(tmp_path / "nope.csv")


def test_check_fits(tmp_path):
    nodes = read_nodes(
        write(tmp_path, "n.csv", "sn,cpu_milli,memory_mib,gpu,model\nn0,1000,100,4,T4\nn1,1000,100,8,G2\n")
    )
    pods = read_pods(
        write(
            tmp_path,
            "p.csv",
            POD_HEADER + "a,1,1,8,1000,,,,0,,\nb,1,1,8,1000,T4,,,0,,\nc,1,1,4,1000,T4,,,0,,\n",
        )
    )
    with pytest.raises(
        InputError, match=r"p.csv:3: num_gpu: asks for 8 GPUs but no node of model T4 has more than 4"
    ):
        check_fits(nodes, pods)
    kept = check_fits(nodes, pods, skip_invalid=True)
    assert [p.name for p in kept.pods] == ["a", "c"] and len(kept.skipped) == 1 and kept.lines == [2, 4]


def test_real_files_load():
    nodes = read_nodes(node_list("gpu"))
    assert len(nodes) == 1213 and sum(n.allocatable.get(GPU_COUNT, 0) for n in nodes) == 6212
    t = read_pods(pod_list("default"))
    assert len(t.pods) == 8152 and not t.skipped
    assert sum(a.total_milli for a in map(pod_gpu_ask, t.pods) if a) == 6086800
    assert len(check_fits(nodes, t).pods) == 8152
