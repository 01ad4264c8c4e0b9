// Receipts: one receipt's page, verified here in the browser (verify.js) as
// well as by the host, and a call's trace as a tree of receipts.
import { h, api, at, session, enc } from './lib.js';
import { verifyReceipt } from './verify.js';

// receiptView: two requests (the public confirm and the published keys).
export async function receiptView(id) {
  const [conf, keys] = await Promise.all([
    api('/api/dispatch?confirm=' + enc(id)).catch(e => { if (e.status === 404) return null; throw e; }),
    api('/.well-known/rowcall-receipt-keys')]);
  if (!conf) return h('section', {}, h('h1', {}, 'Receipt ' + id), h('p', { class: 'alert', role: 'alert', id: 'no-receipt' }, 'No receipt with that id on this host.'));
  const r = conf.receipt;
  const v = await verifyReceipt(r, keys.keys);
  const check = (name, label) => h('li', { 'data-check': name, 'data-ok': String(v[name].ok) },
    h('span', { class: v[name].ok ? 'yes' : 'no' }, v[name].ok ? '✓ ' : '✗ '), h('strong', {}, label), ': ', v[name].detail);
  const kv = (k, val) => val === '' || val == null ? [] : [h('dt', {}, k), h('dd', {}, val)];
  return h('article', { 'aria-labelledby': 'rc-h' },
    h('h1', { id: 'rc-h' }, 'Receipt ' + r.invocation_id),
    h('p', { id: 'browser-verdict', 'data-verified': String(v.ok), class: v.ok ? 'notice' : 'alert', role: 'status' },
      v.ok ? 'Verified in this browser: the hash, the Merkle path and the Ed25519 signature all hold.' : 'NOT verified in this browser: see the failed check below.'),
    h('ul', { class: 'check stack', id: 'checks' }, check('hash', 'Hash'), check('path', 'Merkle path'), check('key', 'Published key'), check('signature', 'Signature')),
    h('p', { id: 'server-verdict', 'data-confirmed': String(conf.confirmed) }, 'The host says: ', h('strong', {}, conf.status),
      conf.confirmed ? ' (confirmed)' : ' (not confirmed' + (conf.reason ? ': ' + conf.reason : '') + ')'),
    h('dl', { class: 'kv', id: 'receipt-fields' },
      kv('key', h('a', { href: '#/row/' + enc(r.key) }, r.key)), kv('type · runner', `${r.type} · ${r.runner}`),
      kv('outcome', r.outcome + (r.upstream_status ? ` (upstream ${r.upstream_status})` : '')),
      kv('ok · material · shape', `${r.ok} · ${r.material} · ${r.shape}`), kv('actor', r.actor), kv('token', r.token_id),
      kv('approval', r.approval ? h('a', { href: '#/approvals/' + enc(r.approval) }, r.approval) : ''), kv('approved by', r.approver),
      kv('started', `${r.started_at} (${r.duration_ms} ms)`), kv('cost', '$' + r.cost_usd),
      kv('trace', session.manages('read') ? h('a', { href: '#/trace/' + enc(r.trace) }, r.trace) : r.trace),
      kv('nested in', r.parent ? h('a', { href: '#/receipt/' + enc(r.parent) }, r.parent) : ''),
      kv('seq', String(r.seq)), kv('prev_sha256', h('code', {}, r.prev_sha256)), kv('sha256', h('code', {}, r.sha256)),
      kv('input_sha256', h('code', {}, r.input_sha256)), kv('output_sha256', h('code', {}, r.output_sha256)),
      kv('contract_sha256', h('code', {}, r.contract_sha256)), kv('key_id', r.key_id)),
    h('details', {}, h('summary', {}, 'The receipt as JSON'), h('pre', {}, JSON.stringify(r, null, 2))),
    h('p', {}, 'Public page: ', h('a', { href: at('/receipt/' + enc(r.invocation_id)) }, at('/receipt/' + r.invocation_id))));
}

// traceView: every receipt of one call and its nested calls (the owner key or
// a signed-in person; one request).
export async function traceView(trace) {
  const res = await api('/api/receipts?trace=' + enc(trace));
  return h('section', { 'aria-labelledby': 'tr-h' }, h('h1', { id: 'tr-h' }, 'Trace ' + trace), traceTree(res.receipts));
}

// traceTree nests receipts by parent: the call at the top, its steps below.
export function traceTree(receipts) {
  const ids = new Set(receipts.map(r => r.invocation_id));
  const kids = new Map();
  for (const r of receipts) {
    const p = r.parent && ids.has(r.parent) ? r.parent : '';
    if (!kids.has(p)) kids.set(p, []);
    kids.get(p).push(r);
  }
  for (const list of kids.values()) list.sort((a, b) => a.started_at < b.started_at ? -1 : a.started_at > b.started_at ? 1 : a.seq - b.seq);
  const node = r => h('li', { 'data-receipt': r.invocation_id },
    h('strong', {}, r.key), ' ', h('span', { class: 'badge' }, r.type), ' ', h('span', { class: r.ok ? 'yes' : 'no' }, r.outcome),
    ` · ${r.duration_ms} ms · `, h('a', { href: '#/receipt/' + enc(r.invocation_id), class: 'receipt-link' }, 'receipt ' + r.invocation_id),
    kids.has(r.invocation_id) ? h('ul', {}, kids.get(r.invocation_id).map(node)) : '');
  return h('ul', { class: 'tree', id: 'trace-tree', 'aria-label': 'Calls and their receipts' }, (kids.get('') || []).map(node));
}

