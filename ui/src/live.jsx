// A live cluster (kubesched ui --kubeconfig): the page polls /api/live once a second; a new
// generation means the cluster changed and the views fetch again. While a list or watch fails,
// the bar says "disconnected, retrying" and the views are marked as the cluster last seen.
import { useEffect, useState } from "preact/hooks";
import { api } from "./api.js";

export const POLL_MS = 1000;

export function useLive(isLive) {
  const [live, setLive] = useState(null);
  useEffect(() => {
    if (!isLive) return;
    let stop = false;
    let timer = null;
    const tick = () =>
      api("/api/live").then(
        (s) => {
          if (!stop) setLive(s);
        },
        (e) => {
          // the UI's own server is gone: as stale as a lost watch
          if (!stop) setLive((old) => ({ ...(old || { generation: -1, recent: [] }), connected: false, problem: `kubesched ui: ${e.message}` }));
        },
      ).finally(() => {
        if (!stop) timer = setTimeout(tick, POLL_MS);
      });
    tick();
    return () => {
      stop = true;
      clearTimeout(timer);
    };
  }, [isLive]);
  return live;
}

const clock = (t) => (t ? new Date(t * 1000).toLocaleTimeString("en-GB") : "–");

export function LiveBar({ live }) {
  if (!live) return <p class="note" data-testid="live-status">connecting…</p>;
  if (!live.connected)
    return (
      <p class="error" role="alert" data-testid="live-status">
        disconnected, retrying ({live.problem}). What is shown is the cluster as last seen at {clock(live.changed_at)}, not as it is now.
      </p>
    );
  return (
    <p class="live small" data-testid="live-status">
      live: {live.server}, read-only{live.synced ? "" : " (still listing)"} · last change {clock(live.changed_at)}
      {live.unwatched && live.unwatched.length ? <span class="warn"> · not watched: {live.unwatched.join("; ")}</span> : null}
    </p>
  );
}

export function RecentDecisions({ live }) {
  const rows = live ? live.recent : [];
  return (
    <div data-testid="recent-decisions">
      <h2>Recent decisions of the cluster's scheduler ({rows.length})</h2>
      {rows.length ? (
        <table class="plain wraps">
          <thead>
            <tr><th>time</th><th>pod</th><th>outcome</th><th>node or message</th></tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr>
                <td>{clock(r.time)}</td>
                <td><a href={`#/decision?pod=${encodeURIComponent(r.pod)}`}>{r.pod}</a></td>
                <td>{r.outcome}</td>
                <td class={r.node ? "" : "msg"}>{r.node || r.message}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p>none since the page's server started watching.</p>
      )}
    </div>
  );
}
