// fn modules: upload a .wasm (PUT /api/modules/{name}), its digest, and
// which rows run it.
import { h, api, session, enc, errorBox, tableWrap, cut } from './lib.js';

// modulesView: one request (the list); "rows using it" one per module opened.
export async function modulesView() {
  const list = await api('/api/modules');
  const out = h('div', { id: 'upload-out', 'aria-live': 'polite' });
  const file = h('input', { id: 'm_file', type: 'file', accept: '.wasm,application/wasm', required: true, onchange: () => {
    if (file.files[0] && !name.value) name.value = file.files[0].name.replace(/\.wasm$/, '');
  } });
  const name = h('input', { id: 'm_name', required: true, 'aria-describedby': 'h_mname', spellcheck: 'false' });
  const form = session.manages('write') ? h('form', { id: 'upload-form', onsubmit: async e => {
    e.preventDefault();
    if (!file.files[0]) return;
    try {
      const bytes = await file.files[0].arrayBuffer();
      const res = await api('/api/modules/' + enc(name.value.trim()), { method: 'PUT', body: bytes, headers: { 'Content-Type': 'application/wasm' } });
      out.replaceChildren(h('p', { class: 'notice', role: 'status' }, 'Module ', h('strong', {}, res.name), ` v${res.version}, ${res.size} bytes, digest `,
        h('code', { id: 'uploaded-digest' }, res.digest), '. A row runs it with target ', h('code', {}, res.name), ' (or pinned: ', h('code', {}, res.ref), ').'));
      table.replaceWith(table = moduleTable((await api('/api/modules')).modules));
    } catch (err) { out.replaceChildren(errorBox(err, 'upload-error')); }
  } }, h('div', { class: 'row' },
    h('div', { class: 'wide' }, h('label', { for: 'm_file' }, 'Module file (.wasm)'), file),
    h('div', {}, h('label', { for: 'm_name' }, 'Name'), name),
    h('button', { type: 'submit', id: 'upload' }, 'Upload')),
  h('p', { class: 'help', id: 'h_mname' }, 'The name is what fn rows name in target (it defaults to the file\'s name).')) : '';
  let table = moduleTable(list.modules);
  return h('section', { 'aria-labelledby': 'mod-h' }, h('h1', { id: 'mod-h' }, 'Modules'),
    form, out, h('h2', {}, 'Registered modules'), table);
}

// moduleTable lists the modules (on a phone a card each: app.css table.cards).
function moduleTable(mods) {
  if (!mods.length) return h('p', {}, 'No modules.');
  return tableWrap(h('table', { id: 'modules', class: 'cards', 'aria-label': 'Modules' },
    h('thead', {}, h('tr', {}, ['Name', 'Digest (sha256)', 'Size', 'Version', 'Rows using it'].map(c => h('th', { scope: 'col' }, c)))),
    h('tbody', {}, mods.map(m => {
      const users = h('td', { class: 'users act', 'data-label': 'Rows using it' }, h('button', { class: 'secondary', 'aria-label': 'Rows using ' + m.name, onclick: async () => {
        try {
          const res = await api('/api/modules/' + enc(m.name) + '/rows');
          users.replaceChildren(res.rows.length ? h('ul', { class: 'plain' }, res.rows.map(k => h('li', {}, cut(k, { href: '#/row/' + enc(k) })))) : 'none');
        } catch (err) { users.replaceChildren(errorBox(err)); }
      } }, 'Show'));
      return h('tr', { 'data-module': m.name }, h('td', { class: 'head' }, cut(m.name)), h('td', { 'data-label': 'Digest' }, cut(m.digest, { tag: 'code', class: 'wide' })),
        h('td', { class: 'meta', 'data-label': 'Size' }, m.size.toLocaleString('en') + ' B'), h('td', { class: 'meta', 'data-label': 'Version' }, String(m.version)), users);
    }))));
}
