// The decision view's extension points (every point's result per plugin, as kube-scheduler-simulator
// records them) and the pod's volumes and claims (what each storage rejection comes from).

// data.points rows: {point, plugin, code, result, source, nodes?, nominated?, victims?, timeout?, called?}
function Result({ r }) {
  if (r.code === "Success") return <span class="ok">{r.called === false ? "success (not called: nothing to do for this pod)" : "success"}</span>;
  if (r.code === "Skip") return <span class="small">skip{r.result ? `: ${r.result}` : ""}</span>;
  if (r.code === "Wait") return <span class="warn">wait</span>;
  return <span class="bad">{r.result || r.code}</span>;
}

function detail(r) {
  const out = [];
  if (r.nodes) out.push(`kept ${r.nodes.length} node${r.nodes.length === 1 ? "" : "s"}: ${r.nodes.join(", ")}`);
  if (r.nominated) out.push(`nominated ${r.nominated}`);
  if (r.victims && r.victims.length) out.push(`victims: ${r.victims.map((v) => `${v.pod} on ${v.node}`).join(", ")}`);
  if (r.timeout) out.push(`timeout ${r.timeout} s`);
  return out.join("; ");
}

export function Points({ data, live }) {
  const rows = data.points || [];
  const attempt = data.basis.attempt;
  return (
    <div>
      <h3>Extension points</h3>
      <table class="plain wraps" data-testid="points">
        <thead>
          <tr><th>extension point</th><th>plugin</th><th>result</th><th>detail</th><th>from</th></tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr data-point={r.point} data-plugin={r.plugin}>
              <td>{r.point}</td>
              <td>{r.plugin}</td>
              <td><Result r={r} /></td>
              <td>{detail(r)}</td>
              <td class="small">{r.source === "run" ? `attempt ${attempt}` : "explain"}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {data.points_recorded ? null : (
        <p class="small" data-testid="points-note">
          {live
            ? "PostFilter, Reserve, Permit, PreBind and Bind run in the cluster's scheduler, which kubesched only watches: it hears where a pod was bound, not what each plugin answered."
            : "PostFilter, Reserve, Permit, PreBind and Bind are not recorded by this source (a simulation's attempts.csv keeps each attempt's outcome, node, nomination and victims)."}
        </p>
      )}
    </div>
  );
}

// "by" of a storage rejection: the volumes or claims that decide it, else all of them together
export const decidedBy = (r) => (r.by.length ? r.by.join(", ") : "the pod's volumes together (none alone)");

// (plugin, node) -> the rejection, for the Filter table's cells
export function rejectionIndex(volumes) {
  const m = new Map();
  for (const r of (volumes && volumes.rejections) || []) m.set(`${r.plugin}\u0000${r.node}`, r);
  return m;
}

export function Volumes({ v }) {
  if (!v) return null;
  // the rejections, grouped by plugin and what decides them (1,000 nodes make a few lines)
  const groups = new Map();
  for (const r of v.rejections) {
    const key = `${r.plugin}\u0000${decidedBy(r)}`;
    const g = groups.get(key) || { plugin: r.plugin, by: decidedBy(r), reasons: new Set(), nodes: [] };
    g.reasons.add(r.reason);
    g.nodes.push(r.node);
    groups.set(key, g);
  }
  return (
    <div data-testid="volumes">
      <h3>Volumes and claims</h3>
      {v.volumes.length ? (
        <table class="plain wraps" data-testid="pod-volumes">
          <thead>
            <tr><th>volume</th><th>claim</th><th>phase</th><th>class (binding)</th><th>request</th><th>volume bound</th><th>usable on</th></tr>
          </thead>
          <tbody>
            {v.volumes.map((x) => (
              <tr>
                <td>{x.name} <span class="small">{x.source}</span></td>
                <td>{x.claim || "–"}</td>
                <td>{x.problem ? <span class="bad">{x.problem}</span> : x.pvc ? x.pvc.phase : "–"}</td>
                <td>{x.pvc && x.pvc.class ? `${x.pvc.class} (${x.pvc.binding_mode || "no class object"})` : "–"}</td>
                <td>{(x.pvc && x.pvc.request) || "–"}</td>
                <td>{x.pv ? `${x.pv.name}${x.pv.capacity ? ` (${x.pv.capacity})` : ""}` : "–"}</td>
                <td>{(x.pv && x.pv.node_affinity) || (x.pv ? "every node" : "–")}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {v.claims.length ? (
        <table class="plain wraps" data-testid="pod-claims">
          <thead>
            <tr><th>claim</th><th>ResourceClaim</th><th>allocation</th><th>usable on</th><th>reserved for</th></tr>
          </thead>
          <tbody>
            {v.claims.map((c) => (
              <tr>
                <td>{c.name}{c.template ? <span class="small"> (template {c.template})</span> : null}</td>
                <td>{c.claim || "–"}</td>
                <td>{c.problem ? <span class="bad">{c.problem}</span> : c.allocated ? c.devices.join(", ") : "not allocated"}</td>
                <td>{c.available_on || "–"}</td>
                <td>{c.reserved_for.join(", ") || "–"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      <p class="small">As the UI's cluster holds them: moving through the run moves pods, so a claim bound or allocated during the run shows as it ended.</p>
      {groups.size ? (
        <table class="plain wraps" data-testid="storage-rejections">
          <thead>
            <tr><th>plugin</th><th>rejects for</th><th>reason</th><th class="num">nodes</th><th>first nodes</th></tr>
          </thead>
          <tbody>
            {[...groups.values()].map((g) => (
              <tr>
                <td>{g.plugin}</td>
                <td>{g.by}</td>
                <td class="msg">{[...g.reasons].join("; ")}</td>
                <td class="num">{g.nodes.length}</td>
                <td>{g.nodes.slice(0, 3).join(", ")}{g.nodes.length > 3 ? ` and ${g.nodes.length - 3} more` : ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : <p class="small">No storage plugin rejects a node for this pod.</p>}
    </div>
  );
}
