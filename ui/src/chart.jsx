// uPlot charts with PNG and CSV export. uPlot draws on a canvas: the PNG is that canvas.
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { useEffect, useRef } from "preact/hooks";
import { download, toCSV } from "./api.js";

const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#ca8a04", "#db2777"];
export const color = (i) => COLORS[i % COLORS.length];

// data: [xs, ys1, ys2, ...]; series: [{label, bars?, dash?, band?}]
export function Chart({ id, title, xLabel, yLabel, data, series, width = 560, height = 260, bars = false, xTime = false }) {
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
      axes: [{ label: xLabel }, { label: yLabel }],
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
    const rows = data[0].map((_, i) => data.map((d) => d[i]));
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
