// A virtualised table over columnar data: only the visible rows are in the DOM, so 150,000 pods
// scroll as fast as 50. Search, filter and sort work on an index array over the columns.
//
// Nothing is cut: each column is as wide as its widest text (measured once per data, on the
// longest values), text columns give up width down to a floor when the table is narrower than
// the sum, and their text then wraps onto more lines (rows are measured, not fixed). A table
// still wider than its box scrolls sideways, header and rows together.
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

const PAD = 14; // a cell's horizontal padding and border, and a little slack for subpixel text, px
const WRAP_FLOOR = 150; // a wrapping column keeps its widest unbreakable piece, up to this much
const COMFORT = 280; // a shrinkFirst column (a message) keeps this much until the others reached their floors
const LEAST = 56; // and in a narrow window, at least this much (or its header's widest word)
const CANDIDATES = 6; // the longest texts of a column that are measured

let ctx2d = null;
function textWidth(text, font) {
  if (!ctx2d) ctx2d = document.createElement("canvas").getContext("2d");
  ctx2d.font = font;
  return ctx2d.measureText(text).width;
}

// The page's fonts and scroll bars are the same for every table: read once.
let pageFonts = null;
function fontsOf(table) {
  // the computed shorthand ``font`` is empty in Chromium: build it from its parts
  const fontOf = (e) => {
    const c = getComputedStyle(e);
    return `${c.fontStyle} ${c.fontWeight} ${c.fontSize} ${c.fontFamily}`;
  };
  if (!pageFonts) pageFonts = { body: fontOf(table), head: fontOf(table.querySelector(".vhead") || table) };
  return pageFonts;
}

// The width of a vertical scroll bar (the rows keep room for one: scrollbar-gutter), 0 where
// scroll bars overlay the content.
let scrollbar = null;
function scrollbarWidth() {
  if (scrollbar === null) {
    const probe = document.createElement("div");
    probe.style.cssText = "position:absolute;top:-999px;width:100px;height:50px;overflow-y:scroll";
    document.body.appendChild(probe);
    scrollbar = probe.offsetWidth - probe.clientWidth;
    probe.remove();
  }
  return scrollbar;
}

// The display text of a cell (what is measured): the column's text(), else its value.
export const cellText = (c, i) => (c.text ? c.text(i) : String(c.get(i) ?? "–"));

// The few rows whose text is longest: numbers by magnitude (their formatting grows with it),
// strings by length. Cheap enough for 150,000 rows: one pass over the values.
function longest(c, count) {
  if (c.numeric) {
    let lo = -1;
    let hi = -1;
    let loV = 0;
    let hiV = 0;
    for (let i = 0; i < count; i++) {
      const v = c.get(i);
      if (v === null || v === undefined) continue;
      if (lo < 0 || v < loV) [lo, loV] = [i, v];
      if (hi < 0 || v > hiV) [hi, hiV] = [i, v];
    }
    const out = [lo, hi].filter((i) => i >= 0);
    // a formatted text that does not grow with the value (a list per node): its longest ones too
    return c.text && count <= 20000 ? [...out, ...longestText(c, count)] : out;
  }
  return longestText(c, count);
}

function longestText(c, count) {
  const top = [];
  for (let i = 0; i < count; i++) {
    const v = c.text ? c.text(i) : c.get(i);
    const n = v === null || v === undefined ? 0 : String(v).length;
    if (top.length < CANDIDATES || n > top[top.length - 1][0]) {
      top.push([n, i]);
      top.sort((a, b) => b[0] - a[0]);
      if (top.length > CANDIDATES) top.pop();
    }
  }
  return top.map((t) => t[1]);
}

// the widest piece a text breaks into: at spaces, and after hyphens and slashes (where names wrap)
const widestPiece = (s, font) => Math.max(0, ...String(s).split(/[\s\u200b]+|(?<=[-/])/).map((w) => textWidth(w, font)));

