// A small horizontal bar chart in SVG, ours: one bar per row, its label on
// the left, its value at the bar's end. No chart library.

const svgNS = 'http://www.w3.org/2000/svg';

/** svg makes an SVG element with attributes and children. */
function svg(tag, attrs = {}, ...children) {
  const e = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  for (const c of children) e.append(c);
  return e;
}

/** fmt writes a number briefly (at most 4 significant decimals). */
export function fmt(v) {
  if (typeof v !== 'number') return v == null ? '' : String(v);
  return Number.isInteger(v) ? v.toLocaleString('en') : v.toLocaleString('en', { maximumSignificantDigits: 6 });
}

/** barChart draws rows as bars: label(row) names a bar, value(row) its
 * length; title is the chart's accessible name. Negative values draw as
 * zero-length bars (their value still written). */
export function barChart(rows, label, value, title) {
  const { width, height, bars } = barLayout(rows, label, value);
  const chart = svg('svg', { class: 'bar-chart', viewBox: `0 0 ${width} ${height}`, width: '100%', role: 'img', 'aria-label': title });
  chart.append(svg('title', {}, title));
  for (const b of bars) {
    const g = svg('g', { class: 'bar-row' });
    g.append(
      svg('title', {}, `${b.name}: ${b.text}`),
      svg('text', { x: labelW - 6, y: b.y + barH * 0.72, 'text-anchor': 'end', class: 'bar-label' }, b.shortName),
      svg('rect', { x: labelW, y: b.y, width: b.w.toFixed(1), height: barH, class: 'bar' }),
      svg('text', { x: labelW + b.w + 4, y: b.y + barH * 0.72, class: 'bar-value' }, b.text));
    chart.append(g);
  }
  return chart;
}

// The chart's geometry (SVG user units).
const barH = 18;
const gap = 4;
const labelW = 160;
const width = 640;
const plotW = width - labelW - 90;

/** barLayout is the geometry of the bar chart of rows: its width and
 * height, and per row its bar {name, shortName (at most 22 characters),
 * y, w (its length, the largest value's filling the plot), text (the
 * value written)}. */
export function barLayout(rows, label, value) {
  const max = Math.max(0, ...rows.map((r) => Number(value(r)) || 0)) || 1;
  const height = rows.length * (barH + gap) + gap;
  const bars = rows.map((r, i) => {
    const name = String(label(r));
    return {
      name,
      shortName: name.length > 22 ? name.slice(0, 21) + '…' : name,
      y: gap + i * (barH + gap),
      w: Math.max(0, (Number(value(r)) || 0) / max * plotW),
      text: fmt(value(r)),
    };
  });
  return { width, height, bars };
}
