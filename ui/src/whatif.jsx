// What-if: edit whole KubeSchedulerConfigurations (disable default plugins too) and/or drag pods
// onto nodes, re-run through the Python scheduler, compare balance and placements side by side.
import { useState } from "preact/hooks";
import { cancelRun, download, fmtNum, post, toCSV } from "./api.js";

export function WhatIfView({ meta, cluster }) {
  const [configs, setConfigs] = useState([
    { name: "as loaded", yaml: meta.config_yaml },
    { name: "edited", yaml: meta.config_yaml },
  ]);
  const [moves, setMoves] = useState([]);
  const [result, setResult] = useState(null);
  const [err, setErr] = useState(null);
  const [busy, setBusy] = useState(false);
  const pods = cluster.pods.pod;
  const nodes = cluster.nodes.name;
  const run = async () => {
    setBusy(true);
    setErr(null);
    try {
      setResult(await post("/api/whatif", { configs, moves }));
    } catch (e) {
      setResult(null);
      setErr(e.field ? `${e.message} (field: ${e.field})` : e.message);
    }
    setBusy(false);
  };
  const setYaml = (k, v) => setConfigs(configs.map((c, i) => (i === k ? { ...c, yaml: v } : c)));
  return (
    <section data-testid="whatif">
      <h2>Configurations</h2>
      <div class="configs">
        {configs.map((c, k) => (
          <div class="config">
            <input value={c.name} onInput={(e) => setConfigs(configs.map((x, i) => (i === k ? { ...x, name: e.target.value } : x)))} />
            <textarea data-testid={`config-${k}`} spellcheck={false} value={c.yaml} onInput={(e) => setYaml(k, e.target.value)} />
            {configs.length > 1 ? <button class="small" onClick={() => setConfigs(configs.filter((_, i) => i !== k))}>remove</button> : null}
          </div>
        ))}
      </div>
      <button onClick={() => setConfigs([...configs, { name: `config ${configs.length + 1}`, yaml: meta.config_yaml }])}>add a configuration</button>
      {meta.kind === "simulation" ? (
        <p class="note">A simulation's what-if replays its whole workload once per configuration (same mode, seed and options).</p>
      ) : (
        <Moves pods={pods} nodes={nodes} moves={moves} setMoves={setMoves} />
      )}
      <p>
        <button class="primary" data-testid="run-whatif" disabled={busy} onClick={run}>{busy ? "running…" : "re-run and compare"}</button>
        {busy ? (
          <button class="small" data-testid="cancel-whatif" onClick={() => cancelRun().catch(() => {})}>cancel</button>
        ) : null}
      </p>
      {err ? <p class="error" role="alert" data-testid="whatif-error">{err}</p> : null}
      {result ? <WhatIfResult result={result} /> : null}
    </section>
  );
}

function Moves({ pods, nodes, moves, setMoves }) {
  const [podQ, setPodQ] = useState("");
  const shownPods = pods.filter((p) => p.includes(podQ)).slice(0, 60);
  const addMove = (pod, node) => setMoves([...moves.filter((m) => m.pod !== pod), { pod, node }]);
  return (
    <div>
      <h2>Move pods (drag a pod onto a node)</h2>
      <div class="dnd">
        <div class="dnd-list">
          <input type="search" placeholder="filter pods…" value={podQ} onInput={(e) => setPodQ(e.target.value)} />
          {shownPods.map((p) => (
            <div class="dnd-pod" draggable data-pod={p} onDragStart={(e) => e.dataTransfer.setData("text/plain", p)}>{p}</div>
          ))}
        </div>
        <div class="dnd-list">
          {nodes.slice(0, 200).map((n) => (
            <div class="dnd-node" data-node={n} onDragOver={(e) => e.preventDefault()} onDrop={(e) => { e.preventDefault(); addMove(e.dataTransfer.getData("text/plain"), n); }}>{n}</div>
          ))}
        </div>
        <div>
          <b>moves</b>
          <ul data-testid="moves">
            {moves.map((m) => (
              <li>{m.pod} → {m.node} <button class="small" onClick={() => setMoves(moves.filter((x) => x !== m))}>×</button></li>
            ))}
          </ul>
        </div>
      </div>
    </div>
  );
}

function WhatIfResult({ result }) {
  const runs = result.runs;
  const resources = Object.keys(runs[0].balance);
  const stats = ["min", "max", "mean", "sd"];
  const exportCsv = () => {
    const rows = [];
    for (const r of resources) for (const s of stats) rows.push([r, s, ...runs.map((x) => x.balance[r][s])]);
    download("whatif-balance.csv", toCSV(["resource", "stat", ...runs.map((x) => x.name)], rows), "text/csv");
  };
  return (
    <div data-testid="whatif-result">
      <h2>Balance of allocation over nodes (% of allocatable)</h2>
      <table class="plain" data-testid="balance">
        <thead>
          <tr><th>resource</th><th>stat</th>{runs.map((r) => <th class="num">{r.name}</th>)}</tr>
        </thead>
        <tbody>
          {resources.map((res) =>
            stats.map((s) => (
              <tr>
                <td>{s === "min" ? res : ""}</td>
                <td>{s}</td>
                {runs.map((r) => <td class="num">{fmtNum(r.balance[res][s])}</td>)}
              </tr>
            )),
          )}
          <tr><td>pods</td><td>placed</td>{runs.map((r) => <td class="num">{r.placed}</td>)}</tr>
          <tr><td /><td>unschedulable</td>{runs.map((r) => <td class="num">{r.unschedulable}</td>)}</tr>
          <tr><td /><td>preempted</td>{runs.map((r) => <td class="num">{r.preempted}</td>)}</tr>
        </tbody>
      </table>
      <button class="small" onClick={exportCsv}>CSV</button>
      <h2>Placements that differ ({result.diff.length})</h2>
      <table class="plain" data-testid="diff">
        <thead>
          <tr><th>pod</th>{runs.map((r) => <th>{r.name}</th>)}</tr>
        </thead>
        <tbody>
          {result.diff.map((d) => (
            <tr><td>{d.pod}</td>{runs.map((r) => <td>{d.nodes[r.name] || "pending"}</td>)}</tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
