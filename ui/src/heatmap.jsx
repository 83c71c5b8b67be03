// Node x resource allocation heat map on a canvas: one column per node (wrapped into bands), one
// row per resource and per GPU (milli used of 1000). Hover names the cell; click selects the node.
// As wide as the page lets it be (it follows the window).
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";

export const OVER = "#7c3aed"; // more asked than the node has (GPU asks no filter read)

export function heat(p) {
  if (p === null || p === undefined || p < 0) return "#e5e7eb";
  if (p > 100) return OVER;
  const t = Math.max(0, Math.min(1, p / 100));
  // white-ish -> amber -> red
  const r = Math.round(254 - t * 40);
  const g = Math.round(243 - t * 200);
  const b = Math.round(199 - t * 170);
  return `rgb(${r},${g},${b})`;
}

function useWidth(ref, max) {
  const [w, setW] = useState(0);
  useLayoutEffect(() => {
    const el = ref.current;
    const at = () => setW(Math.min(max, Math.max(40, el.clientWidth)));
    const ro = new ResizeObserver(at);
    ro.observe(el);
    at();
    return () => ro.disconnect();
  }, []);
  return w;
}

export function HeatMap({ rows, nodes, value, onSelect, maxWidth = 1400 }) {
  // rows: [{label}], value(r, n) -> percent or null
  const box = useRef(null);
  const ref = useRef(null);
  const [tip, setTip] = useState("");
  const width = useWidth(box, maxWidth);
  const n = nodes.length;
  const cell = Math.max(2, Math.min(14, Math.floor(width / Math.max(1, Math.min(n, 400)))));
  const perBand = Math.max(1, Math.floor(width / cell));
  const bands = Math.ceil(n / perBand);
  const rowH = 10;
  const bandH = rows.length * rowH + 8;
  const height = Math.max(1, bands * bandH);
  const over = useMemo(() => rows.some((_, r) => nodes.some((_n, i) => value(r, i) > 100)), [rows, nodes, value]);
  useEffect(() => {
    const c = ref.current;
    if (!c || !width) return;
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
  }, [rows, nodes, value, width]);
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
    <div class="heatmap" ref={box}>
      <div class="heat-legend">
        rows: {rows.map((r) => r.label).join(" · ")} — colour: allocated % (grey: none)
        {over ? <span data-testid="heat-over"> · <span style={{ color: OVER }}>■</span> violet: over 100 % (the node's pods ask more GPU than it has)</span> : null}
      </div>
      {width ? (
        <canvas
          ref={ref}
          width={Math.min(n, perBand) * cell}
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
      ) : null}
      <div class="tip">{tip || " "}</div>
    </div>
  );
}
