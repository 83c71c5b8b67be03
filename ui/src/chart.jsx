// uPlot charts with PNG and CSV export. uPlot draws on a canvas: the PNG is that canvas.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { useEffect, useRef } from "preact/hooks";
import { download, toCSV } from "./api.js";

const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777"];
export const color = (i) => COLORS[i % COLORS.length];

// Tick labels: grouped thousands, at most three decimals (uPlot's own keep every digit).
export const tick = (v) => (v == null ? "" : Number(v).toLocaleString("en-US", { maximumFractionDigits: 3 }));
const FONT = '12px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
let measureCtx = null;
const labelWidth = (text) => {
  if (!measureCtx) measureCtx = document.createElement("canvas").getContext("2d");
  measureCtx.font = FONT;
  return measureCtx.measureText(text).width;
};

// A numeric x axis whose ticks are at least as far apart as their widest label and a gap, so
// that labels never run into each other (uPlot's default spacing assumes short labels).
function numericX(label) {
  return {
    label,
    font: FONT,
    values: (_u, splits) => splits.map(tick),
    space: (_u, _i, min, max) => Math.max(50, 24 + Math.max(labelWidth(tick(min)), labelWidth(tick(max)), labelWidth(tick((min + max) / 2)))),
  };
}

// A category x axis (bars): one tick per category at 1..n, labelled with its name, slanted when
// the names are wider than their slots.
function categoryX(label, names, plotWidth) {
  const widest = Math.max(0, ...names.map(labelWidth));
  const slant = widest + 8 > plotWidth / Math.max(1, names.length);
  return {
    label,
    font: FONT,
    splits: () => names.map((_, i) => i + 1),
    values: (_u, splits) => splits.map((v) => names[v - 1] ?? ""),
    rotate: slant ? -30 : 0,
    size: slant ? Math.ceil(widest * 0.5 + 24) : 40,
  };
}

// data: [xs, ys1, ys2, ...]; series: [{label, bars?, dash?, band?}]; xNames: bars' category names
export function Chart({ id, title, xLabel, yLabel, data, series, width = 560, height = 260, bars = false, xTime = false, xNames = null }) {
  const n = data[0].length;
  const box = useRef(null);
  const plot = useRef(null);
  useEffect(() => {
    if (!box.current) return undefined;
    const opts = {
      title,
      width,
      height,
      scales: bars
        ? { x: { time: false, range: [0.5, n + 0.5] }, y: { range: (_u, _lo, hi) => [0, (hi || 1) * 1.1] } }
        : { x: { time: xTime } },
      axes: [xNames ? categoryX(xLabel, xNames, width - 60) : xTime ? { label: xLabel } : numericX(xLabel), { label: yLabel, font: FONT, values: (_u, s) => s.map(tick) }],
      series: [
        { label: xLabel },
        ...series.map((s, i) => ({
          label: s.label,
          stroke: s.color || color(i),
          width: s.width || 2,
          dash: s.dash,
          fill: bars && !s.points ? (s.color || color(i)) + "aa" : undefined,
          paths: bars && !s.points ? uPlot.paths.bars({ size: [0.6, 60] }) : s.points ? () => null : undefined,
          points: { show: s.points || (!bars && data[0].length < 60), size: 10 },
        })),
      ],
      legend: { show: true },
    };
    plot.current = new uPlot(opts, data, box.current);
    if (window.__kubesched) (window.__kubesched.charts ||= {})[id] = plot.current; // read by the browser tests
    return () => plot.current && plot.current.destroy();
  }, [data, series, width, height]);
  const png = () => {
    const canvas = box.current.querySelector("canvas");
    const a = document.createElement("a");
    a.href = canvas.toDataURL("image/png");
    a.download = `${id}.png`;
    a.click();
  };
  const csv = () => {
    const cols = [xLabel, ...series.map((s) => s.label)];
    const rows = data[0].map((x, i) => [xNames ? xNames[x - 1] : x, ...data.slice(1).map((d) => d[i])]);
    download(`${id}.csv`, toCSV(cols, rows), "text/csv");
  };
  return (
    <figure class="chart" id={id}>
      <div ref={box} />
      <figcaption>
        <button class="small" onClick={png}>PNG</button> <button class="small" onClick={csv}>CSV</button>
      </figcaption>
    </figure>
  );
}
