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
  const barH = 18;
  const gap = 4;
  const labelW = 160;
  const width = 640;
  const plotW = width - labelW - 90;
  const max = Math.max(0, ...rows.map((r) => Number(value(r)) || 0)) || 1;
  const height = rows.length * (barH + gap) + gap;
  const chart = svg('svg', { class: 'bar-chart', viewBox: `0 0 ${width} ${height}`, width: '100%', role: 'img', 'aria-label': title });
  chart.append(svg('title', {}, title));
  rows.forEach((r, i) => {
    const y = gap + i * (barH + gap);
    const v = Number(value(r)) || 0;
    const w = Math.max(0, v / max * plotW);
    const name = String(label(r));
    const g = svg('g', { class: 'bar-row' });
    g.append(
      svg('title', {}, `${name}: ${fmt(value(r))}`),
      svg('text', { x: labelW - 6, y: y + barH * 0.72, 'text-anchor': 'end', class: 'bar-label' }, name.length > 22 ? name.slice(0, 21) + '…' : name),
      svg('rect', { x: labelW, y, width: w.toFixed(1), height: barH, class: 'bar' }),
      svg('text', { x: labelW + w + 4, y: y + barH * 0.72, class: 'bar-value' }, fmt(value(r))));
    chart.append(g);
  });
  return chart;
}
