// The directory: the list (filters, paging, ask), a row's contract
// document, its history as a diff, and delete; for an MCP tool's row, the
// drift of its server's definition (accept or reject it) and the tools the
// server offers that no row calls.
import { h, api, session, enc, describe, docLine, pretty, errorBox, tableWrap, cut } from './lib.js';

const PAGE = 50;

// directory is one page of the list (one request), or the ask's matches.
export async function directory(q) {
  const ask = q.get('ask') || '';
  const offset = Math.max(0, parseInt(q.get('offset') || '0', 10) || 0);
  const filters = {};
  for (const k of ['type', 'category', 'enabled']) if (q.get(k)) filters[k] = q.get(k);
  const section = h('section', { 'aria-labelledby': 'dir-h' }, h('h1', { id: 'dir-h' }, 'Directory'));
  section.append(askForm(ask), filterForm(filters));
  if (ask) {
    const res = await api('/api/dispatch?ask=' + enc(ask) + '&limit=20');
    section.append(matches(ask, res.matches));
    return section;
  }
  const params = new URLSearchParams({ limit: PAGE, offset, ...filters });
  const page = await api('/api/directory?' + params);
  section.append(rowsTable(page), pager(page, filters));
  if (!performance.getEntriesByName('rowcall:first-rows').length) performance.mark('rowcall:first-rows');
  return section;
}

function askForm(ask) {
  const input = h('input', { id: 'ask', type: 'search', value: ask, placeholder: 'e.g. what time is it', 'aria-describedby': 'ask-help' });
  return h('form', { role: 'search', 'aria-label': 'Ask the directory', onsubmit: e => {
    e.preventDefault();
    location.hash = input.value.trim() ? '#/dir?ask=' + enc(input.value.trim()) : '#/dir';
  } }, h('div', { class: 'row' },
    h('div', {}, h('label', { for: 'ask' }, 'Ask in plain words'), input),
    h('button', { type: 'submit', id: 'ask-go' }, 'Ask')),
  h('p', { class: 'help', id: 'ask-help' }, 'Ranks rows for what you want done (GET /api/dispatch?ask=), within what your credential may see.'));
}

function filterForm(f) {
  const type = h('select', { id: 'f-type' }, ['', 'fn', 'http', 'agent', 'flow'].map(t => h('option', { value: t, selected: f.type === t }, t || 'any')));
  const cat = h('input', { id: 'f-category', value: f.category || '' });
  const en = h('select', { id: 'f-enabled' }, [['', 'any'], ['1', 'enabled'], ['0', 'disabled']].map(([v, l]) => h('option', { value: v, selected: f.enabled === v }, l)));
  return h('form', { 'aria-label': 'Filter the list', onsubmit: e => {
    e.preventDefault();
    const p = new URLSearchParams();
    if (type.value) p.set('type', type.value);
    if (cat.value.trim()) p.set('category', cat.value.trim());
    if (en.value) p.set('enabled', en.value);
    location.hash = '#/dir' + (p.toString() ? '?' + p : '');
  } }, h('div', { class: 'row' },
    h('div', {}, h('label', { for: 'f-type' }, 'Type'), type),
    h('div', {}, h('label', { for: 'f-category' }, 'Category'), cat),
    h('div', {}, h('label', { for: 'f-enabled' }, 'Enabled'), en),
    h('button', { type: 'submit', class: 'secondary', id: 'filter-go' }, 'Filter')));
}

// rowsTable is a page of rows: a table, and on a phone a card per row (its
// key and type on top, then its category, whether it is enabled and what it
// does: app.css table.cards).
function rowsTable(page) {
  const tb = h('tbody');
  for (const r of page.rows) {
    tb.append(h('tr', {},
      h('td', { class: 'head' }, cut(r.key, { href: '#/row/' + enc(r.key) })),
      h('td', { class: 'meta' }, h('span', { class: 'badge' }, r.type), driftBadge(r)),
      h('td', { class: 'meta cat', 'data-label': 'Category' }, r.category ? cut(r.category) : '—'),
      h('td', { class: 'meta', 'data-label': 'Enabled' }, r.enabled ? 'yes' : 'no'),
      h('td', { class: 'what' }, describe(r.content))));
  }
  const t = h('table', { id: 'rows', class: 'cards', 'aria-label': 'Rows' },
    h('thead', {}, h('tr', {}, ['Key', 'Type', 'Category', 'Enabled', 'What it does'].map(c => h('th', { scope: 'col' }, c)))), tb);
  return page.rows.length ? tableWrap(t) : h('p', { id: 'rows-empty' }, 'No rows match.');
}

