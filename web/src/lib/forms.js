// What the account pages' forms share: marking a form busy while its
// request runs, and showing the API's per-field messages beside the fields.

/** busy disables a form's buttons while its request runs (so it is not
 * sent twice) and marks the form aria-busy. */
export function busy(form, on) {
  form.setAttribute('aria-busy', on ? 'true' : 'false');
  form.querySelectorAll('button').forEach((b) => { b.disabled = on; });
}

/** clearFieldErrors removes the messages showFieldErrors put. */
export function clearFieldErrors(form) {
  form.querySelectorAll('[aria-invalid]').forEach((i) => i.removeAttribute('aria-invalid'));
  form.querySelectorAll('.field-error').forEach((p) => { p.textContent = ''; });
}

/** showFieldErrors marks the fields an API error names ({"login": ["is
 * taken"], …} beside "error") and shows each message under its field
 * (<p class="field-error" id="FIELD-error">); it returns the first field
 * marked, to put the focus on, or null. */
export function showFieldErrors(form, err) {
  clearFieldErrors(form);
  let first = null;
  for (const { field, text } of fieldMessages(err)) {
    const input = form.querySelector('#' + CSS.escape(field));
    const out = form.querySelector('#' + CSS.escape(field + '-error'));
    if (!input) continue;
    input.setAttribute('aria-invalid', 'true');
    if (out) out.textContent = text;
    first ??= input;
  }
  return first;
}

/** fieldMessages are the per-field messages of an API error (its body's
 * members other than "error" and "code" that are lists), each as
 * {field, text}: the field's name in words, then its messages. */
export function fieldMessages(err) {
  const out = [];
  for (const [field, msgs] of Object.entries(err?.body || {})) {
    if (field === 'error' || field === 'code' || !Array.isArray(msgs)) continue;
    out.push({ field, text: field.replace(/_/g, ' ') + ' ' + msgs.join('; ') });
  }
  return out;
}
