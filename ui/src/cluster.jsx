// Cluster view: allocation per resource (cluster and per node), the heat map, nodes and pods
// tables, and the pods left pending with their reasons.
import { useEffect, useMemo, useState } from "preact/hooks";
import { fmtPct, fmtQty } from "./api.js";
import { HeatMap } from "./heatmap.jsx";
import { RecentDecisions } from "./live.jsx";
import { VTable } from "./vtable.jsx";

export function ClusterSummary({ data }) {
  return (
    <div class="cards" data-testid="cluster-allocation">
      {Object.entries(data.cluster).map(([r, v]) => (
        <div class="card" data-resource={r}>
          <div class="label">{r === "gpu" ? "GPU (asked by the pods on nodes)" : r}</div>
          <div class="big">{fmtPct(v.pct)}</div>
          <div class="small">
            {fmtQty(v.requested, r)} / {fmtQty(v.allocatable, r)}
            {unit(r)}
          </div>
          {v.unseated ? (
            <div class="small over" data-testid="gpu-unseated">
              {fmtQty(v.unseated, r)} GPUs of it on no GPU: {v.unseated_nodes} {v.unseated_nodes === 1 ? "node holds" : "nodes hold"} pods
              asking more than their GPUs have free (no filter of this configuration reads GPU asks)
            </div>
          ) : null}
        </div>
      ))}
    </div>
  );
}

const unit = (r) => (r === "gpu" ? " GPUs" : r === "cpu" ? " CPUs" : "");

export function StepSlider({ data, onStep, start }) {
  const [v, setV] = useState(data.step);
  useEffect(() => setV(data.step), [data.step]);
  if (!data.steps) return null;
  const busiest = start && start.step !== null && start.step !== undefined ? start : null;
  return (
    <div class="slider">
      <label>
        cluster after step <b data-testid="step">{data.step}</b> of {data.steps}
        {data.time !== null && data.time !== undefined ? ` (t = ${data.time.toFixed(1)} s)` : ""}
        <input type="range" data-testid="step-slider" min="0" max={data.steps} value={v} onInput={(e) => setV(+e.target.value)} onChange={(e) => onStep(+e.target.value)} />
      </label>
      <button class="small" onClick={() => onStep(0)}>start</button>{" "}
      {busiest ? <><button class="small" onClick={() => onStep(busiest.step)}>busiest</button>{" "}</> : null}
      <button class="small" onClick={() => onStep(data.steps)}>end</button>
      {busiest && data.step === busiest.step ? <div class="small" data-testid="start-note">step {busiest.step} is {busiest.note}</div> : null}
    </div>
  );
}

export function ClusterView({ data, onStep, onNode, node, start, live }) {
  const nodes = data.nodes;
  const res = data.resources;
  const gpuWidth = nodes.gpu_used.reduce((m, r) => Math.max(m, r.length), 0);
  const unseated = nodes.gpu_unseated && nodes.gpu_unseated.some((x) => x > 0);
  const rows = useMemo(() => [...res.map((r) => ({ label: r === "gpu" ? "gpu asked" : r })), ...Array.from({ length: gpuWidth }, (_, g) => ({ label: `gpu${g}` }))], [data]);
  const value = useMemo(
    () => (r, i) => {
      if (r < res.length) return nodes[`pct:${res[r]}`][i];
      const u = nodes.gpu_used[i][r - res.length];
      return u === undefined || u < 0 ? null : u / 10;
    },
    [data],
  );
  const columns = useMemo(
    () => [
      { key: "name", label: "node", get: (i) => nodes.name[i] },
      ...res.map((r) => ({ key: `pct:${r}`, label: r === "gpu" ? "GPU asked %" : `${r} %`, get: (i) => nodes[`pct:${r}`][i], numeric: true, text: (i) => fmtPct(nodes[`pct:${r}`][i]) })),
      { key: "pods", label: "pods", get: (i) => nodes.pods[i], numeric: true },
      ...(gpuWidth
        ? [
            { key: "gpus", label: "GPUs", get: (i) => nodes.gpus[i], numeric: true },
            {
              key: "gpu_used",
              label: "milli used per GPU",
              get: (i) => nodes.gpu_used[i].reduce((a, b) => a + Math.max(0, b), 0),
              text: (i) => nodes.gpu_used[i].filter((x) => x >= 0).join(" · ") || "–",
            },
          ]
        : []),
      ...(unseated
        ? [{
            key: "gpu_unseated",
            label: "GPUs on no GPU",
            get: (i) => nodes.gpu_unseated[i],
            numeric: true,
            text: (i) => (nodes.gpu_unseated[i] ? fmtQty(nodes.gpu_unseated[i], "gpu") : "–"),
            render: (i) => (nodes.gpu_unseated[i] ? <span class="over">{fmtQty(nodes.gpu_unseated[i], "gpu")}</span> : "–"),
          }]
        : []),
      ...(nodes.gpu_model.some((m) => m) ? [{ key: "model", label: "model", get: (i) => nodes.gpu_model[i] }] : []),
      { key: "unschedulable", label: "cordoned", get: (i) => (nodes.unschedulable[i] ? "yes" : "") },
    ],
    [data],
  );
  return (
    <section>
      <StepSlider data={data} onStep={onStep} start={start} />
      <h2>Allocation</h2>
      <ClusterSummary data={data} />
      <HeatMap rows={rows} nodes={nodes.name} value={value} onSelect={onNode} />
      <h2>Nodes ({nodes.name.length.toLocaleString("en-US")})</h2>
      <VTable
        id="nodes-table"
        columns={columns}
        count={nodes.name.length}
        search={(i) => nodes.name[i] + " " + nodes.gpu_model[i]}
        onRowClick={onNode}
        selected={node}
        height={320}
      />
      {live ? <Pending data={data} live /> : <Pending data={data} />}
      {live ? <RecentDecisions live={live} /> : null}
    </section>
  );
}