function pager(page, filters) {
  const link = off => '#/dir?' + new URLSearchParams({ ...filters, offset: off });
  const from = page.rows.length ? page.offset + 1 : 0, to = page.offset + page.rows.length;
  return h('nav', { class: 'pager', 'aria-label': 'Pages' },
    page.offset > 0 ? h('a', { href: link(Math.max(0, page.offset - page.limit)), id: 'prev' }, '← Previous') : '',
    h('span', { id: 'range' }, `rows ${from.toLocaleString('en')}–${to.toLocaleString('en')} of ${page.total.toLocaleString('en')}`),
    page.next_offset != null ? h('a', { href: link(page.next_offset), id: 'next' }, 'Next →') : '',
    session.manages('write') ? h('a', { href: '#/new', class: 'button secondary' }, 'New row') : '');
}

function matches(ask, list) {
  if (!list.length) return h('p', { id: 'matches-empty' }, `No row matches “${ask}”.`);
  return h('ol', { id: 'matches', 'aria-label': 'Matches' }, list.map(m => h('li', {},
    h('a', { href: '#/row/' + enc(m.key) }, m.key), ' ', h('span', { class: 'badge' }, m.type), ' ', m.what,
    m.when_to_use ? h('div', { class: 'help' }, 'When to use: ', m.when_to_use) : '',
    m.args ? h('div', { class: 'help' }, 'Arguments: ', h('code', {}, m.args)) : '')));
}

// rowView is a row's contract document (two requests: the document and the
// row with its version).
export async function rowView(key) {
  const [doc, row] = await Promise.all([api('/api/dispatch?key=' + enc(key) + '&format=json'), api('/api/directory/' + enc(key))]);
  const kv = (k, v) => v ? [h('dt', {}, k), h('dd', {}, v)] : [];
  return h('article', { 'aria-labelledby': 'row-h' },
    h('p', { class: 'help' }, doc.path),
    h('h1', { id: 'row-h' }, doc.key),
    h('p', { id: 'capability' }, doc.capability, driftBadge(row)),
    h('div', { class: 'actions' },
      session.can('call') ? h('a', { class: 'button', href: '#/call/' + enc(key), id: 'call-link' }, 'Call') : '',
      session.manages('write') ? h('a', { class: 'button secondary', href: '#/edit/' + enc(key), id: 'edit-link' }, 'Edit') : '',
      h('a', { class: 'button secondary', href: '#/history/' + enc(key), id: 'history-link' }, 'History'),
      session.manages('write') ? h('a', { class: 'button secondary', href: '#/delete/' + enc(key), id: 'delete-link' }, 'Delete') : ''),
    session.manages('write') && row.runner === 'mcp' ? mcpSection(row) : '',
    h('h2', {}, 'Contract'),
    h('dl', { class: 'kv', id: 'contract' },
      kv('When to use', doc.when_to_use), kv('Arguments', doc.inputs && doc.inputs.args ? h('code', {}, doc.inputs.args) : ''),
      kv('Input schema', doc.inputs && doc.inputs.schema ? h('pre', {}, JSON.stringify(doc.inputs.schema, null, 2)) : ''),
      kv('Example call', h('code', {}, doc.example_call)), kv('Output', doc.output),
      kv('Type · runner · auth · risk', `${doc.type} · ${doc.runner} · ${doc.auth} · ${doc.risk}`),
      kv('What your credential can do', (doc.affordances || []).join(', ')),
      kv('contract_sha256', h('code', {}, doc.contract_sha256)),
      kv('Version', String(row.version)), kv('Updated', row.updated_at), kv('Written by', row.written_by)),
    h('h2', {}, 'The row'),
    h('dl', { class: 'kv', id: 'row-fields' },
      kv('target', row.target && h('code', {}, row.target)), kv('auth', row.auth && h('code', {}, row.auth)),
      kv('category', row.category), kv('allowed_categories', row.allowed_categories), kv('includes', row.includes),
      kv('enabled', row.enabled ? 'yes' : 'no'), kv('planner', `visible: ${row.planner_visible ? 'yes' : 'no'}, rank ${row.planner_rank}`),
      kv('sensitive', row.sensitive ? 'yes (high risk)' : ''), kv('examples', row.examples && h('code', {}, row.examples))),
    h('h3', {}, 'content (the docstring and payload)'), h('pre', { id: 'row-content' }, row.content),
    (doc.machine_contract || []).length ? h('details', {}, h('summary', {}, 'Machine contract and troubleshooting'),
      h('ul', {}, doc.machine_contract.map(l => h('li', {}, l))),
      h('ul', {}, (doc.troubleshooting || []).map(([what, fix]) => h('li', {}, h('code', {}, what), ': ', fix)))) : '');
}

