// Call a row: arguments (a form from input_schema, else the pipe string with
// the row's # ARGS line), a shape preview (nothing is sent; credentials are
// redacted by the host), then run; the result and the trace as a tree, each
// call with its receipt.
import { h, api, session, enc, docLine, errorBox, pretty, resultView, lacks } from './lib.js';
import { traceTree } from './receipts.js';

function schemaOf(row) {
  try {
    const s = JSON.parse(row.input_schema || '');
    return s && typeof s === 'object' && s.properties && Object.keys(s.properties).length ? s : null;
  } catch { return null; }
}

// callView: one request to read the row; a preview or run is one more, and
// the trace one more (owner).
export async function callView(key) {
  const row = await api('/api/directory/' + enc(key));
  const schema = schemaOf(row);
  const form = h('form', { id: 'call-form' });
  let body;
  if (schema) {
    const req = new Set(schema.required || []);
    const inputs = Object.entries(schema.properties).map(([name, p], i) => {
      const id = 'arg_' + i;
      const t = p.type || (p.enum ? 'enum' : 'string');
      const input = p.enum ? h('select', { id, name }, h('option', { value: '' }, ''), p.enum.map(o => h('option', { value: String(o) }, String(o))))
        : t === 'boolean' ? h('select', { id, name }, ['', 'true', 'false'].map(o => h('option', { value: o }, o)))
        : h('input', { id, name, type: t === 'integer' || t === 'number' ? 'number' : 'text', required: req.has(name), 'aria-describedby': 'd_' + id, step: t === 'number' ? 'any' : null });
      return [input, h('div', { class: 'field' }, h('label', { for: id }, name, req.has(name) ? ' (required)' : '', ' ', h('span', { class: 'badge' }, t)),
        h('p', { class: 'help', id: 'd_' + id }, p.description || ''), input)];
    });
    form.append(h('p', { class: 'help' }, 'Arguments from the row\'s input_schema; they are sent as one pipe-separated body in declared order and checked before anything runs.'),
      ...inputs.map(([, el]) => el));
    body = () => {
      const vals = inputs.map(([el]) => el.value);
      while (vals.length && vals[vals.length - 1] === '') vals.pop();
      return vals.join('|');
    };
  } else {
    const args = docLine(row.content, 'ARGS'), ex = docLine(row.content, 'EX');
    const input = h('input', { id: 'call-body', name: 'body', 'aria-describedby': 'call-args', spellcheck: 'false' });
    form.append(h('div', { class: 'field' }, h('label', { for: 'call-body' }, 'Arguments (one string, split on |)'),
      h('p', { class: 'help', id: 'call-args' }, args ? ['# ARGS: ', h('code', {}, args)] : 'This row documents no # ARGS line.', ex ? [' · # EX: ', h('code', {}, ex)] : ''),
      input));
    body = () => input.value;
  }
  const out = h('div', { id: 'call-out', 'aria-live': 'polite' });
  const send = shape => async () => {
    out.replaceChildren(h('p', { role: 'status' }, shape ? 'Previewing…' : 'Running…'));
    try {
      const res = await api('/api/dispatch', { method: 'POST', body: { key, body: body(), shape } });
      out.replaceChildren(await result(res, shape));
    } catch (err) { out.replaceChildren(errorBox(err, 'call-error')); }
  };
  form.addEventListener('submit', e => { e.preventDefault(); send(false)(); });
  // Without the call right the buttons stay, disabled, under the reason.
  const may = session.can('call');
  form.append(h('div', { class: 'actions' },
    h('button', { type: 'button', class: 'secondary', id: 'shape', onclick: send(true), disabled: !may }, 'Preview the shape'),
    h('button', { type: 'submit', id: 'run', disabled: !may }, 'Run')));
  return h('section', { 'aria-labelledby': 'call-h' }, h('h1', { id: 'call-h' }, 'Call ' + key),
    h('p', {}, h('a', { href: '#/row/' + enc(key) }, 'The contract'), ' · ', row.type, ' · ', docLine(row.content, 'WHAT') || ''),
    may ? '' : lacks('call'), form, out);
}

async function result(res, shape) {
  const proof = res.proof || {};
  const parts = [h('h2', {}, shape ? 'Shape (nothing was sent)' : 'Result'),
    h('p', { id: 'call-status', 'data-ok': String(res.ok), 'data-ran': String(res.ran) }, res.ok ? (res.ran ? 'Ran, OK.' : 'OK, nothing ran.') : 'Failed.',
      ' Trace ', h('code', {}, res.trace), proof.invocation_id ? [' · ', h('a', { href: '#/receipt/' + enc(proof.invocation_id), id: 'top-receipt' }, 'receipt ' + proof.invocation_id)] : '')];
  if (shape) parts.push(h('div', { id: 'shape-out' }, shapeTree(res.shape)), h('details', {}, h('summary', {}, 'As JSON'), h('pre', {}, pretty(res.shape))));
  parts.push(resultView(res.result, 'result'));
  if (!shape) {
    if (session.manages('read')) {
      const tr = await api('/api/receipts?trace=' + enc(res.trace));
      parts.push(h('h2', {}, 'What ran'), traceTree(tr.receipts));
    } else if (proof.invocation_id) {
      parts.push(h('p', {}, 'A capability token cannot read a whole trace; this call\'s own receipt is linked above.'));
    }
  }
  return h('div', {}, parts);
}

// shapeTree shows a flow's plan as nested steps (parallel blocks nested),
// and any other row's request as it would be sent.
function shapeTree(s) {
  const step = st => st.parallel ? h('li', {}, 'in parallel:', h('ul', {}, st.parallel.map(step)))
    : st.key ? h('li', { 'data-step': st.key }, h('strong', {}, st.key), ': ', h('code', {}, st.body ?? ''), st.bind ? ' ⇒ ' + st.bind : '')
    : h('li', {}, h('code', {}, JSON.stringify(st)));
  if (Array.isArray(s)) return h('ol', { class: 'tree', id: 'shape-steps' }, s.map(step));
  if (s && typeof s === 'object' && s.method) return h('p', { id: 'shape-request' }, h('code', {}, s.method + ' ' + s.url));
  return h('pre', {}, pretty(s));
}