export function Pending({ data, onPod, live }) {
  const p = data.pending;
  const max = p.reasons.reduce((m, r) => Math.max(m, r.pods), 1);
  return (
    <div class="pending" data-testid="pending">
      <h2>Pending pods ({p.pods.length})</h2>
      {p.reasons.length ? (
        <div class="hist" data-testid="reasons">
          {p.reasons.map((r) => (
            <div class="hrow">
              <span class="hlabel">{r.reason}</span>
              <span class="hbar" style={{ width: `${(60 * r.pods) / max}%` }} />
              <span class="hval">{r.pods}</span>
            </div>
          ))}
        </div>
      ) : (
        <p>{live ? (p.pods.length ? "every pending pod fits a node now (kubesched's verdict)." : "none: every pod has a node.") : "none: every pod that was tried got a node."}</p>
      )}
      {live && p.pods.length ? <LivePending rows={p.pods} /> : null}
      {!live && p.pods.length ? (
        <table class="plain">
          <thead>
            <tr><th>pod</th><th>outcome</th><th>FailedScheduling message</th></tr>
          </thead>
          <tbody>
            {p.pods.slice(0, 200).map((r) => (
              <tr>
                <td>{onPod ? <a href={`#/decision?pod=${encodeURIComponent(r.pod)}`}>{r.pod}</a> : r.pod}</td>
                <td>{r.state}</td>
                <td class="msg">{r.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}

// A live cluster's pending pods: what its scheduler said (its PodScheduled condition) and what
// kubesched says against the cluster now (where the pod would go, or why no node fits)
function LivePending({ rows }) {
  return (
    <table class="plain wraps" data-testid="live-pending">
      <thead>
        <tr><th>pod</th><th>the cluster's scheduler said</th><th>kubesched, against the cluster now</th></tr>
      </thead>
      <tbody>
        {rows.slice(0, 200).map((r) => (
          <tr data-pod={r.pod}>
            <td><a href={`#/decision?pod=${encodeURIComponent(r.pod)}`}>{r.pod}</a></td>
            <td class="msg">{r.cluster_message || "–"}</td>
            <td class={r.fits ? "ok" : "msg"}>{r.message}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function PodsView({ data, node, onPod, clearNode }) {
  const pods = data.pods;
  const [state, setState] = useState("");
  const states = useMemo(() => [...new Set(pods.state)].sort(), [data]);
  const filter = useMemo(() => {
    if (!state && node === null) return null;
    const nodeName = node === null ? null : data.nodes.name[node];
    return (i) => (!state || pods.state[i] === state) && (nodeName === null || pods.node_now[i] === nodeName || pods.node[i] === nodeName);
  }, [state, node, data]);
  const columns = useMemo(
    () => [
      { key: "pod", label: "pod", get: (i) => pods.pod[i], render: (i) => <a href={`#/decision?pod=${encodeURIComponent(pods.pod[i])}`}>{pods.pod[i]}</a> },
      { key: "state", label: "outcome", get: (i) => pods.state[i], wrap: false },
      { key: "node", label: "final node", get: (i) => pods.node[i] },
      { key: "node_now", label: "on node at this step", get: (i) => pods.node_now[i] },
      { key: "attempts", label: "attempts", get: (i) => pods.attempts[i], numeric: true },
      { key: "cpu", label: "cpu", get: (i) => pods.cpu[i], numeric: true, text: (i) => fmtQty(pods.cpu[i], "cpu") },
      { key: "memory", label: "memory", get: (i) => pods.memory[i], numeric: true, text: (i) => fmtQty(pods.memory[i], "memory") },
      { key: "gpu_milli", label: "GPU", get: (i) => pods.gpu_milli[i], numeric: true, text: (i) => fmtQty(pods.gpu_milli[i], "gpu") },
      { key: "priority", label: "priority", get: (i) => pods.priority[i], numeric: true },
      { key: "message", label: "message", get: (i) => pods.message[i], shrinkFirst: true },
    ],
    [data],
  );
  return (
    <section>
      <div class="filters">
        <label>
          outcome{" "}
          <select data-testid="state-filter" value={state} onChange={(e) => setState(e.target.value)}>
            <option value="">all</option>
            {states.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        {node !== null ? (
          <span class="chip">
            node {data.nodes.name[node]} <button class="small" onClick={clearNode}>×</button>
          </span>
        ) : null}
      </div>
      <VTable
        id="pods-table"
        columns={columns}
        count={pods.pod.length}
        search={(i) => `${pods.pod[i]} ${pods.node[i]} ${pods.state[i]}`}
        filter={filter}
        onRowClick={(i) => onPod(pods.pod[i])}
        height={520}
      />
    </section>
  );
}