// driftBadge marks an MCP tool's row whose server changed the tool (a #
// DRIFTED: line) or whose change the owner rejected (# REJECTED:).
function driftBadge(row) {
  if (docLine(row.content, 'DRIFTED')) return [' ', h('span', { class: 'badge drifted', title: 'Its MCP server changed this tool; open the row to accept or reject the change' }, 'drifted')];
  if (docLine(row.content, 'REJECTED')) return [' ', h('span', { class: 'badge rejected', title: 'Calls are refused while its MCP server lists the definition the owner rejected' }, 'rejected')];
  return '';
}

// mcpServer is the server an MCP row's target names ("MCP <server>#<tool>").
function mcpServer(target) {
  const s = (target || '').trim().split(/\s+/)[1] || '';
  return s.slice(0, Math.max(0, s.lastIndexOf('#')));
}

// mcpSection compares the row's server's tools with their rows, as `rowcall
// mcp sync --dry-run` does (one request, filled in when the server answers):
// the row's drift as a diff with Accept and Reject, and the tools offered.
function mcpSection(row) {
  const server = mcpServer(row.target);
  const title = h('h2', { id: 'mcp-h' }, 'Its MCP server');
  const box = h('section', { id: 'mcp', 'aria-labelledby': 'mcp-h', 'aria-live': 'polite' }, title,
    h('p', { class: 'help', id: 'mcp-checking' }, 'Comparing the tools of ', h('code', {}, server), ' with their rows…'));
  const sync = params => api('/api/mcp/sync?' + new URLSearchParams({ server, ...params }), { method: 'POST', body: {} });
  sync({ dry_run: '1' }).then(res => {
    const s = (res.servers || [])[0] || {};
    if (s.error) return box.replaceChildren(title, h('div', { class: 'alert', role: 'alert', id: 'mcp-error' }, 'The server could not be listed: ', s.error));
    const changes = s.changes || [];
    box.replaceChildren(title, lastSync(row.mcp_sync), driftView(row, changes.find(c => c.key === row.key), sync), offeredView(changes.filter(c => c.state === 'new')));
  }).catch(err => box.replaceChildren(title, errorBox(err, 'mcp-error')));
  return box;
}

// lastSync is how the host's last sync of the row's server went (the row's
// mcp_sync): a sync that could not list the tools caught no drift.
function lastSync(st) {
  if (!st) return '';
  if (st.error) return h('div', { class: 'alert', role: 'alert', id: 'mcp-last-sync' }, 'The last sync (', st.at, ') could not list the server\'s tools, so no change was caught',
    st.last_ok ? ' since ' + st.last_ok : '', ': ', st.error);
  return h('p', { class: 'help', id: 'mcp-last-sync' }, 'Last synced ', st.at, '.');
}

