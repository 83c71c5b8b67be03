// kubesched ui: the page. Routes: #/cluster, #/pods, #/decision?pod=NS/NAME[&attempt=N],
// #/whatif, #/simulation, #/experiment, #/share. Every number comes from the server's JSON.
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, cancelRun, download } from "./api.js";
import { ClusterView, PodsView } from "./cluster.jsx";
import { ExperimentView, SimulationView } from "./dashboards.jsx";
import { DecisionView } from "./decision.jsx";
import { EditView } from "./edit.jsx";
import { LiveBar, useLive } from "./live.jsx";
import "./style.css";
import { WhatIfView } from "./whatif.jsx";

// timings read by the benchmark (bench/ui_render.py), in ms: NAME = from the request to the view
// painted, NAME_at = since the page started loading
window.__kubesched = { timings: {} };
const mark = (name, t0) => {
  const now = performance.now();
  window.__kubesched.timings[name] = now - t0;
  window.__kubesched.timings[`${name}_at`] = now;
};

function parseHash() {
  const h = location.hash.replace(/^#\/?/, "");
  const [view, q] = h.split("?");
  return { view: view || "", params: new URLSearchParams(q || "") };
}

const LABELS = { cluster: "Cluster", pods: "Pods", decision: "Decision", whatif: "What-if", simulation: "Simulation", experiment: "Experiment", edit: "Edit", share: "Import / export" };

function Loading({ what }) {
  return <p class="loading">loading {what}…</p>;
}

function ErrorLine({ err }) {
  return (
    <p class="error" role="alert" data-testid="error">
      {err.message}
      {err.field ? <span class="field"> (field: {err.field})</span> : null}
    </p>
  );
}

function App() {
  const [meta, setMeta] = useState(null);
  const [route, setRoute] = useState(parseHash());
  const [cluster, setCluster] = useState(null);
  const [step, setStep] = useState(null);
  const [node, setNode] = useState(null);
  const [decision, setDecision] = useState(null);
  const [dash, setDash] = useState(null);
  const [err, setErr] = useState(null);
  const [reload, setReload] = useState(0);

  useEffect(() => {
    const on = () => setRoute(parseHash());
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  useEffect(() => {
    api("/api/meta").then((m) => {
      setStep(m.start_step ?? null); // a time-mode simulation opens at its busiest step
      setMeta(m);
    }, setErr);
  }, [reload]);
  const isLive = !!meta && meta.kind === "live";
  const live = useLive(isLive);
  const gen = live ? live.generation : null; // a live cluster's change: fetch the views again
  const view = route.view || (meta ? meta.views[0] : "");
  const needsCluster = ["cluster", "pods", "whatif"].includes(view);
  useEffect(() => {
    if (!meta || !needsCluster || !meta.views.includes("cluster")) return;
    const t0 = performance.now();
    api(`/api/cluster${step === null ? "" : `?step=${step}`}`).then(
      (d) => {
        setCluster(d);
        setErr(null);
        requestAnimationFrame(() => mark("cluster", t0));
      },
      setErr,
    );
  }, [meta, step, needsCluster, gen]);
  const pod = route.params.get("pod");
  const attempt = route.params.get("attempt");
  useEffect(() => {
    if (view !== "decision" || !pod) return;
    const t0 = performance.now();
    if (!decision || decision.pod !== pod) setDecision(null); // a live refresh keeps the old one until the new one comes
    api(`/api/decision?pod=${encodeURIComponent(pod)}${attempt ? `&attempt=${attempt}` : ""}&tables=1`).then(
      (d) => {
        mark("decision_fetch", t0);
        setDecision(d);
        setErr(null);
        requestAnimationFrame(() => mark("decision", t0));
      },
      setErr,
    );
  }, [view, pod, attempt, gen]);
  useEffect(() => {
    if (view === "simulation" || view === "experiment") {
      setDash(null);
      api(`/api/dashboard/${view}`).then(setDash, setErr);
    }
  }, [view, meta]);

  if (!meta) return err ? <ErrorLine err={err} /> : <Loading what="source" />;
  const go = (v) => (location.hash = `#/${v}`);
  const toPod = (p) => (location.hash = `#/decision?pod=${encodeURIComponent(p)}`);
  return (
    <div>
      <header>
        <h1>kubesched ui</h1>
        <span class="title" data-testid="title">{meta.title}</span>
        <nav>
          {[...meta.views, "share"].map((v) => (
            <a class={v === view ? "active" : ""} href={`#/${v}`} data-view={v}>{LABELS[v]}</a>
          ))}
        </nav>
      </header>
      <main class={isLive && live && !live.connected ? "stale" : ""}>
        {isLive ? <LiveBar live={live} /> : null}
        {meta.note ? <p class="note">{meta.note}</p> : null}
        {err ? <ErrorLine err={err} /> : null}
        {view === "cluster" && (cluster ? <ClusterView data={cluster} live={isLive ? live || { recent: [] } : null} onStep={setStep} start={{ step: meta.start_step, note: meta.start_note }} node={node} onNode={(i) => { setNode(i); go("pods"); }} /> : <Loading what="cluster" />)}
        {view === "pods" && (cluster ? <PodsView data={cluster} node={node} clearNode={() => setNode(null)} onPod={toPod} /> : <Loading what="pods" />)}
        {view === "decision" && (pod ? (decision ? <DecisionView data={decision} live={isLive} onAttempt={(a) => (location.hash = `#/decision?pod=${encodeURIComponent(pod)}&attempt=${a}`)} /> : err ? null : <Loading what={pod} />) : <PodPicker onPod={toPod} />)}
        {view === "whatif" && (cluster ? <WhatIfView meta={meta} cluster={cluster} /> : <Loading what="cluster" />)}
        {view === "simulation" && (dash && dash.bins ? <SimulationView data={dash} /> : <Loading what="dashboard" />)}
        {view === "experiment" && (dash && dash.curves ? <ExperimentView initial={dash} /> : <Loading what="dashboard" />)}
        {view === "edit" && (meta.edits ? <EditView meta={meta} onRerun={() => { setCluster(null); setDecision(null); setReload(reload + 1); }} /> : <p class="note">Only a cluster file can be edited.</p>)}
        {view === "share" && <Share meta={meta} step={cluster ? cluster.step : null} onOpened={() => { setCluster(null); setStep(null); setReload(reload + 1); go(""); }} />}
      </main>
    </div>
  );
}

function PodPicker({ onPod }) {
  const [v, setV] = useState("");
  return (
    <form onSubmit={(e) => { e.preventDefault(); onPod(v.trim()); }}>
      <label>pod (namespace/name) <input data-testid="pod-input" value={v} onInput={(e) => setV(e.target.value)} /></label>{" "}
      <button>show decision</button>
      <p>Or pick a pod in the Pods table.</p>
    </form>
  );
}

function Share({ meta, step, onOpened }) {
  const [msg, setMsg] = useState(null);
  const [err, setErr] = useState(null);
  const [path, setPath] = useState("");
  const [busy, setBusy] = useState(false);
  const upload = async (file) => {
    setErr(null);
    setBusy(true);
    try {
      const text = await file.text();
      const r = await api("/api/import/snapshot", { method: "POST", headers: { "Content-Type": "application/yaml" }, body: text });
      setMsg(`imported ${r.nodes} nodes and ${r.pods} pods`);
      onOpened();
    } catch (e) {
      setErr(e);
    }
    setBusy(false);
  };
  const open = async (e) => {
    e.preventDefault();
    setErr(null);
    setBusy(true);
    try {
      await api("/api/open", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ path }) });
      onOpened();
    } catch (x) {
      setErr(x);
    }
    setBusy(false);
  };
  const get = async (url, name) => {
    setErr(null);
    setMsg(null);
    setBusy(true);
    try {
      const res = await fetch(url);
      const text = await res.text();
      if (!res.ok) return setErr(JSON.parse(text));
      download(name, text, "application/yaml");
      const done = res.headers.get("X-Kubesched-Pods");
      const asked = res.headers.get("X-Kubesched-Pods-Asked");
      if (done !== null)
        setMsg(
          done === asked
            ? `exported ${done} pods`
            : `exported ${done} of ${asked} pods: the rest would pass the export's 16 MiB bound (each pod's annotations name every node)`,
        );
    } finally {
      setBusy(false);
    }
  };
  return (
    <section data-testid="share">
      {err ? <ErrorLine err={err.message ? err : { message: err.error, field: err.field }} /> : null}
      {msg ? <p class="note">{msg}</p> : null}
      <h2>Open</h2>
      <form onSubmit={open}>
        <input data-testid="open-path" placeholder="a simulation or experiment folder, or a cluster file" value={path} onInput={(e) => setPath(e.target.value)} size={60} />{" "}
        <button data-testid="open-button" disabled={busy}>open</button>
        {busy ? (
          <>
            {" "}<span class="small">working…</span>{" "}
            <button type="button" class="small" data-testid="cancel-open" onClick={() => cancelRun().catch(() => {})}>cancel</button>
          </>
        ) : null}
      </form>
      {meta.views.includes("cluster") ? (
        <div>
          <h2>Export</h2>
          <p><button onClick={() => get(`/api/export/snapshot${step === null ? "" : `?step=${step}`}`, "snapshot.yaml")}>cluster snapshot (YAML)</button> the nodes and pods at the step shown, as Kubernetes objects</p>
          <p>
            <button data-testid="export-annotations" disabled={busy} onClick={() => get("/api/export/simulator-annotations", "pods-with-simulator-annotations.yaml")}>pods with kube-scheduler-simulator annotations</button>{" "}
            the first 200 pods tried, with their Filter, Score and Final score results (up to 16 MiB)
          </p>
        </div>
      ) : null}
      <h2>Import a cluster snapshot</h2>
      <input type="file" data-testid="import-file" accept=".yaml,.yml,.json" onChange={(e) => e.target.files[0] && upload(e.target.files[0])} />
    </section>
  );
}

render(<App />, document.getElementById("app"));
