// A map's layer as the editor sends it back to the API: the options of
// the layer document the API answered, without what the API computes.
// Pure: the editor uses it, the tests (web/test) run it in Node.

/** clean drops nulls, empty lists and empty objects from a value, so that
 * what the API answered can be sent back as options. */
export function clean(v) {
  if (Array.isArray(v)) return v.length ? v : undefined;
  if (v && typeof v === 'object') {
    const out = {};
    for (const [k, x] of Object.entries(v)) {
      const c = clean(x);
      if (c !== undefined) out[k] = c;
    }
    return Object.keys(out).length ? out : undefined;
  }
  return v == null ? undefined : v;
}

/** payload is a layer as the API takes it: the options of its document
 * without what the API computes (classes, the expanded ramp). */
export function payload(l) {
  const st = structuredClone(l.styles || {});
  delete st.fill?.classification;
  delete st.icon?.classification;
  if (st.fill) {
    if (st.fill.ramp) st.fill.colors = st.fill.ramp;
    delete st.fill.ramp;
    if (st.fill.classificationType === 'Manual') delete st.fill.categories;
    else delete st.fill.classificationBreaks;
  }
  return clean({ source: l.source, title: l.title, subtitle: l.subtitle, opacity: l.opacity, visible: l.visible, styles: st }) || {};
}
