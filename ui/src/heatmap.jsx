// Node x resource allocation heat map on a canvas: one column per node (wrapped into bands), one
// row per resource and per GPU (milli used of 1000). Hover names the cell; click selects the node.
import { useEffect, useRef, useState } from "preact/hooks";

export function heat(p) {
  if (p === null || p === undefined || p < 0) return "#e5e7eb";
  const t = Math.max(0, Math.min(1, p / 100));
  // white-ish -> amber -> red
  const r = Math.round(254 - t * 40);
  const g = Math.round(243 - t * 200);
  const b = Math.round(199 - t * 170);
  return `rgb(${r},${g},${b})`;
}

export function HeatMap({ rows, nodes, value, onSelect, width = 1100 }) {
  // rows: [{label}], value(r, n) -> percent or null
  const ref = useRef(null);
  const [tip, setTip] = useState("");
  const n = nodes.length;
  const cell = Math.max(2, Math.min(14, Math.floor(width / Math.max(1, Math.min(n, 400)))));
  const perBand = Math.max(1, Math.floor(width / cell));
  const bands = Math.ceil(n / perBand);
  const rowH = 10;
  const bandH = rows.length * rowH + 8;
  const height = Math.max(1, bands * bandH);
  useEffect(() => {
    const c = ref.current;
    const ctx = c.getContext("2d");
    ctx.clearRect(0, 0, c.width, c.height);
    for (let i = 0; i < n; i++) {
      const band = Math.floor(i / perBand);
      const x = (i % perBand) * cell;
      for (let r = 0; r < rows.length; r++) {
        ctx.fillStyle = heat(value(r, i));
        ctx.fillRect(x, band * bandH + r * rowH, Math.max(1, cell - (cell > 3 ? 1 : 0)), rowH - 1);
      }
    }
  }, [rows, nodes, value]);
  const locate = (e) => {
    const rect = ref.current.getBoundingClientRect();
    const x = e.clientX - rect.left;
    const y = e.clientY - rect.top;
    const band = Math.floor(y / bandH);
    const r = Math.floor((y - band * bandH) / rowH);
    const i = band * perBand + Math.floor(x / cell);
    if (i < 0 || i >= n || r < 0 || r >= rows.length) return null;
    return { i, r };
  };
  return (
    <div class="heatmap">
      <div class="heat-legend">
        rows: {rows.map((r) => r.label).join(" · ")} — colour: allocated % (grey: none)
      </div>
      <canvas
        ref={ref}
        width={perBand * cell}
        height={height}
        data-testid="heatmap"
        onMouseMove={(e) => {
          const at = locate(e);
          if (!at) return setTip("");
          const v = value(at.r, at.i);
          setTip(`${nodes[at.i]} · ${rows[at.r].label}: ${v === null || v < 0 ? "–" : v.toFixed(1) + " %"}`);
        }}
        onClick={(e) => {
          const at = locate(e);
          if (at && onSelect) onSelect(at.i);
        }}
      />
      <div class="tip">{tip || " "}</div>
    </div>
  );
}
