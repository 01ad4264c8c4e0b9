// Capability tokens: mint (scope, pins, risk ceiling, audience, rate, burst,
// calls per day, budgets, payload ceiling, fixed body, expiry; the secret is
// shown once), list, revoke, and sign in with one to see its narrower view.
// A signed-in person mints from their session and sees their own tokens (the
// host lists only those, unless their role holds the settings right).
import { h, api, session, enc, errorBox, tableWrap, cut } from './lib.js';
import { useCredential, render } from './app.js';

const words = s => s.split(/[\s,]+/).map(x => x.trim()).filter(Boolean);

// stateCell says whether the token is live: revoked or expired (and when),
// else live and until when; a time is one word, kept on one line.
function stateCell(t) {
  const at = v => h('span', { class: 'nowrap' }, v);
  if (t.revoked_at) return ['revoked ', at(t.revoked_at)];
  if (t.expires_at && new Date(t.expires_at) < new Date()) return ['expired ', at(t.expires_at)];
  return t.expires_at ? ['live until ', at(t.expires_at)] : 'live';
}

// LIMITS are the limits a token can carry from its mint (rowcall.Limits and
// the mint request's ceilings), as [JSON name, label, help, input attributes].
const LIMITS = [
  ['burst', 'Burst', 'Calls at once before the rate applies (default: the rate\'s N). Needs a rate.', { type: 'number', min: '1', max: '1000000', step: '1' }],
  ['calls_day', 'Calls per day', 'Top-level calls per UTC day; then budget_exhausted.', { type: 'number', min: '1', step: '1' }],
  ['budget_usd_day', 'Budget per day (USD)', 'Spending (cost_usd of its receipts) per UTC day.', { type: 'number', min: '0', step: '0.01' }],
  ['budget_usd_month', 'Budget per month (USD)', 'Spending per UTC month.', { type: 'number', min: '0', step: '0.01' }],
  ['max_payload', 'Payload ceiling (bytes)', 'The largest body this token may send.', { type: 'number', min: '1', step: '1' }],
];

// tokensView: one request (the list); minting and revoking one each.
export async function tokensView() {
  const list = await api('/api/tokens');
  const out = h('div', { id: 'mint-out', 'aria-live': 'polite' });
  const f = {
    name: h('input', { id: 't_name' }),
    keys: h('input', { id: 't_keys', 'aria-describedby': 'h_keys', spellcheck: 'false' }),
    categories: h('input', { id: 't_categories', 'aria-describedby': 'h_categories' }),
    pin: h('input', { id: 't_pin', 'aria-describedby': 'h_pin', spellcheck: 'false' }),
    risk: h('select', { id: 't_risk', 'aria-describedby': 'h_risk' }, h('option', { value: 'low' }, 'low (no sensitive rows)'), h('option', { value: 'high' }, 'high (sensitive rows too)')),
    expires: h('select', { id: 't_expires', 'aria-describedby': 'h_expires' }, [['', 'never'], ['3600', '1 hour'], ['86400', '1 day'], ['604800', '7 days'], ['2592000', '30 days'], ['at', 'at a time…']].map(([v, l]) => h('option', { value: v }, l))),
    expiresAt: h('input', { id: 't_expires_at', type: 'datetime-local', 'aria-describedby': 'h_expires_at' }),
    audience: h('input', { id: 't_audience', 'aria-describedby': 'h_audience', spellcheck: 'false' }),
    fixed: h('input', { id: 't_fixed', 'aria-describedby': 'h_fixed' }),
    rateN: h('input', { id: 't_rate', type: 'number', min: '1', max: '1000000', step: '1', 'aria-describedby': 'h_rate' }),
    rateWindow: h('select', { id: 't_rate_window', 'aria-label': 'per' }, ['second', 'minute', 'hour'].map(w => h('option', { value: w, selected: w === 'minute' }, 'per ' + w))),
  };
  const lim = Object.fromEntries(LIMITS.map(([name, , , attrs]) => [name, h('input', { id: 't_' + name, 'aria-describedby': 'h_' + name, ...attrs })]));
  const field = (id, label, el, help) => h('div', { class: 'field' }, h('label', { for: id }, label), help ? h('p', { class: 'help', id: 'h_' + id.slice(2) }, help) : '', el);
  const expiresAtField = field('t_expires_at', 'Expires at (your local time)', f.expiresAt, 'Sent as expires_at in UTC.');
  const syncExpiry = () => { expiresAtField.hidden = f.expires.value !== 'at'; };
  f.expires.addEventListener('change', syncExpiry);
  syncExpiry();
  const form = h('form', { id: 'mint-form', onsubmit: async e => {
    e.preventDefault();
    const body = { name: f.name.value.trim(), keys: words(f.keys.value), categories: words(f.categories.value), pin: words(f.pin.value), risk_ceiling: f.risk.value };
    if (f.expires.value === 'at' && f.expiresAt.value) body.expires_at = new Date(f.expiresAt.value).toISOString();
    else if (f.expires.value && f.expires.value !== 'at') body.expires_in = Number(f.expires.value);
    if (f.audience.value.trim()) body.audience = f.audience.value.trim();
    if (f.fixed.value) body.fixed_body = f.fixed.value;
    if (f.rateN.value) body.rate = f.rateN.value.trim() + '/' + f.rateWindow.value;
    for (const [name] of LIMITS) if (lim[name].value.trim()) body[name] = Number(lim[name].value);
    try {
      const res = await api('/api/tokens', { method: 'POST', body });
      const tokens = (await api('/api/tokens')).tokens;
      // The list and the notice change together: the new token is listed
      // when its secret shows.
      table.replaceWith(table = tokenTable(tokens));
      out.replaceChildren(h('div', { class: 'notice', role: 'status' },
        h('p', {}, 'Token ', h('strong', { id: 'minted-id' }, res.id), ' minted. ', res.note, '.'),
        h('output', { class: 'secret mono', id: 'minted-secret', 'aria-label': 'The token secret' }, res.token),
        h('div', { class: 'actions' },
          h('button', { type: 'button', class: 'secondary', onclick: () => navigator.clipboard && navigator.clipboard.writeText(res.token) }, 'Copy'),
          h('button', { type: 'button', id: 'use-token', onclick: async () => {
            await useCredential(res.token);
            location.hash = '#/dir';
            render();
          } }, 'Sign in with this token (see what it sees)'))));
    } catch (err) { out.replaceChildren(errorBox(err, 'mint-error')); }
  } },
  h('fieldset', { class: 'group' }, h('legend', {}, 'Scope'),
    field('t_name', 'Name', f.name),
    field('t_keys', 'Keys', f.keys, 'Rows in scope by key, separated by spaces or commas.'),
    field('t_categories', 'Categories', f.categories, 'Rows in scope by category; * is every row. A token needs keys or categories.'),
    field('t_pin', 'Pin', f.pin, 'Keys to pin to their current contract: a changed contract then refuses the call (contract_changed).'),
    h('div', { class: 'grid2' },
      field('t_risk', 'Risk ceiling', f.risk, 'high lets it call sensitive rows.'),
      field('t_audience', 'Audience', f.audience, 'The host this token is for (empty: this one).'))),
  h('fieldset', { class: 'group', id: 'limits' }, h('legend', {}, 'Limits and budgets (empty: none)'),
    h('div', { class: 'grid2' },
      field('t_rate', 'Rate', h('div', { class: 'inline' }, f.rateN, f.rateWindow), 'At most N calls per window; then rate_limited.'),
      LIMITS.map(([name, label, help]) => field('t_' + name, label, lim[name], help)),
      field('t_fixed', 'Fixed body', f.fixed, 'The only body this token may send.'),
      field('t_expires', 'Expires', f.expires, 'After that the token is refused (401).'),
      expiresAtField)),
  h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'mint' }, 'Mint token')));
  let table = tokenTable(list.tokens);
  const p = session.kind === 'person' ? session.person : null;
  return h('section', { 'aria-labelledby': 'tok-h' }, h('h1', { id: 'tok-h' }, 'Tokens'),
    p ? h('p', { class: 'help', id: 'tokens-whose' }, 'Tokens you mint are yours: each names you and never reaches past your role (', p.role,
      ') and your scope (', (p.categories || []).join(', ') || 'none', '), now or later. ',
      session.can('settings') ? 'Your role holds the settings right: the list shows every token of this host.' : 'The list shows your own tokens.') : '',
    h('h2', {}, 'Mint a token'), form, out, h('h2', {}, 'Tokens'), h('div', { id: 'tokens-wrap' }, table));
}

