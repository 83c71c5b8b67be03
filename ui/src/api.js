// Talks to kubesched ui's JSON API. Errors come back as {error, field}: shown as one line.
export class ApiError extends Error {
  constructor(message, field, status) {
    super(message);
    this.field = field;
    this.status = status;
  }
}

export async function api(path, options = {}) {
  const res = await fetch(path, options);
  const text = await res.text();
  let body = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    body = null;
  }
  if (!res.ok) {
    const msg = body && body.error ? body.error : `HTTP ${res.status}`;
    throw new ApiError(msg, body && body.field, res.status);
  }
  return body;
}

export const post = (path, data) =>
  api(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(data) });

// Stops the run in progress (what-if, open, import) at its next scheduling attempt; the run's own
// request then fails with "the run was cancelled".
export const cancelRun = () => post("/api/cancel", {});

// Saves text as a file (CSV, YAML) through the browser: the server writes nothing.
export function download(name, text, type = "text/plain") {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}

export function toCSV(columns, rows) {
  const esc = (v) => {
    const s = v === null || v === undefined ? "" : String(v);
    return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [columns.map(esc).join(","), ...rows.map((r) => r.map(esc).join(","))].join("\n") + "\n";
}

export const fmtPct = (v) => (v === null || v === undefined ? "–" : `${v.toFixed(1)} %`);
export const fmtNum = (v, d = 2) => (v === null || v === undefined ? "–" : Number(v).toFixed(d));

export function fmtQty(v, res) {
  if (v === null || v === undefined) return "–";
  if (res === "cpu") return `${(v / 1000).toFixed(v % 1000 ? 2 : 0)}`;
  if (res === "memory") return `${(v / 2 ** 30).toFixed(1)}Gi`;
  return String(v);
}
