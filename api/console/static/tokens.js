// Capability tokens: mint (scope, pins, risk ceiling, expiry; the secret is
// shown once), list, revoke, and sign in with one to see its narrower view.
import { h, api, enc, errorBox, tableWrap } from './lib.js';
import { useCredential, render } from './app.js';

const words = s => s.split(/[\s,]+/).map(x => x.trim()).filter(Boolean);

function state(t) {
  if (t.revoked_at) return 'revoked ' + t.revoked_at;
  if (t.expires_at && new Date(t.expires_at) < new Date()) return 'expired ' + t.expires_at;
  return 'live' + (t.expires_at ? ' until ' + t.expires_at : '');
}

// tokensView: one request (the list); minting and revoking one each.
export async function tokensView() {
  const list = await api('/api/tokens');
  const out = h('div', { id: 'mint-out', 'aria-live': 'polite' });
  const f = {
    name: h('input', { id: 't_name' }),
    keys: h('input', { id: 't_keys', 'aria-describedby': 'h_keys', spellcheck: 'false' }),
    categories: h('input', { id: 't_categories', 'aria-describedby': 'h_categories' }),
    pin: h('input', { id: 't_pin', 'aria-describedby': 'h_pin', spellcheck: 'false' }),
    risk: h('select', { id: 't_risk' }, h('option', { value: 'low' }, 'low (no sensitive rows)'), h('option', { value: 'high' }, 'high (sensitive rows too)')),
    expires: h('select', { id: 't_expires' }, [['', 'never'], ['3600', '1 hour'], ['86400', '1 day'], ['604800', '7 days'], ['2592000', '30 days']].map(([v, l]) => h('option', { value: v }, l))),
    fixed: h('input', { id: 't_fixed', 'aria-describedby': 'h_fixed' }),
    max: h('input', { id: 't_max', type: 'number', min: '0', 'aria-describedby': 'h_max' }),
  };
  const field = (id, label, el, help) => h('div', { class: 'field' }, h('label', { for: id }, label), help ? h('p', { class: 'help', id: 'h_' + id.slice(2) }, help) : '', el);
  const form = h('form', { id: 'mint-form', onsubmit: async e => {
    e.preventDefault();
    const body = { name: f.name.value.trim(), keys: words(f.keys.value), categories: words(f.categories.value), pin: words(f.pin.value), risk_ceiling: f.risk.value };
    if (f.expires.value) body.expires_in = Number(f.expires.value);
    if (f.fixed.value) body.fixed_body = f.fixed.value;
    if (f.max.value) body.max_payload = Number(f.max.value);
    try {
      const res = await api('/api/tokens', { method: 'POST', body });
      out.replaceChildren(h('div', { class: 'notice', role: 'status' },
        h('p', {}, 'Token ', h('strong', { id: 'minted-id' }, res.id), ' minted. ', res.note, '.'),
        h('output', { class: 'secret mono', id: 'minted-secret', 'aria-label': 'The token secret' }, res.token),
        h('div', { class: 'actions' },
          h('button', { type: 'button', class: 'secondary', onclick: () => navigator.clipboard && navigator.clipboard.writeText(res.token) }, 'Copy'),
          h('button', { type: 'button', id: 'use-token', onclick: async () => {
            await useCredential(res.token);
            sessionStorage.setItem('rowcall.token', res.id);
            location.hash = '#/dir';
            render();
          } }, 'Sign in with this token (see what it sees)'))));
      table.replaceWith(table = tokenTable((await api('/api/tokens')).tokens));
    } catch (err) { out.replaceChildren(errorBox(err, 'mint-error')); }
  } },
  field('t_name', 'Name', f.name),
  field('t_keys', 'Keys', f.keys, 'Rows in scope by key, separated by spaces or commas.'),
  field('t_categories', 'Categories', f.categories, 'Rows in scope by category; * is every row. A token needs keys or categories.'),
  field('t_pin', 'Pin', f.pin, 'Keys to pin to their current contract: a changed contract then refuses the call (contract_changed).'),
  field('t_risk', 'Risk ceiling', f.risk), field('t_expires', 'Expires', f.expires),
  field('t_fixed', 'Fixed body', f.fixed, 'Optional: the only body this token may send.'),
  field('t_max', 'Payload ceiling (bytes)', f.max, 'Optional: the largest body this token may send.'),
  h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'mint' }, 'Mint token')));
  let table = tokenTable(list.tokens);
  return h('section', { 'aria-labelledby': 'tok-h' }, h('h1', { id: 'tok-h' }, 'Tokens'),
    h('h2', {}, 'Mint a token'), form, out, h('h2', {}, 'Tokens'), h('div', { id: 'tokens-wrap' }, table));
}

function tokenTable(tokens) {
  if (!tokens.length) return h('p', { id: 'tokens' }, 'No tokens yet.');
  const wrap = tableWrap(h('table', { id: 'tokens', 'aria-label': 'Tokens' },
    h('thead', {}, h('tr', {}, ['Id', 'Name', 'Client', 'Scope', 'Risk', 'Pins', 'State', ''].map(c => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, tokens.map(t => h('tr', { 'data-token': t.id },
      h('td', {}, h('code', {}, t.id)), h('td', {}, t.name || ''), h('td', { class: 'client' }, t.client || ''),
      h('td', {}, [(t.keys || []).length ? 'keys: ' + t.keys.join(', ') : '', (t.categories || []).length ? ' categories: ' + t.categories.join(', ') : '']),
      h('td', {}, t.risk_ceiling), h('td', {}, Object.keys(t.pins || {}).join(', ')),
      h('td', { class: 'state' }, state(t)),
      h('td', {}, t.revoked_at ? '' : h('button', { class: 'danger', 'aria-label': 'Revoke ' + t.id, onclick: async e => {
        try {
          await api('/api/tokens/' + enc(t.id), { method: 'DELETE' });
          const w = document.getElementById('tokens-wrap');
          w.replaceChildren(tokenTable((await api('/api/tokens')).tokens));
        } catch (err) { e.target.replaceWith(errorBox(err)); }
      } }, 'Revoke')))))));
  return wrap;
}
