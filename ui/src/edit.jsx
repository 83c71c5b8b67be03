// Edit and re-run: the working copy of the opened cluster file, which the server keeps in memory
// (the file is never written). Pick an object and edit its YAML, create one from a template or a
// copy, delete one; then re-run the scheduling and see each pod placed, moved, left without a
// node, added or deleted, with links to their decisions. "download" saves the copy as a List
// that `kubesched schedule -f` reads.
import { useEffect, useState } from "preact/hooks";
import { api, cancelRun, download } from "./api.js";

const SHOWN = 300; // objects listed at once: the search narrows a large cluster

const TEMPLATES = {
  Node: `apiVersion: v1
kind: Node
metadata:
  name: node-new
  labels:
    kubernetes.io/hostname: node-new
status:
  allocatable:
    cpu: "4"
    memory: 8Gi
    pods: "110"
`,
  Pod: `apiVersion: v1
kind: Pod
metadata:
  name: pod-new
  namespace: default
spec:
  containers:
  - name: main
    image: busybox
    resources:
      requests:
        cpu: 500m
        memory: 512Mi
`,
  Namespace: `apiVersion: v1
kind: Namespace
metadata:
  name: team-new
`,
  PriorityClass: `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata:
  name: priority-new
value: 1000
preemptionPolicy: PreemptLowerPriority
`,
  StorageClass: `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata:
  name: class-new
provisioner: disk.csi.example.com
volumeBindingMode: WaitForFirstConsumer
`,
  PersistentVolume: `apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv-new
spec:
  capacity:
    storage: 10Gi
  accessModes: [ReadWriteOnce]
  storageClassName: class-new
  csi:
    driver: disk.csi.example.com
    volumeHandle: vol-new
`,
  PersistentVolumeClaim: `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: claim-new
  namespace: default
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: class-new
  resources:
    requests:
      storage: 1Gi
`,
  DeviceClass: `apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com"
`,
  ResourceSlice: `apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-new-gpus
spec:
  driver: gpu.example.com
  nodeName: node-new
  pool:
    name: node-new
    generation: 1
    resourceSliceCount: 1
  devices:
  - name: gpu-0
`,
  ResourceClaim: `apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: claim-gpu
  namespace: default
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu
`,
};

const refQuery = (r) => `kind=${encodeURIComponent(r.kind)}&namespace=${encodeURIComponent(r.namespace)}&name=${encodeURIComponent(r.name)}`;
const refText = (r) => `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`;
const sameRef = (a, b) => !!a && !!b && a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;
const errText = (e) => (e.field ? `${e.message} (field: ${e.field})` : e.message);

