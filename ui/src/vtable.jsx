// A virtualised table over columnar data: only the visible rows are in the DOM, so 150,000 pods
// scroll as fast as 50. Search, filter and sort work on an index array over the columns.
import { elementScroll, observeElementOffset, observeElementRect, Virtualizer } from "@tanstack/virtual-core";
import { useLayoutEffect, useMemo, useReducer, useRef, useState } from "preact/hooks";

function useVirtualizer(options) {
  const [, rerender] = useReducer((x) => x + 1, 0);
  const resolved = {
    observeElementRect,
    observeElementOffset,
    scrollToFn: elementScroll,
    ...options,
    onChange: () => rerender(),
  };
  const [instance] = useState(() => new Virtualizer(resolved));
  instance.setOptions(resolved);
  useLayoutEffect(() => instance._didMount(), []);
  useLayoutEffect(() => instance._willUpdate());
  return instance;
}

// columns: [{key, label, get(i) -> value, render?(i) -> node, width, numeric}]
export function VTable({ id, columns, count, search, filter, onRowClick, selected, height = 420, rowHeight = 26, initialSort }) {
  const [sort, setSort] = useState(initialSort || null); // {key, dir}
  const [query, setQuery] = useState("");
  const parent = useRef(null);
  const order = useMemo(() => {
    let idx = [];
    const q = query.trim().toLowerCase();
    for (let i = 0; i < count; i++) {
      if (filter && !filter(i)) continue;
      if (q && !search(i).toLowerCase().includes(q)) continue;
      idx.push(i);
    }
    if (sort) {
      const col = columns.find((c) => c.key === sort.key);
      if (col) {
        const vals = new Array(count);
        for (const i of idx) vals[i] = col.get(i);
        const dir = sort.dir;
        idx.sort((a, b) => {
          const x = vals[a];
          const y = vals[b];
          if (x === y) return a - b;
          if (x === null || x === undefined || x === "") return 1;
          if (y === null || y === undefined || y === "") return -1;
          return (x < y ? -1 : 1) * dir;
        });
      }
    }
    return idx;
  }, [count, query, sort, filter, columns]);
  const v = useVirtualizer({
    count: order.length,
    getScrollElement: () => parent.current,
    estimateSize: () => rowHeight,
    overscan: 12,
  });
  const template = columns.map((c) => c.width || "1fr").join(" ");
  const clickHead = (c) =>
    setSort((s) => (s && s.key === c.key ? { key: c.key, dir: -s.dir } : { key: c.key, dir: c.numeric ? -1 : 1 }));
  return (
    <div class="vtable" id={id}>
      <div class="vtable-bar">
        <input class="search" type="search" placeholder="search…" value={query} onInput={(e) => setQuery(e.target.value)} />
        <span class="count" data-testid="row-count">
          {order.length.toLocaleString("en-US")} of {count.toLocaleString("en-US")}
        </span>
      </div>
      <div class="vrow vhead" style={{ gridTemplateColumns: template }}>
        {columns.map((c) => (
          <div class={"cell" + (c.numeric ? " num" : "")} onClick={() => clickHead(c)} data-col={c.key}>
            {c.label}
            {sort && sort.key === c.key ? (sort.dir > 0 ? " ▲" : " ▼") : ""}
          </div>
        ))}
      </div>
      <div class="vbody" ref={parent} style={{ height: `${Math.min(height, Math.max(2, order.length) * rowHeight + 4)}px` }}>
        <div style={{ height: `${v.getTotalSize()}px`, position: "relative" }}>
          {v.getVirtualItems().map((item) => {
            const i = order[item.index];
            return (
              <div
                key={item.key}
                class={"vrow" + (selected === i ? " selected" : "")}
                data-row={i}
                style={{ gridTemplateColumns: template, height: `${rowHeight}px`, transform: `translateY(${item.start}px)` }}
                onClick={onRowClick ? () => onRowClick(i) : undefined}
              >
                {columns.map((c) => (
                  <div class={"cell" + (c.numeric ? " num" : "")} title={String(c.get(i) ?? "")}>
                    {c.render ? c.render(i) : c.get(i) ?? "–"}
                  </div>
                ))}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