// Per column: natural width (its widest text on one line), floor (the least it may get: its
// widest unbreakable piece, header included, but no more than WRAP_FLOOR: beyond, text breaks
// anywhere) and whether it wraps at all (numbers do not).
function measure(columns, count, font, headFont) {
  return columns.map((c) => {
    const head = widestPiece(c.label, headFont);
    let content = 0;
    let piece = 0;
    for (const i of longest(c, count)) {
      const t = cellText(c, i);
      content = Math.max(content, textWidth(t, font));
      piece = Math.max(piece, widestPiece(t, font));
    }
    const wraps = !c.numeric && c.wrap !== false;
    const natural = Math.ceil(Math.max(head, content)) + PAD;
    // a ``whole`` column keeps WRAP_FLOOR even when its pieces are narrower (a name in two or three lines)
    const keep = c.whole ? WRAP_FLOOR : Math.min(piece, WRAP_FLOOR);
    const floor = Math.min(natural, wraps ? Math.ceil(Math.max(head, keep)) + PAD : natural);
    const least = c.whole ? floor : Math.min(floor, wraps ? Math.ceil(Math.max(head, LEAST)) + PAD : natural);
    const comfort = Math.min(natural, Math.max(floor, COMFORT));
    return { natural, comfort, floor, least, wraps, first: !!c.shrinkFirst };
  });
}

// Shrinks the ``open`` columns (indices) from their current widths towards ``bound`` ("floor"
// or "least") in proportion, until they fit in ``room``; those that would go below it take it.
function squeeze(sizes, widths, open, room, bound) {
  const from = Object.fromEntries(open.map((k) => [k, widths[k]]));
  for (let guard = 0; guard <= sizes.length && open.length; guard++) {
    const want = open.reduce((s, k) => s + from[k], 0);
    const scale = Math.max(0, room) / want;
    const low = open.filter((k) => from[k] * scale < sizes[k][bound]);
    if (!low.length) {
      for (const k of open) widths[k] = Math.max(sizes[k][bound], Math.floor(from[k] * Math.min(1, scale)));
      return;
    }
    for (const k of low) {
      widths[k] = sizes[k][bound];
      room -= sizes[k][bound];
    }
    open = open.filter((k) => !low.includes(k));
  }
}

// Column widths for a box of ``avail`` px: every natural width when they fit (the room left goes
// to the wrapping columns); else the columns marked shrinkFirst (long messages) give up width
// first, down to a comfortable width, then the other wrapping ones down to their floors, then
// the first ones to theirs, then all to the least; still too wide, the table scrolls.
export function layout(sizes, avail) {
  const natural = sizes.reduce((s, x) => s + x.natural, 0);
  const widths = sizes.map((x) => x.natural);
  const all = sizes.map((_, k) => k);
  if (natural <= avail) {
    const flex = all.filter((k) => sizes[k].wraps);
    const share = flex.reduce((s, k) => s + sizes[k].natural, 0);
    for (const k of flex) widths[k] += Math.floor(((avail - natural) * sizes[k].natural) / share);
  } else {
    const first = all.filter((k) => sizes[k].wraps && sizes[k].first);
    const rest = all.filter((k) => sizes[k].wraps && !sizes[k].first);
    const wrapping = [...first, ...rest];
    const sum = (ks) => ks.reduce((s, k) => s + widths[k], 0);
    const fixed = sum(all.filter((k) => !sizes[k].wraps));
    squeeze(sizes, widths, first, avail - fixed - sum(rest), "comfort");
    if (fixed + sum(wrapping) > avail) squeeze(sizes, widths, rest, avail - fixed - sum(first), "floor");
    if (fixed + sum(wrapping) > avail) squeeze(sizes, widths, first, avail - fixed - sum(rest), "floor");
    // a narrow window: names break inside their pieces too (still whole, on more lines)
    if (fixed + sum(wrapping) > avail) squeeze(sizes, widths, wrapping, avail - fixed, "least");
  }
  return { widths, total: widths.reduce((s, w) => s + w, 0) };
}

