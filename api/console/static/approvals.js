// Approvals: the calls waiting for a person. Each shows the row, who called
// (the credential it is bound to), why it waits and the shape of exactly what
// would be sent (credentials removed by the host); the owner, a person whose
// role holds the approve right, or a token minted with it over the row,
// approves or denies it with an optional reason (others see no buttons). The
// caller's call then runs once on the approval.
import { h, api, session, enc, errorBox, pretty, cut, tableWrap } from './lib.js';

// approvalsView: one request (the pending list, or one approval).
export async function approvalsView(id) {
  if (id) {
    const a = await api('/api/approvals/' + enc(id));
    return h('section', { 'aria-labelledby': 'ap-h' }, h('h1', { id: 'ap-h' }, 'Approval ', cut(a.id)), card(a));
  }
  const list = (await api('/api/approvals')).approvals;
  return h('section', { 'aria-labelledby': 'ap-h' }, h('h1', { id: 'ap-h' }, 'Calls waiting for approval'),
    list.length ? h('div', { id: 'approvals', class: 'stack' }, list.map(card))
      : h('p', { id: 'no-approvals' }, 'No call is waiting for a decision you may take.'));
}

const WHY = { row: 'the row requires approval', 'token:all': 'the token requires approval for every call', 'token:sensitive': 'the token requires approval for sensitive rows' };

// card is one approval: what it binds, its shape, and, while it is
// pending, the decision.
function card(a) {
  const out = h('div', { 'aria-live': 'polite', class: 'decision-out' });
  const reason = h('input', { id: 'reason-' + a.id, 'aria-label': 'Reason (optional)', placeholder: 'Reason (optional)' });
  const decide = verb => async () => {
    out.replaceChildren();
    try {
      const res = await api('/api/approvals/' + enc(a.id) + '/' + verb, { method: 'POST', body: reason.value.trim() ? { reason: reason.value.trim() } : {} });
      out.replaceChildren(h('p', { class: 'notice', role: 'status', 'data-decided': res.approval.status },
        verb === 'approve' ? 'Approved: the call runs once when its caller sends it again. ' : 'Denied. ',
        'Receipt ', h('a', { href: '#/receipt/' + enc(res.invocation_id) }, res.invocation_id), '.'));
      actions.remove();
    } catch (err) { out.replaceChildren(errorBox(err, 'decide-error')); }
  };
  const actions = h('div', { class: 'actions' }, reason,
    h('button', { type: 'button', class: 'approve', onclick: decide('approve') }, 'Approve'),
    h('button', { type: 'button', class: 'secondary deny', onclick: decide('deny') }, 'Deny'));
  const kv = (k, v) => v ? [h('dt', {}, k), h('dd', {}, v)] : [];
  return h('article', { class: 'approval', 'data-approval': a.id, 'aria-label': 'Approval ' + a.id },
    h('h2', {}, h('a', { href: '#/row/' + enc(a.key) }, a.key), ' · ', h('span', { 'data-status': a.status }, a.status)),
    h('dl', { class: 'kv' },
      kv('approval', h('a', { href: '#/approvals/' + enc(a.id) }, a.id)),
      kv('caller', h('code', { class: 'caller' }, a.actor)), kv('why', WHY[a.why] || a.why),
      kv('asked', a.created_at), kv(a.status === 'pending' || a.status === 'approved' ? 'expires' : 'was due', a.expires_at),
      kv('decided by', a.decided_by), kv('reason', a.reason), kv('ran as', a.used_by ? h('a', { href: '#/receipt/' + enc(a.used_by) }, a.used_by) : ''),
      kv('contract sha256', cut(a.contract_sha256)), kv('input sha256', cut(a.input_sha256))),
    h('h3', {}, 'What would be sent'),
    tableWrap(h('pre', { class: 'shape', 'aria-label': 'shape' }, pretty(a.shape))),
    a.status === 'pending' && session.can('approve') ? actions : '', out);
}