// driftView is the approved definition against the server's current one,
// field by field, and the owner's two answers.
function driftView(row, c, sync) {
  if (!c || (c.state !== 'drifted' && c.state !== 'rejected')) {
    return h('p', { id: 'drift-none' }, c && c.state === 'removed' ? 'The server no longer lists this tool: the row is disabled.' : 'The server lists the definition this row was approved with.');
  }
  const a = c.approved || {}, b = c.current || {};
  const marks = d => 'sensitive: ' + (d.sensitive ? 'yes' : 'no') + (d.annotations ? '\n' + JSON.stringify(d.annotations, null, 2) : '');
  const fields = [['description', 'Description', a.description, b.description],
    ['input_schema', 'Input schema', pretty(a.input_schema || ''), pretty(b.input_schema || '')], ['annotations', 'Annotations', marks(a), marks(b)]];
  const changed = fields.filter(([, , x, y]) => (x || '') !== (y || ''));
  const out = h('div', { 'aria-live': 'polite' });
  const answer = (param, label, cls) => h('button', { class: cls, id: 'drift-' + param, onclick: async () => {
    try {
      await sync({ [param]: row.key });
      dispatchEvent(new HashChangeEvent('hashchange')); // show the row as it is now
    } catch (err) { out.replaceChildren(errorBox(err, 'drift-error')); }
  } }, label);
  return h('div', { id: 'drift' },
    h('p', { class: 'warn', id: 'drift-state' }, c.state === 'drifted'
      ? 'The server changed this tool since it was approved. Nothing of the change is applied: until you accept or reject it, every call of this row is refused (definition_changed; unless the operator set ROWCALL_MCP_DRIFT=warn), and calls through tokens pinned to it stop (contract_changed).'
      : 'You rejected the server\'s changed definition: the row keeps the approved one, and its calls are refused (definition_rejected) while the server lists the changed one.'),
    h('p', { class: 'help' }, 'Approved ', h('code', {}, c.was || '—'), ' → now ', h('code', {}, c.now || '—'), '. Removed lines are the approved definition, added lines the server\'s.'),
    changed.length ? h('dl', { class: 'kv', id: 'drift-diff' }, changed.map(([f, label, x, y]) => [h('dt', {}, label), h('dd', { 'data-field': f }, diffValue(x, y))]))
      : h('p', { id: 'drift-diff' }, 'The change is in what the row does not keep (past its size caps); its fingerprint differs.'),
    h('div', { class: 'actions' }, answer('accept', 'Accept: import the new definition', ''),
      c.state === 'drifted' ? answer('reject', 'Reject: keep the approved one', 'danger') : ''),
    h('p', { class: 'help' }, 'Accepting defines the row again from the server\'s tool (its history keeps the approved version); target, auth and type stay yours.'), out);
}

// offeredView lists the tools the server offers that no row calls, each
// with its import (as the server's other rows were made).
function offeredView(list) {
  if (!list.length) return '';
  return h('div', { id: 'offered' }, h('h3', {}, 'Tools the server offers that no row calls'),
    h('ul', {}, list.map(c => {
      const what = ((c.current || {}).description || '').split('\n')[0];
      const li = h('li', { 'data-tool': c.tool }, h('code', {}, c.tool), what ? ' — ' + what : '', ' ');
      if (c.import) li.append(h('button', { class: 'secondary', onclick: async () => {
        try {
          await api('/api/import/mcp?' + c.import, { method: 'POST', body: {} });
          li.replaceChildren(h('code', {}, c.tool), ' is imported as ', h('a', { href: '#/row/' + enc(c.key) }, c.key));
        } catch (err) { li.append(errorBox(err, 'import-error')); }
      } }, 'Import as ' + c.key));
      return li;
    })));
}

