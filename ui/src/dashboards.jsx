// Simulation and experiment dashboards: uPlot charts (each exportable as PNG and CSV).
import { useMemo, useState } from "preact/hooks";
import { api, fmtNum, fmtPct } from "./api.js";
import { Chart } from "./chart.jsx";

export function SimulationView({ data }) {
  const b = data.bins;
  // time in the run's unit (simulate's plots choose it from the span): ticks of seconds over
  // days would be seven digits wide
  const tu = data.time_unit || { seconds: 1, name: "s" };
  const inUnit = (xs) => (tu.seconds === 1 ? xs : xs.map((t) => (t === null ? null : t / tu.seconds)));
  const timeLabel = `time (${tu.name})`;
  const x = data.x === "level" ? b.level || [] : inUnit(b[data.x] || []);
  const xl = data.x === "level" ? "arrived workload (%)" : timeLabel;
  const has = (c) => b[c] && b[c].some((v) => v !== null);
  const series = (cols) => cols.filter(has);
  const line = (id, title, cols, yl) => {
    const cs = series(cols);
    if (!cs.length || !x.length) return null;
    return <Chart id={id} title={title} xLabel={xl} yLabel={yl} data={[x, ...cs.map((c) => b[c])]} series={cs.map((c) => ({ label: c }))} />;
  };
  const s = data.summary;
  return (
    <section data-testid="simulation">
      <div class="cards">
        <div class="card"><div class="label">mode</div><div class="big">{s.mode}</div></div>
        <div class="card"><div class="label">pods scheduled</div><div class="big" data-testid="sim-scheduled">{s.pods.scheduled}</div><div class="small">of {s.pods.total}</div></div>
        <div class="card"><div class="label">failed</div><div class="big" data-testid="sim-failed">{s.pods.failed}</div></div>
        <div class="card" data-testid="sim-gpu">
          <div class="label">GPU allocated, peak</div>
          <div class="big">{fmtPct(s.allocation_pct.gpu.peak)}</div>
          <div class="small">
            the most over the run{data.busiest && data.busiest.step !== null ? `, at step ${data.busiest.step}, where the Cluster view opens` : ""};
            {s.mode === "time" ? " mean over time" : " mean over attempts"} {fmtPct(s.allocation_pct.gpu.mean)}, at the end {fmtPct(s.allocation_pct.gpu.final)}
          </div>
        </div>
        <div class="card"><div class="label">nodes</div><div class="big">{s.nodes.initial} → {s.nodes.final}</div></div>
      </div>
      <div class="charts">
        {line("allocation", "Allocation", ["cpu_alloc_pct", "mem_alloc_pct", "gpu_alloc_pct"], "%")}
        {line("queue", "Pending and running pods", ["pending", "running"], "pods")}
        {line("fragmentation", "GPU fragmentation (FGD)", ["unallocated_gpu_pct", "frag_pct", "frag_ratio_pct"], "%")}
        {line("failures-bins", data.x === "level" ? "Failed pods" : "Arrivals and completions", data.x === "level" ? ["failed"] : ["arrivals", "scheduled", "completed"], "pods")}
        {data.failures && data.failures.time.length ? (
          <Chart id="failures" title="Failed attempts (cumulative)" xLabel={timeLabel} yLabel="attempts" data={[inUnit(data.failures.time), data.failures.failures]} series={[{ label: "failed attempts" }]} />
        ) : null}
        {data.nodes_over_time ? (
          <Chart id="nodes" title="Nodes over time" xLabel={timeLabel} yLabel="nodes" data={[inUnit(data.nodes_over_time.time), data.nodes_over_time.nodes]} series={[{ label: "nodes" }]} />
        ) : null}
      </div>
      {Object.keys(s.failed_by_reason || {}).length ? (
        <div>
          <h3>Failed pods by reason</h3>
          <table class="plain"><tbody>{Object.entries(s.failed_by_reason).map(([r, n]) => <tr><td>{r}</td><td class="num">{n}</td></tr>)}</tbody></table>
        </div>
      ) : null}
    </section>
  );
}

