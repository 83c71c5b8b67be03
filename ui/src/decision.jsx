// Per-pod decision view: every attempt, then for the chosen attempt the Filter table (node x plugin:
// passed or the reason), the Score table (raw), the Final score (normalized x weight), the selected
// node, nomination and victims, and the time each plugin took per extension point.
import { useMemo, useState } from "preact/hooks";
import { fmtNum } from "./api.js";
import { VTable } from "./vtable.jsx";

function Timing({ title, ms, id }) {
  const rows = [];
  for (const [point, plugins] of Object.entries(ms || {})) for (const [plugin, v] of Object.entries(plugins)) rows.push([point, plugin, v]);
  if (!rows.length) return null;
  const max = rows.reduce((m, r) => Math.max(m, r[2]), 0) || 1;
  return (
    <div class="timing" id={id}>
      <h3>{title}</h3>
      <table class="plain">
        <thead>
          <tr><th>extension point</th><th>plugin</th><th class="num">ms</th><th /></tr>
        </thead>
        <tbody>
          {rows.map(([p, pl, v]) => (
            <tr>
              <td>{p}</td>
              <td>{pl}</td>
              <td class="num">{v.toFixed(3)}</td>
              <td><span class="hbar" style={{ width: `${(120 * v) / max}px` }} /></td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function Scores({ nodes, scoreCols, scoredOnly }) {
  return (
    <div>
      <h3>Score (raw)</h3>
      <VTable id="score-table" columns={scoreCols("raw")} count={nodes.length} search={(i) => nodes[i].name} filter={scoredOnly} height={260} initialSort={{ key: "total", dir: -1 }} />
      <h3>Final score (normalized × weight)</h3>
      <VTable id="final-table" columns={scoreCols("final")} count={nodes.length} search={(i) => nodes[i].name} filter={scoredOnly} height={260} initialSort={{ key: "total", dir: -1 }} />
    </div>
  );
}

export function DecisionView({ data, onAttempt }) {
  const ex = data.explain;
  const nodes = ex.nodes;
  const filterPlugins = useMemo(() => (nodes.length ? nodes[0].filter.map((f) => f.plugin) : []), [data]);
  const scorePlugins = useMemo(() => {
    const s = nodes.find((n) => n.score.length);
    return s ? s.score.map((x) => x.plugin) : [];
  }, [data]);
  const [onlyFeasible, setOnlyFeasible] = useState(false);
  const chosen = data.selected || ex.selected;
  const mark = (i) => (nodes[i].name === chosen ? "★ " : "");
  const filterCols = useMemo(
    () => [
      { key: "node", label: "node", get: (i) => nodes[i].name, width: "2fr", render: (i) => mark(i) + nodes[i].name },
      { key: "feasible", label: "feasible", get: (i) => (nodes[i].feasible ? "yes" : "no") },
      ...filterPlugins.map((p, k) => ({
        key: `f:${p}`,
        label: p,
        get: (i) => {
          const f = nodes[i].filter[k];
          return f ? (f.code === "Success" ? "passed" : f.reasons.join("; ") || f.code) : "";
        },
        render: (i) => {
          const f = nodes[i].filter[k];
          if (!f) return "";
          return f.code === "Success" ? <span class="ok">passed</span> : <span class="bad">{f.reasons.join("; ") || f.code}</span>;
        },
        width: "1.4fr",
      })),
    ],
    [data],
  );
  const scoreCols = (kind) => [
    { key: "node", label: "node", get: (i) => nodes[i].name, width: "2fr", render: (i) => mark(i) + nodes[i].name },
    ...scorePlugins.map((p, k) => ({
      key: `${kind}:${p}`,
      label: kind === "raw" ? p : `${p} ×${(nodes.find((n) => n.score.length) || { score: [{}] }).score[k].weight}`,
      get: (i) => (nodes[i].score[k] ? (kind === "raw" ? nodes[i].score[k].raw : nodes[i].score[k].weighted) : null),
      numeric: true,
    })),
    { key: "total", label: "total", get: (i) => nodes[i].total, numeric: true },
  ];
  const feasibleOnly = useMemo(() => (onlyFeasible ? (i) => nodes[i].feasible : null), [onlyFeasible, data]);
  const scoredOnly = useMemo(() => (i) => nodes[i].score.length > 0, [data]);
  const a = data.attempts.find((x) => x.attempt === data.basis.attempt);
  return (
    <section data-testid="decision">
      <h2 data-testid="decision-pod">{data.pod}</h2>
      <div class="cards">
        <div class="card"><div class="label">selected node</div><div class="big" data-testid="selected-node">{data.selected || "none"}</div></div>
        <div class="card"><div class="label">explain's pick</div><div class="big" data-testid="explain-selected">{ex.selected || "none"}</div></div>
        <div class="card"><div class="label">nominated node</div><div class="big" data-testid="nominated-node">{data.nominated_node || "–"}</div></div>
        <div class="card"><div class="label">preemption victims</div><div class="big" data-testid="victims">{data.victims.length}</div>
          <div class="small">{data.victims.map((v) => `${v.pod} on ${v.node}`).join(", ")}</div></div>
        <div class="card"><div class="label">feasible nodes</div><div class="big">{nodes.filter((n) => n.feasible).length} / {nodes.length}</div></div>
      </div>
      {ex.message ? <p class="msg" data-testid="fit-message">{ex.message}</p> : null}
      <p class="basis">Judged against {data.basis.what} (step {data.basis.step} of {data.basis.steps}); explain runs every filter on every node.</p>
      <h3>Attempts</h3>
      <table class="plain" data-testid="attempts">
        <thead>
          <tr><th>#</th><th class="num">time (s)</th><th>outcome</th><th>node</th><th>nominated</th><th>victims</th><th class="num">took (ms)</th><th>message</th></tr>
        </thead>
        <tbody>
          {data.attempts.map((t) => (
            <tr class={a && t.attempt === a.attempt ? "selected" : ""} onClick={() => onAttempt(t.attempt)}>
              <td>{t.attempt}</td>
              <td class="num">{fmtNum(t.time, 1)}</td>
              <td>{t.outcome}</td>
              <td>{t.node || "–"}</td>
              <td>{t.nominated_node || "–"}</td>
              <td>{t.victims.map((v) => v.pod).join(", ") || "–"}</td>
              <td class="num">{fmtNum(t.duration_ms, 2)}</td>
              <td class="msg">{t.message || ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!data.attempts.length ? <p>No attempt recorded (the pod was bound in the input, or never tried).</p> : null}
      <h3>Filter</h3>
      <label class="small"><input type="checkbox" checked={onlyFeasible} onChange={(e) => setOnlyFeasible(e.target.checked)} /> feasible nodes only</label>
      <VTable id="filter-table" columns={filterCols} count={nodes.length} search={(i) => nodes[i].name} filter={feasibleOnly} height={300} />
      {scorePlugins.length ? <Scores nodes={nodes} scoreCols={scoreCols} scoredOnly={scoredOnly} /> : <p>No node passed every filter: nothing was scored.</p>}
      <div class="two">
        <Timing id="timing-attempt" title={`Plugin time in attempt ${a ? a.attempt : "–"} (the scheduling cycle)`} ms={a && a.plugin_ms} />
        <Timing id="timing-explain" title={`Plugin time in this explain (${fmtNum(data.explain_ms, 1)} ms, every node)`} ms={data.explain_plugin_ms} />
      </div>
    </section>
  );
}