export function EditView({ meta, onRerun }) {
  const [objects, setObjects] = useState(null);
  const [counts, setCounts] = useState(meta.edits);
  const [kind, setKind] = useState("");
  const [q, setQ] = useState("");
  const [sel, setSel] = useState(null); // the object in the editor; null: a new one
  const [text, setText] = useState("");
  const [newKind, setNewKind] = useState("Node");
  const [msg, setMsg] = useState(null);
  const [err, setErr] = useState(null);
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState(null);
  const load = () =>
    api("/api/objects").then((d) => {
      setObjects(d.objects);
      setCounts({ changes: d.changes, ran: d.ran });
    }, (e) => setErr(errText(e)));
  useEffect(() => {
    load();
  }, []);
  const act = async (what, job) => {
    setErr(null);
    setMsg(null);
    setBusy(what);
    try {
      await job();
    } catch (e) {
      setErr(errText(e));
    }
    setBusy(false);
  };
  const open = (r) =>
    act("open", async () => {
      const d = await api(`/api/object?${refQuery(r)}`);
      setSel(d.ref);
      setText(d.yaml);
    });
  const save = (asNew) =>
    act("save", async () => {
      const opts = { method: asNew ? "POST" : "PUT", headers: { "Content-Type": "application/yaml" }, body: text };
      const d = await api(asNew ? "/api/objects" : `/api/object?${refQuery(sel)}`, opts);
      setSel(d.ref);
      setMsg(`${asNew ? "created" : "saved"} ${refText(d.ref)}: re-run to see what it changes`);
      await load();
    });
  const remove = () =>
    act("delete", async () => {
      const d = await api(`/api/object?${refQuery(sel)}`, { method: "DELETE" });
      setMsg(`deleted ${refText(sel)}`);
      setSel(null);
      setText("");
      setCounts(d);
      await load();
    });
  const rerun = () =>
    act("rerun", async () => {
      const d = await api("/api/rerun", { method: "POST" });
      setResult(d);
      setCounts({ changes: d.changes, ran: d.ran });
      onRerun();
    });
  const saveCopy = () =>
    act("download", async () => {
      const res = await fetch("/api/export/working-copy");
      const body = await res.text();
      if (!res.ok) throw new Error(JSON.parse(body).error);
      download("cluster-edited.yaml", body, "application/yaml");
    });
  const kinds = objects ? [...new Set(objects.map((o) => o.kind))] : [];
  const shown = (objects || []).filter((o) => (!kind || o.kind === kind) && (!q || refText(o).includes(q)));
  const pending = counts ? counts.changes - counts.ran : 0;
  return (
    <section data-testid="edit">
      <p class="small">
        The working copy of the opened cluster, kept in this server's memory: the file on disk is never written.
        Every change is checked as the file's objects were; re-run schedules the copy with the configuration shown.
      </p>
      <div class="edit">
        <div class="edit-pick">
          <div class="filters">
            <select data-testid="edit-kind" value={kind} onChange={(e) => setKind(e.target.value)}>
              <option value="">every kind ({objects ? objects.length : 0})</option>
              {kinds.map((k) => (
                <option value={k}>{k} ({objects.filter((o) => o.kind === k).length})</option>
              ))}
            </select>{" "}
            <input type="search" data-testid="edit-search" placeholder="search names…" value={q} onInput={(e) => setQ(e.target.value)} />
          </div>
          <div class="edit-list" data-testid="edit-objects">
            {shown.slice(0, SHOWN).map((o) => (
              <button class={sameRef(o, sel) ? "selected" : ""} data-testid="edit-object" data-ref={refText(o)} onClick={() => open(o)}>
                <span class="small">{o.kind}</span> {o.namespace ? `${o.namespace}/` : ""}{o.name}
              </button>
            ))}
            {shown.length > SHOWN ? <p class="small">{shown.length - SHOWN} more: narrow the search</p> : null}
          </div>
          <p>
            <select data-testid="edit-new-kind" value={newKind} onChange={(e) => setNewKind(e.target.value)}>
              {Object.keys(TEMPLATES).map((k) => <option value={k}>{k}</option>)}
            </select>{" "}
            <button data-testid="edit-new" onClick={() => { setSel(null); setText(TEMPLATES[newKind]); setErr(null); setMsg(null); }}>new object</button>
          </p>
        </div>
        <div class="edit-editor">
          <h3 data-testid="edit-title">{sel ? refText(sel) : text ? "a new object" : "pick an object, or start a new one"}</h3>
          <textarea data-testid="edit-yaml" spellcheck={false} value={text} onInput={(e) => setText(e.target.value)} />
          <p>
            {sel ? <button data-testid="edit-save" disabled={!!busy} onClick={() => save(false)}>save</button> : null}{" "}
            <button data-testid="edit-create" disabled={!!busy || !text} onClick={() => save(true)}>{sel ? "create as a new object" : "create"}</button>{" "}
            {sel ? <button data-testid="edit-delete" disabled={!!busy} onClick={remove}>delete</button> : null}
          </p>
        </div>
      </div>
      {err ? <p class="error" role="alert" data-testid="edit-error">{err}</p> : null}
      {msg ? <p class="note" data-testid="edit-message">{msg}</p> : null}
      <p>
        <button class="primary" data-testid="rerun" disabled={!!busy} onClick={rerun}>{busy === "rerun" ? "running…" : "re-run the scheduling"}</button>{" "}
        {busy === "rerun" ? <button class="small" data-testid="cancel-rerun" onClick={() => cancelRun().catch(() => {})}>cancel</button> : null}
        <span class="small" data-testid="edit-status">
          {counts ? `${counts.changes} change${counts.changes === 1 ? "" : "s"} kept${pending ? `, ${pending} not run yet` : ", all run"}` : ""}
        </span>{" "}
        <button class="small" data-testid="edit-download" disabled={!!busy} onClick={saveCopy}>download the working copy (YAML)</button>
      </p>
      {result ? <RerunResult result={result} /> : null}
    </section>
  );
}

const CHANGES = { placed: "placed", moved: "moved", unplaced: "now without a node", added: "added", deleted: "deleted" };

function where(o) {
  if (!o) return "–";
  return o.node ? `${o.node} (${o.state})` : o.state;
}

function RerunResult({ result }) {
  const n = {};
  for (const d of result.diff) n[d.change] = (n[d.change] || 0) + 1;
  const parts = Object.keys(CHANGES).filter((c) => n[c]).map((c) => `${n[c]} ${CHANGES[c]}`);
  return (
    <div data-testid="rerun-result">
      <h2>What the re-run changed</h2>
      <p data-testid="rerun-summary">{[...parts, `${result.unchanged} kept their placement`].join(", ")}</p>
      {result.diff.length ? (
        <table class="plain wraps" data-testid="rerun-diff">
          <thead>
            <tr><th>pod</th><th>change</th><th>before</th><th>after</th></tr>
          </thead>
          <tbody>
            {result.diff.map((d) => (
              <tr data-pod={d.pod}>
                <td>{d.change === "deleted" ? d.pod : <a href={`#/decision?pod=${encodeURIComponent(d.pod)}`}>{d.pod}</a>}</td>
                <td class={d.change === "unplaced" ? "bad" : d.change === "placed" ? "ok" : ""}>{CHANGES[d.change]}</td>
                <td>{where(d.before)}</td>
                <td>{where(d.after)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}
