// OAuth consent: a client (an MCP client signing in) asks for a token; the
// person signed in (or the owner key) sees which client, where the browser
// goes next, and chooses the scope the token gets, as when minting one.
// Approving mints an ordinary capability token held by that client and sends
// the browser back to it with a one-time code. The request is answered with
// what signs this tab in (the session cookie, or the key in this tab's
// sessionStorage as a header) and the request's own id; a person's consent
// names them and grants at most their own scope.
import { h, api, session, enc, errorBox } from './lib.js';

const words = s => s.split(/[\s,]+/).map(x => x.trim()).filter(Boolean);

export async function consentView(id) {
  const q = await api('/api/oauth/consent/' + enc(id));
  const out = h('div', { id: 'consent-out', 'aria-live': 'polite' });
  const f = {
    name: h('input', { id: 'c_name', value: q.client_name || '' }),
    keys: h('input', { id: 'c_keys', spellcheck: 'false' }),
    categories: h('input', { id: 'c_categories' }),
    risk: h('select', { id: 'c_risk' }, h('option', { value: 'low' }, 'low (no sensitive rows)'), h('option', { value: 'high' }, 'high (sensitive rows too)')),
    expires: h('select', { id: 'c_expires' }, [['86400', '1 day'], ['604800', '7 days'], ['2592000', '30 days'], ['', 'never']].map(([v, l]) => h('option', { value: v, selected: v === '2592000' }, l))),
    rate: h('input', { id: 'c_rate', placeholder: 'e.g. 30/minute' }),
    budget: h('input', { id: 'c_budget', type: 'number', min: '0', step: 'any' }),
  };
  const field = (id, label, el, help) => h('div', { class: 'field' }, h('label', { for: id }, label), help ? h('p', { class: 'help' }, help) : '', el);
  const send = async (path, body) => {
    out.replaceChildren();
    try { location.assign((await api(path, { method: 'POST', body })).redirect); }
    catch (err) { out.replaceChildren(errorBox(err, 'consent-error')); }
  };
  const form = h('form', { id: 'consent-form', onsubmit: e => {
    e.preventDefault();
    const body = { name: f.name.value.trim(), keys: words(f.keys.value), categories: words(f.categories.value), risk_ceiling: f.risk.value };
    if (f.expires.value) body.expires_in = Number(f.expires.value);
    if (f.rate.value.trim()) body.rate = f.rate.value.trim();
    if (f.budget.value) body.budget_usd_day = Number(f.budget.value);
    send('/api/oauth/consent/' + enc(id), body);
  } },
  field('c_name', 'Token name', f.name),
  field('c_keys', 'Keys', f.keys, 'Rows the client may call, by key, separated by spaces or commas.'),
  field('c_categories', 'Categories', f.categories, 'Rows by category; * is every row. The token needs keys or categories.'),
  field('c_risk', 'Risk ceiling', f.risk), field('c_expires', 'Expires', f.expires),
  field('c_rate', 'Rate', f.rate, 'Optional: calls per second, minute or hour.'),
  field('c_budget', 'Budget per day (USD)', f.budget, 'Optional: what its calls may cost a day.'),
  h('div', { class: 'actions' },
    h('button', { type: 'submit', id: 'consent-approve' }, 'Approve'),
    h('button', { type: 'button', class: 'secondary', id: 'consent-deny', onclick: () => send('/api/oauth/consent/' + enc(id) + '/deny') }, 'Deny')));
  return h('section', { 'aria-labelledby': 'consent-h' },
    h('h1', { id: 'consent-h' }, 'Sign in ', h('span', { id: 'consent-client' }, q.client_name || q.client_id), ' to rowcall?'),
    q.logo_uri ? h('img', { src: q.logo_uri, alt: '', width: '48', height: '48', referrerpolicy: 'no-referrer' }) : '',
    h('dl', { class: 'consent' },
      h('dt', {}, 'Client'), h('dd', {}, h('code', { id: 'consent-client-id' }, q.client_id)),
      h('dt', {}, 'After you answer, this browser goes to'), h('dd', {}, h('code', { id: 'consent-redirect' }, q.redirect_uri)),
      h('dt', {}, 'For'), h('dd', {}, h('code', {}, q.resource)),
      q.scope ? [h('dt', {}, 'It asks for'), h('dd', {}, q.scope)] : ''),
    h('p', { class: 'help' }, 'Approving mints a capability token held by this client, with the scope below; revoke it any time under Tokens.',
      session.kind === 'person' ? ' It is yours: it names you and never reaches past your role and scope.' : ''),
    form, out);
}