// columns: [{key, label, get(i) -> value (sorts), text?(i) -> string shown (measured),
// render?(i) -> node, numeric, wrap (default: text columns wrap), shrinkFirst (long texts that
// give up width before the others, a message), whole (never narrower than WRAP_FLOOR: the
// table scrolls sideways first; a matrix's row names)}]
export function VTable({ id, columns, count, search, filter, onRowClick, selected, height = 420, rowHeight = 26, initialSort }) {
  const [sort, setSort] = useState(initialSort || null); // {key, dir}
  const [query, setQuery] = useState("");
  const [avail, setAvail] = useState(0);
  const [fonts, setFonts] = useState(null);
  const box = useRef(null);
  const parent = useRef(null);
  useLayoutEffect(() => {
    const el = box.current;
    setFonts(fontsOf(el));
    // the box's width as the browser lays it out (no forced layout: the observer reports it)
    const ro = new ResizeObserver(([entry]) => setAvail(Math.max(0, Math.floor(entry.contentRect.width) - scrollbarWidth())));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  const sizes = useMemo(() => (fonts ? measure(columns, count, fonts.body, fonts.head) : null), [columns, count, fonts]);
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
    getItemKey: (k) => order[k],
    overscan: 12,
  });
  const lay = sizes && avail ? layout(sizes, avail) : null;
  // rows whose text wraps are taller: read every row's height after it is laid out, all at once
  // (one layout for all of them), and tell the virtualiser those that changed
  useLayoutEffect(() => {
    if (!lay || !parent.current) return;
    const heights = [];
    for (const el of parent.current.querySelectorAll(".vrow")) heights.push([+el.dataset.index, el.offsetHeight]);
    for (const [k, h] of heights) v.resizeItem(k, h);
  });
  const template = lay ? lay.widths.map((w) => `${w}px`).join(" ") : "";
  const inner = lay ? `${lay.total + scrollbarWidth()}px` : "100%";
  const clickHead = (c) =>
    setSort((s) => (s && s.key === c.key ? { key: c.key, dir: -s.dir } : { key: c.key, dir: c.numeric ? -1 : 1 }));
  return (
    <div class="vtable" id={id} ref={box}>
      <div class="vtable-bar">
        <input class="search" type="search" placeholder="search…" value={query} onInput={(e) => setQuery(e.target.value)} />
        <span class="count" data-testid="row-count">
          {order.length.toLocaleString("en-US")} of {count.toLocaleString("en-US")}
        </span>
      </div>
      <div class="vscroll">
        <div style={{ width: inner }}>
          <div class="vrow vhead" style={{ gridTemplateColumns: template }}>
            {columns.map((c) => (
              <div class={"cell" + (c.numeric ? " num" : "")} onClick={() => clickHead(c)} data-col={c.key}>
                {c.label}
                {sort && sort.key === c.key ? (sort.dir > 0 ? " ▲" : " ▼") : ""}
              </div>
            ))}
          </div>
          <div class="vbody" ref={parent} style={{ height: `${Math.min(height, Math.max(2 * rowHeight, v.getTotalSize()) + 4)}px` }}>
            <div style={{ height: `${v.getTotalSize()}px`, position: "relative" }}>
              {lay
                ? v.getVirtualItems().map((item) => {
                    const i = order[item.index];
                    return (
                      <div
                        key={item.key}
                        data-index={item.index}
                        class={"vrow" + (selected === i ? " selected" : "")}
                        data-row={i}
                        style={{ gridTemplateColumns: template, minHeight: `${rowHeight}px`, transform: `translateY(${item.start}px)` }}
                        onClick={onRowClick ? () => onRowClick(i) : undefined}
                      >
                        {columns.map((c) => (
                          <div class={"cell" + (c.numeric ? " num" : "")}>{c.render ? c.render(i) : cellText(c, i)}</div>
                        ))}
                      </div>
                    );
                  })
                : null}
            </div>
          </div>
        </div>
      </div>
    </div>
  );
}