// limitsOf says a token's limits in words, one item each ([] for none).
function limitsOf(t) {
  const usd = v => '$' + Number(v).toLocaleString('en', { maximumFractionDigits: 2 });
  return [
    t.rate ? t.rate + (t.burst ? ', burst ' + t.burst : '') : '',
    t.calls_day ? t.calls_day.toLocaleString('en') + ' calls/day' : '',
    t.budget_usd_day ? usd(t.budget_usd_day) + '/day' : '',
    t.budget_usd_month ? usd(t.budget_usd_month) + '/month' : '',
    t.max_payload ? t.max_payload.toLocaleString('en') + ' bytes max' : '',
    t.fixed_body != null ? 'fixed body' : '',
  ].filter(Boolean);
}

// tokenTable lists the tokens (on a phone a card each: app.css table.cards).
function tokenTable(tokens) {
  if (!tokens.length) return h('p', { id: 'tokens' }, 'No tokens yet.');
  const list = items => items.length ? h('ul', { class: 'plain' }, items.map(x => h('li', {}, x))) : '—';
  return tableWrap(h('table', { id: 'tokens', class: 'cards', 'aria-label': 'Tokens' },
    h('thead', {}, h('tr', {}, ['Name', 'Id', 'Client', 'Scope', 'Risk', 'Pins', 'Limits', 'State', ''].map(c => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, tokens.map(t => h('tr', { 'data-token': t.id },
      h('td', { class: 'head' }, t.name || '(no name)'),
      h('td', { 'data-label': 'Id' }, cut(t.id, { tag: 'code' })),
      h('td', { 'data-label': 'Client', class: 'client' }, t.client ? cut(t.client) : '—'),
      h('td', { 'data-label': 'Scope', class: 'scope' }, list([(t.keys || []).length ? 'keys: ' + t.keys.join(', ') : '', (t.categories || []).length ? 'categories: ' + t.categories.join(', ') : ''].filter(Boolean))),
      h('td', { 'data-label': 'Risk' }, t.risk_ceiling),
      h('td', { 'data-label': 'Pins' }, Object.keys(t.pins || {}).join(', ') || '—'),
      h('td', { 'data-label': 'Limits', class: 'limits' }, list(limitsOf(t))),
      h('td', { 'data-label': 'State', class: 'state' }, stateCell(t)),
      h('td', { class: 'act' }, t.revoked_at ? '' : h('button', { class: 'danger', 'aria-label': 'Revoke ' + t.id, onclick: async e => {
        try {
          await api('/api/tokens/' + enc(t.id), { method: 'DELETE' });
          const w = document.getElementById('tokens-wrap');
          w.replaceChildren(tokenTable((await api('/api/tokens')).tokens));
        } catch (err) { e.target.replaceWith(errorBox(err)); }
      } }, 'Revoke')))))));
}
