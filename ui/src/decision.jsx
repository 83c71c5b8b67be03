// Per-pod decision view: every attempt, then for the chosen attempt the Filter table (node x plugin:
// passed or the reason, and for a storage plugin the volume or claim that decides it), the Score
// table (raw), the Final score (normalized x weight), the selected node, nomination and victims,
// every extension point's result, the pod's volumes and claims, and the time each plugin took.
import { useMemo, useState } from "preact/hooks";
import { fmtNum } from "./api.js";
import { Points, Volumes, decidedBy, rejectionIndex } from "./points.jsx";
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

// Plugin names as headers: break between the words of NodeResourcesBalancedAllocation (a space
// the header may wrap at), so that a column need not be as wide as the whole name.
const splitCamel = (name) => name.replace(/([a-z])([A-Z])/g, "$1\u200b$2");

function Scores({ t, rawCols, finalCols, scoredOnly }) {
  const search = (i) => t.name[i];
  return (
    <div>
      <h3>Score (raw)</h3>
      <VTable id="score-table" columns={rawCols} count={t.name.length} search={search} filter={scoredOnly} height={260} initialSort={{ key: "total", dir: -1 }} />
      <h3>Final score (normalized × weight)</h3>
      <VTable id="final-table" columns={finalCols} count={t.name.length} search={search} filter={scoredOnly} height={260} initialSort={{ key: "total", dir: -1 }} />
    </div>
  );
}

// data.tables: explain's nodes as columns (name, feasible, total; filter verdicts by index;
// scores per plugin), as /api/decision?tables=1 answers
export function DecisionView({ data, onAttempt, live }) {
  const ex = data.explain;
  const t = data.tables;
  const n = t.name.length;
  const [onlyFeasible, setOnlyFeasible] = useState(false);
  const chosen = data.selected || ex.selected;
  const why = data.selected_why;
  const mark = (i) => (t.name[i] === chosen ? "★ " : "");
  const cols = useMemo(() => {
    const verdict = (k, i) => {
      const v = t.filter.at[k][i];
      return v < 0 ? null : t.filter.verdicts[v];
    };
    const said = (f) => (f.code === "Success" ? "passed" : f.reasons.join("; ") || f.code);
    // a storage plugin's rejection names the volumes or claims that decide it
    const storage = rejectionIndex(data.volumes);
    const decider = (p, i) => {
      const r = storage.size ? storage.get(`${p}\u0000${t.name[i]}`) : null;
      return r ? ` (${decidedBy(r)})` : "";
    };
    const nodeCol = {
      key: "node",
      label: "node",
      whole: true, // the Filter table (a column per plugin) scrolls sideways before its names break mid-piece
      get: (i) => t.name[i],
      text: (i) => mark(i) + t.name[i],
      render: (i) => (mark(i) && why ? <span title={why.text}>{mark(i) + t.name[i]}</span> : mark(i) + t.name[i]),
    };
    const filterCols = [
      nodeCol,
      { key: "feasible", label: "feasible", get: (i) => (t.feasible[i] ? "yes" : "no"), wrap: false },
      ...t.filter.plugins.map((p, k) => ({
        key: `f:${p}`,
        label: splitCamel(p),
        get: (i) => {
          const f = verdict(k, i);
          return f ? said(f) + (f.code === "Success" ? "" : decider(p, i)) : "";
        },
        render: (i) => {
          const f = verdict(k, i);
          if (!f) return "";
          return f.code === "Success" ? <span class="ok">passed</span> : <span class="bad">{said(f) + decider(p, i)}</span>;
        },
      })),
    ];
    const scoreCols = (part) => [
      nodeCol,
      ...t.score.plugins.map((p, k) => ({
        key: `${part}:${p}`,
        label: splitCamel(part === "raw" ? p : `${p} ×${t.score.weight[k]}`),
        get: (i) => t.score[part][k][i],
        numeric: true,
      })),
      { key: "total", label: "total", get: (i) => t.total[i], numeric: true },
    ];
    return { filter: filterCols, raw: scoreCols("raw"), final: scoreCols("weighted") };
  }, [data]);
  const feasibleOnly = useMemo(() => (onlyFeasible ? (i) => t.feasible[i] : null), [onlyFeasible, data]);
  const scoredOnly = useMemo(() => (i) => t.total[i] !== null, [data]);
  const feasible = useMemo(() => t.feasible.filter((x) => x).length, [data]);
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
        <div class="card"><div class="label">feasible nodes</div><div class="big">{feasible} / {n}</div></div>
      </div>
      {why ? (
        <p class="why" data-testid="selected-why" data-kind={why.kind}>
          ★ {why.node}: {why.text}.
        </p>
      ) : null}
      {ex.message ? <p class="msg" data-testid="fit-message">{ex.message}</p> : null}
      <p class="basis">Judged against {data.basis.what}{data.basis.steps ? ` (step ${data.basis.step} of ${data.basis.steps})` : ""}; explain runs every filter on every node.</p>
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
      {!data.attempts.length ? <p>No attempt recorded {live ? "(the cluster's scheduler was not seen deciding about it since the UI started watching)" : "(the pod was bound in the input, or never tried)"}.</p> : null}
      <h3>Filter</h3>
      <label class="small"><input type="checkbox" checked={onlyFeasible} onChange={(e) => setOnlyFeasible(e.target.checked)} /> feasible nodes only</label>
      <VTable id="filter-table" columns={cols.filter} count={n} search={(i) => t.name[i]} filter={feasibleOnly} height={300} />
      {t.score.plugins.length ? <Scores t={t} rawCols={cols.raw} finalCols={cols.final} scoredOnly={scoredOnly} /> : <p>No node passed every filter: nothing was scored.</p>}
      <Points data={data} live={live} />
      <Volumes v={data.volumes} />
      <div class="two">
        <Timing id="timing-attempt" title={`Plugin time in attempt ${a ? a.attempt : "–"} (the scheduling cycle)`} ms={a && a.plugin_ms} />
        <Timing id="timing-explain" title={`Plugin time in this explain (${fmtNum(data.explain_ms, 1)} ms, every node)`} ms={data.explain_plugin_ms} />
      </div>
    </section>
  );
}
