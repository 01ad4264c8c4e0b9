// People: everyone who signed in to this host (or was provisioned for it),
// with their role and where it came from, their groups, their scope and
// whether they are disabled (GET /api/people, for a role holding the people
// right). An admin changes a person's role or scope, or disables and enables
// them (PATCH /api/people/{id}, one request each). Nobody changes their own
// row, and nobody grants or changes a role holding rights their own does
// not: the host refuses those, and every refusal shows under the person.
import { h, api, session, enc, errorBox, tableWrap, cut } from './lib.js';

const words = s => s.split(/[\s,]+/).map(x => x.trim()).filter(Boolean);

// peopleView: one request (the list and the roles).
export async function peopleView() {
  const res = await api('/api/people');
  const roles = res.roles || [];
  const list = res.people || [];
  return h('section', { 'aria-labelledby': 'people-h' }, h('h1', { id: 'people-h' }, 'People'),
    h('p', { class: 'help' }, 'Everyone who signed in with the organisation\'s provider. A role set here stays until an admin changes it; ',
      'a role from groups follows the provider\'s groups at each sign-in. A scope is the categories of rows a person reaches (* is every row). ',
      'Disabling someone ends every session, token, OAuth grant, connection and pending approval of theirs at once; their receipts stay.'),
    list.length ? tableWrap(h('table', { id: 'people', class: 'cards', 'aria-label': 'People' },
      h('thead', {}, h('tr', {}, ['Person', 'Role', 'Groups', 'Scope', 'State', 'Last seen'].map(c => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, list.map(p => personRows(p, roles)))))
      : h('p', { id: 'no-people' }, 'Nobody has signed in yet.'));
}

const nameOf = p => p.name || p.email || p.user_name || p.subject;

// when is a time to the minute (UTC), whole in its title.
const when = ts => h('time', { datetime: ts, title: ts, class: 'nowrap' }, ts.slice(0, 16).replace('T', ' '), ' UTC');

// personRows is one person: their row, and under it the row that says what
// became of a change, or asks to confirm one (hidden while empty).
function personRows(p, roles, said) {
  const self = session.kind === 'person' && session.person.id === p.id;
  const msg = h('td', { colspan: '6', 'aria-live': 'polite' });
  const msgRow = h('tr', { class: 'msg', 'data-for': p.id, hidden: true }, msg);
  const say = (...kids) => { msg.replaceChildren(...kids); msgRow.hidden = !kids.length; };
  // patch sends one change; the answer replaces both rows, with done said.
  const patch = (body, done) => async () => {
    say();
    try {
      const res = await api('/api/people/' + enc(p.id), { method: 'PATCH', body: typeof body === 'function' ? body() : body });
      const [row, m] = personRows(res.person, roles, done(res.person));
      tr.replaceWith(row); msgRow.replaceWith(m);
    } catch (err) { say(errorBox(err, 'person-error')); }
  };
  const role = h('select', { class: 'role', id: 'role-' + p.id, 'aria-label': 'Role of ' + nameOf(p), disabled: self },
    [...roles, ''].map(r => h('option', { value: r, selected: r === (p.role || '') }, r || 'none (no rights)')));
  const scope = h('input', { class: 'scope', id: 'scope-' + p.id, value: (p.categories || []).join(', '), 'aria-label': 'Scope of ' + nameOf(p), spellcheck: 'false', disabled: self });
  const from = { groups: 'from groups', admin: 'set by an admin' }[p.role_from] || '';
  const confirm = (question, label, cls, body, done) => () => say(h('div', { class: 'warn confirm' }, question,
    h('div', { class: 'actions' }, h('button', { type: 'button', class: cls + ' confirm', onclick: patch(body, done) }, label),
      h('button', { type: 'button', class: 'secondary', onclick: () => say() }, 'Cancel'))));
  const state = p.disabled_at
    ? h('button', { type: 'button', class: 'secondary enable', disabled: self, onclick: confirm(['Enable ', h('strong', {}, nameOf(p)), '? They can sign in again; what was revoked stays revoked.'],
      'Enable ' + nameOf(p), '', { disabled: false }, q => 'Enabled ' + nameOf(q) + '.') }, 'Enable')
    : h('button', { type: 'button', class: 'danger disable', disabled: self, onclick: confirm(['Disable ', h('strong', {}, nameOf(p)),
      '? Every session, token, OAuth grant, connection and pending approval of theirs ends now; their receipts stay.'],
    'Disable ' + nameOf(p), 'danger', { disabled: true }, q => 'Disabled ' + nameOf(q) + ': everything of theirs has ended.') }, 'Disable');
  const tr = h('tr', { 'data-person': p.id, class: p.disabled_at ? 'disabled' : null },
    h('td', { class: 'head' }, cut(nameOf(p)), self ? [' ', h('span', { class: 'badge', id: 'you' }, 'you')] : '',
      p.email && p.email !== nameOf(p) ? h('div', { class: 'help email' }, cut(p.email)) : ''),
    h('td', { 'data-label': 'Role', class: 'rolecell' },
      h('div', { class: 'inline' }, role, h('button', { type: 'button', class: 'secondary set-role', disabled: self,
        onclick: patch(() => ({ role: role.value }), q => `Role set to ${q.role || 'none'}.`) }, 'Set')),
      from ? h('div', { class: 'help role-from' }, from) : ''),
    h('td', { 'data-label': 'Groups', class: 'groups' }, (p.groups || []).length ? h('ul', { class: 'plain' }, p.groups.map(g => h('li', {}, cut(g)))) : '—'),
    h('td', { 'data-label': 'Scope', class: 'scopecell' },
      h('div', { class: 'inline' }, scope, h('button', { type: 'button', class: 'secondary set-scope', disabled: self,
        onclick: patch(() => ({ categories: words(scope.value) }), q => 'Scope set to ' + q.categories.join(', ') + '.') }, 'Set'))),
    h('td', { 'data-label': 'State', class: 'state' }, p.disabled_at ? ['disabled ', when(p.disabled_at), ' '] : 'active ', state),
    h('td', { 'data-label': 'Last seen', class: 'seen' }, p.seen_at ? when(p.seen_at) : 'never'));
  if (self) say(h('p', { class: 'help', id: 'self-note' }, 'This is you: nobody changes their own role, scope or state (the host refuses it). Another admin can.'));
  else if (said) say(h('p', { class: 'notice', role: 'status' }, said));
  return [tr, msgRow];
}
