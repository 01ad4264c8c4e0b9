// Learned: the questions ask learned from use (docs/finding.md, "Learning
// from use"), newest first. Each shows its row, the scope it ranks for, who
// taught it and the receipt of the call that did; the owner approves it
// (kept whatever its age), rewrites it or deletes it.
import { h, api, enc, errorBox, cut } from './lib.js';

// learnedView lists the learned phrases (of one row when key is set).
export async function learnedView(key) {
  const list = (await api('/api/learned' + (key ? '?key=' + enc(key) : ''))).phrases;
  return h('section', { 'aria-labelledby': 'ln-h' }, h('h1', { id: 'ln-h' }, 'Learned questions', key ? ' of ' + key : ''),
    h('p', {}, 'Questions a teaching credential asked before it called the row. Each ranks its row for asks under the same scope; none is part of the row or its contract.'),
    list.length ? h('div', { id: 'learned', class: 'stack' }, list.map(card))
      : h('p', { id: 'no-learned' }, 'Nothing learned yet.'));
}

// card is one phrase with the owner's actions.
function card(p) {
  const out = h('div', { 'aria-live': 'polite', class: 'learned-out' });
  const text = h('input', { id: 'phrase-' + p.id, 'aria-label': 'Question', value: p.phrase });
  const act = (method, body, done) => async () => {
    out.replaceChildren();
    try {
      await api('/api/learned/' + enc(p.id), { method, body: typeof body === 'function' ? body() : body });
      out.replaceChildren(h('p', { class: 'notice', role: 'status' }, done));
    } catch (err) { out.replaceChildren(errorBox(err, 'learned-error')); }
  };
  const kv = (k, v) => v ? [h('dt', {}, k), h('dd', {}, v)] : [];
  return h('article', { class: 'learned', 'data-phrase': p.id, 'aria-label': 'Learned question ' + p.id },
    h('h2', {}, h('a', { href: '#/row/' + enc(p.key) }, p.key), ' · ', p.approved ? 'approved' : p.source),
    h('dl', { class: 'kv' },
      kv('scope', h('code', {}, p.scope)), kv('taught by', h('code', {}, p.actor)), kv('times', String(p.uses)),
      kv('receipt', p.receipt ? h('a', { href: '#/receipt/' + enc(p.receipt) }, cut(p.receipt)) : ''), kv('last taught', p.used_at)),
    h('div', { class: 'actions' }, text,
      h('button', { type: 'button', class: 'save', onclick: act('PATCH', () => ({ phrase: text.value }), 'Saved.') }, 'Save'),
      p.approved ? '' : h('button', { type: 'button', class: 'approve', onclick: act('PATCH', { approved: true }, 'Approved.') }, 'Approve'),
      h('button', { type: 'button', class: 'secondary forget', onclick: act('DELETE', undefined, 'Deleted.') }, 'Delete')),
    out);
}