// deleteView asks once more, then deletes with If-Match (two requests at most).
export async function deleteView(key) {
  const row = await api('/api/directory/' + enc(key));
  const out = h('div', { 'aria-live': 'polite' });
  return h('section', { 'aria-labelledby': 'del-h' }, h('h1', { id: 'del-h' }, 'Delete ' + key),
    h('p', {}, `Deleting removes the row at version ${row.version}; calls to ${key} fail from the next call on. Its history and receipts stay.`),
    h('div', { class: 'actions' },
      h('button', { class: 'danger', id: 'delete-confirm', onclick: async () => {
        try {
          await api('/api/directory/' + enc(key), { method: 'DELETE', headers: { 'If-Match': `"${row.version}"` } });
          out.replaceChildren(h('p', { class: 'notice', role: 'status', id: 'deleted' }, key + ' is deleted. ', h('a', { href: '#/history/' + enc(key) }, 'Its history'), ' · ', h('a', { href: '#/dir' }, 'the directory')));
        } catch (err) { out.replaceChildren(errorBox(err, 'delete-error')); }
      } }, 'Delete for good'),
      h('a', { class: 'button secondary', href: '#/row/' + enc(key) }, 'Cancel')), out);
}

// historyView shows every version from the event log (one request), each as
// a diff from the one before, naming who made it: the written_by of the
// snapshot it left (a deletion's before).
export async function historyView(key) {
  const res = await api('/api/directory/' + enc(key) + '/history');
  const list = h('ol', { id: 'history', reversed: true });
  for (const ev of [...res.events].reverse()) {
    list.append(h('li', { class: 'version' },
      h('h2', {}, `version ${ev.version} · ${ev.action} · `, h('span', { class: 'nowrap' }, ev.at), writer(ev)),
      diffRows(ev.before, ev.after)));
  }
  return h('section', { 'aria-labelledby': 'hist-h' }, h('h1', { id: 'hist-h' }, 'History of ' + key),
    h('p', {}, h('a', { href: '#/row/' + enc(key) }, 'Back to the row')), list);
}

const SKIP = new Set(['updated_at', 'created_at', 'version', 'row_num', 'written_by']);

// writer is " · by <actor>" for an event whose snapshot names its writer.
function writer(ev) {
  const by = ((ev.action === 'delete' ? ev.before : ev.after) || {}).written_by;
  return by ? h('span', { class: 'writer' }, ' · by ', h('code', {}, by)) : '';
}

// diffRows lists the fields that differ between two versions of a row; a
// multi-line value is diffed line by line.
export function diffRows(before, after) {
  const a = before || {}, b = after || {};
  const names = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter(n => !SKIP.has(n));
  const norm = v => v == null || v === '' ? '' : JSON.stringify(v);
  const changed = names.filter(n => norm(a[n]) !== norm(b[n]));
  if (!changed.length) return h('p', {}, 'No field changed.');
  return h('dl', { class: 'kv' }, changed.map(n => [h('dt', {}, n), h('dd', { 'data-field': n }, diffValue(a[n], b[n]))]));
}

function diffValue(x, y) {
  const lines = v => v == null || v === '' ? [] : (typeof v === 'string' ? v : JSON.stringify(v)).split('\n');
  return h('div', { class: 'diff' }, lineDiff(lines(x), lines(y)).map(([op, line]) =>
    op === '-' ? h('del', {}, '− ' + line) : op === '+' ? h('ins', {}, '+ ' + line) : h('div', {}, '  ' + line)));
}

// lineDiff is a longest-common-subsequence diff: [op, line] with op one of
// ' ', '-', '+'.
export function lineDiff(a, b) {
  if (a.length * b.length > 250000) return [...a.map(l => ['-', l]), ...b.map(l => ['+', l])];
  const n = a.length, m = b.length, L = Array.from({ length: n + 1 }, () => new Int32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) L[i][j] = a[i] === b[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) { out.push([' ', a[i]]); i++; j++; }
    else if (L[i + 1][j] >= L[i][j + 1]) out.push(['-', a[i++]]);
    else out.push(['+', b[j++]]);
  }
  while (i < n) out.push(['-', a[i++]]);
  while (j < m) out.push(['+', b[j++]]);
  return out;
}