export function ExperimentView({ initial }) {
  const [data, setData] = useState(initial);
  const [err, setErr] = useState(null);
  const metricNames = Object.keys(data.curves);
  const curveFor = (metric, trace) => {
    const cs = Object.entries(data.curves[metric] || {}).filter(([k]) => k.startsWith(trace + "/"));
    if (!cs.length) return null;
    const xs = cs[0][1].arrived_pct;
    const ser = [];
    const ys = [];
    cs.forEach(([k, c]) => {
      const pol = k.split("/")[1];
      ser.push({ label: `${pol} mean` });
      ys.push(c.mean);
      ser.push({ label: `${pol} +sd`, dash: [4, 4], width: 1 });
      ys.push(c.mean.map((m, i) => (m === null ? null : m + (c.sd[i] || 0))));
      ser.push({ label: `${pol} −sd`, dash: [4, 4], width: 1 });
      ys.push(c.mean.map((m, i) => (m === null ? null : m - (c.sd[i] || 0))));
    });
    // one colour per policy: mean and its band share it
    ser.forEach((s, i) => (s.color = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04"][Math.floor(i / 3) % 7]));
    return <Chart id={`curve-${metric}-${trace}`} title={`${metric} vs arrived workload — ${trace} (mean ± sd over seeds)`} xLabel="arrived workload (%)" yLabel="%" data={[xs, ...ys]} series={ser} width={620} height={300} />;
  };
  const bars = (trace, metric) => {
    const rows = data.bars.filter((b) => b.trace === trace);
    return (
      <Chart
        id={`bars-${metric}-${trace}`}
        title={`${metric} — ${trace} (mean over seeds; dots: mean + sd)`}
        xLabel="policy"
        yLabel="%"
        bars
        xNames={rows.map((r) => r.policy)}
        data={[rows.map((_, i) => i + 1), rows.map((r) => r[metric].mean), rows.map((r) => (r[metric].mean === null ? null : r[metric].mean + (r[metric].sd || 0)))]}
        series={[{ label: "mean" }, { label: "mean + sd", points: true, color: "#111827" }]}
        width={620}
        height={240}
      />
    );
  };
  const rebase = async (b) => {
    try {
      setData(await api(`/api/dashboard/experiment?baseline=${encodeURIComponent(b)}`));
      setErr(null);
    } catch (e) {
      setErr(e.message);
    }
  };
  return (
    <section data-testid="experiment">
      {err ? <p class="error">{err}</p> : null}
      {data.traces.map((tr) => (
        <div>
          <h2>{tr}</h2>
          <div class="charts">
            {metricNames.map((m) => curveFor(m, tr))}
            {bars(tr, "unallocated_130")}
          </div>
        </div>
      ))}
      <h2>Policies over seeds (mean ± sd)</h2>
      <table class="plain" data-testid="policy-table">
        <thead>
          <tr><th>trace</th><th>policy</th>{data.metrics.map((m) => <th class="num">{m}</th>)}</tr>
        </thead>
        <tbody>
          {data.bars.map((b) => (
            <tr><td>{b.trace}</td><td>{b.policy}</td>{data.metrics.map((m) => <td class="num">{fmtNum(b[m].mean)} ± {fmtNum(b[m].sd)}</td>)}</tr>
          ))}
        </tbody>
      </table>
      <h2>
        Paired deltas against{" "}
        <select data-testid="baseline" value={data.baseline} onChange={(e) => rebase(e.target.value)}>
          {data.policies.map((p) => <option value={p}>{p}</option>)}
        </select>{" "}
        (same trace and seed; mean ± sd)
      </h2>
      <table class="plain" data-testid="deltas">
        <thead>
          <tr><th>trace</th><th>policy</th><th>seeds</th>{data.metrics.map((m) => <th class="num">Δ {m}</th>)}</tr>
        </thead>
        <tbody>
          {data.deltas.map((d) => (
            <tr><td>{d.trace}</td><td>{d.policy}</td><td>{d.seeds.length}</td>{data.metrics.map((m) => <td class="num">{fmtNum(d[m].mean)} ± {fmtNum(d[m].sd)}</td>)}</tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
