// The row form: create (POST) and edit (PATCH with If-Match), every writable
// column with guidance. A refusal is shown beside the field it is about,
// with its how_to_fix; a stale version (412) shows what changed since the
// form was read and lets the person merge or start again.
import { h, api, session, enc, errorBox, docLine, describe, lacks } from './lib.js';

const DOC_HELP = 'The docstring: lines starting with # are documentation and never run. ' +
  '# WHAT: one sentence, what the row does (the hygiene gate refuses an empty content; the description is part of the contract). ' +
  '# WHEN_TO_USE: when a caller should pick it. # ARGS: $1=… | $2=… (what each pipe-separated argument is). ' +
  '# EX: [KEY]arg1|arg2[/KEY], an example call. Other lines are the payload (an http row\'s body template, a flow\'s steps, an agent\'s prompt).';

// FIELDS are the writable columns (PATCH's allow-list) in form order:
// [name, kind, help, options].
export const FIELDS = [
  ['type', 'select', 'What runs: http calls an upstream, fn a WebAssembly module, agent a model, flow a chain of rows.', ['http', 'fn', 'agent', 'flow']],
  ['target', 'text', 'http: "METHOD url" ($1… for arguments, $SELF for this host). fn: a module name (name@sha256:… pins it). agent: the model. flow: leave empty, the steps go in content.'],
  ['content', 'textarea', DOC_HELP],
  ['auth', 'text', 'The credential, by the name of an environment variable, never the secret: bearer:ENV, basic:ENV, headers:{"X-Key":"$ENV"}, query:param=ENV, oauth:{…}. Empty for none.'],
  ['category', 'text', 'A word that groups rows; tokens can be scoped to categories.'],
  ['allowed_categories', 'text', 'agent rows: the categories of rows the model may call (comma-separated).'],
  ['includes', 'text', 'agent rows: the keys of rows whose text is sent with the prompt (comma-separated).'],
  ['runner', 'text', 'Override the runner (empty: the type\'s own).'],
  ['input_schema', 'textarea', 'A JSON Schema (2020-12) object: typed calls, arguments checked before anything runs. Required for sensitive rows.'],
  ['output_schema', 'textarea', 'A JSON Schema object of type "object" that the result, read as JSON, conforms to: MCP clients get it as the tool\'s outputSchema and the parsed result as structuredContent. Empty when the result is text.'],
  ['examples', 'textarea', 'A JSON array of example bodies, e.g. ["37.77|-122.42"].'],
  ['seq', 'number', 'Pins the row ahead of the rest of the list (lower first); empty for none.'],
  ['planner_rank', 'number', 'Planner hint: lower ranks are offered first.'],
  ['enabled', 'check', 'A disabled row refuses every call (row_disabled).'],
  ['planner_visible', 'check', 'Offered to planners and to ask.'],
  ['sensitive', 'check', 'High risk: only tokens with risk_ceiling high may call it, and it must carry input_schema.'],
];

const EMPTY = { type: 'http', target: '', content: '', auth: '', category: '', allowed_categories: '', includes: '', runner: '',
  input_schema: '', output_schema: '', examples: '', seq: null, planner_rank: 100, enabled: 1, planner_visible: 1, sensitive: 0 };

// fieldOf names the field a refusal is about.
export function fieldOf(body) {
  const code = body.error || '';
  if (body.field) return body.field;
  if (code.includes('missing_description')) return 'content';
  if (code.includes('high_risk_missing_schema') || code === 'invalid_input_schema') return 'input_schema';
  if (code.startsWith('auth_')) return 'auth';
  if (code === 'key_exists') return 'key';
  return '';
}

// formValue reads the form into a row's writable fields.
function formValue(form) {
  const v = {};
  for (const [name, kind] of FIELDS) {
    const el = form.elements['f_' + name];
    if (kind === 'check') v[name] = el.checked ? 1 : 0;
    else if (kind === 'number') v[name] = el.value.trim() === '' ? (name === 'seq' ? null : 0) : Number(el.value);
    else v[name] = el.value;
  }
  return v;
}

const same = (a, b) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

// editView is the form for key (null: a new row). One request to read the
// row; a 412 costs one more (the current version).
export async function editView(key) {
  const base = key ? await api('/api/directory/' + enc(key)) : { ...EMPTY };
  const form = h('form', { id: 'row-form', novalidate: true });
  const status = h('div', { 'aria-live': 'polite', id: 'form-status' });
  if (!key) {
    form.append(h('div', { class: 'field' }, h('label', { for: 'f_key' }, 'key'),
      h('p', { class: 'help', id: 'help-key' }, '1–128 letters, digits, _, - or ., starting with a letter or digit; uppercase by convention (GROK_MODELS). It cannot change later.'),
      h('input', { id: 'f_key', name: 'f_key', required: true, 'aria-describedby': 'help-key err-key', autocapitalize: 'characters', spellcheck: 'false' }),
      h('p', { class: 'fielderror', id: 'err-key', role: 'alert' })));
  }
  for (const [name, kind, help, options] of FIELDS) form.append(fieldEl(name, kind, help, options, base[name], key));
  const submit = h('button', { type: 'submit', id: 'save' }, key ? 'Save changes' : 'Create row');
  form.append(status, h('div', { class: 'actions' }, submit, h('a', { class: 'button secondary', href: key ? '#/row/' + enc(key) : '#/dir' }, 'Cancel')));
  let read = base; // the version this form's edits are against
  form.addEventListener('submit', async e => {
    e.preventDefault();
    clearErrors(form); status.replaceChildren();
    const mine = formValue(form);
    submit.disabled = true;
    try {
      if (!key) {
        const k = form.elements.f_key.value.trim();
        await api('/api/directory', { method: 'POST', body: { key: k, ...mine } });
        location.hash = '#/row/' + enc(k);
        return;
      }
      const patch = {};
      for (const [name] of FIELDS) if (!same(mine[name], read[name])) patch[name] = mine[name];
      if (!Object.keys(patch).length) { status.replaceChildren(h('p', { class: 'warn', role: 'status' }, 'Nothing changed.')); return; }
      await api('/api/directory/' + enc(key), { method: 'PATCH', body: patch, headers: { 'If-Match': `"${read.version}"` } });
      location.hash = '#/row/' + enc(key);
    } catch (err) {
      if (err.status === 412 && key) {
        const current = await api('/api/directory/' + enc(key));
        status.replaceChildren(conflictPanel(read, mine, current, async merged => {
          read = current;
          for (const [name, kind] of FIELDS) setField(form, name, kind, merged[name]);
          form.requestSubmit();
        }, () => {
          read = current;
          for (const [name, kind] of FIELDS) setField(form, name, kind, current[name]);
          status.replaceChildren(h('p', { class: 'notice', role: 'status' }, `The form now holds version ${current.version}; your edits were discarded.`));
        }));
      } else showError(form, status, err);
    } finally { submit.disabled = false; }
  });
  return h('section', { 'aria-labelledby': 'form-h' }, h('h1', { id: 'form-h' }, key ? 'Edit ' + key : 'New row'),
    session.manages('write') ? '' : lacks('write'),
    key ? h('p', {}, `Editing version ${base.version}. Only the fields you change are sent (PATCH, If-Match: "${base.version}").`) : '', form);
}

function fieldEl(name, kind, help, options, value, key) {
  const id = 'f_' + name, desc = `help-${name} err-${name}`;
  let input;
  if (kind === 'select') input = h('select', { id, name: id, 'aria-describedby': desc }, options.map(o => h('option', { value: o, selected: o === value }, o)));
  else if (kind === 'textarea') input = h('textarea', { id, name: id, 'aria-describedby': desc, rows: name === 'content' ? 8 : 4, spellcheck: 'false' }, value || '');
  else if (kind === 'check') input = h('input', { id, name: id, type: 'checkbox', checked: !!value, 'aria-describedby': desc });
  else input = h('input', { id, name: id, type: kind === 'number' ? 'number' : 'text', value: value == null ? '' : String(value), 'aria-describedby': desc, spellcheck: 'false' });
  const wrap = h('div', { class: 'field', 'data-field': name });
  if (kind === 'check') wrap.append(h('label', { for: id }, input, ' ', name));
  else wrap.append(h('label', { for: id }, name));
  wrap.append(h('p', { class: 'help', id: 'help-' + name }, help));
  if (kind !== 'check') wrap.append(input);
  if (name === 'content') wrap.append(docChecklist(input, key));
  wrap.append(h('p', { class: 'fielderror', id: 'err-' + name, role: 'alert' }));
  return wrap;
}

const DOC_LINES = ['WHAT', 'WHEN_TO_USE', 'ARGS', 'EX'];

// missingDocLines names the docstring lines content has no line for: the
// one rule both the checklist and its "Add the missing docstring lines"
// button follow. # WHAT is not missing when the first # line is prose, which
// the host reads as the description instead (rowcall.Row.Description).
function missingDocLines(content) {
  return DOC_LINES.filter(n => !hasDocLine(content, n) && !(n === 'WHAT' && proseLine(content) >= 0));
}

const hasDocLine = (content, n) => new RegExp('^#\\s*' + n + ':', 'm').test(content || '');

// proseLine is the index of content's first # line when it is prose (not a
// # NAME: line), else -1.
function proseLine(content) {
  const lines = (content || '').split('\n'), i = lines.findIndex(l => l.trim().startsWith('#'));
  return i >= 0 && describe(lines[i]) && !/^\s*#+\s*[A-Z_]+:/.test(lines[i]) ? i : -1;
}

// docChecklist shows which of the four docstring lines the content has (a
// line with no text yet is to fill in), and offers to add the missing ones
// (only while one is missing). key is the row's (null: the form's key field).
function docChecklist(textarea, rowKey) {
  const list = h('ul', { class: 'check', id: 'doc-check', 'aria-label': 'Docstring lines' });
  const add = h('button', { type: 'button', class: 'secondary', id: 'doc-template', onclick: () => {
    const key = rowKey || (document.getElementById('f_key') || {}).value || 'KEY';
    const template = { WHAT: '# WHAT: ', WHEN_TO_USE: '# WHEN_TO_USE: ', ARGS: '# ARGS: $1=', EX: `# EX: [${key}][/${key}]` };
    const v = textarea.value, lines = v ? v.split('\n') : [];
    // After a prose first line (it stays the description), else on top.
    lines.splice(proseLine(v) + 1, 0, ...missingDocLines(v).map(n => template[n]));
    textarea.value = lines.join('\n');
    update(); textarea.focus();
  } }, 'Add the missing docstring lines');
  const update = () => {
    const v = textarea.value, missing = missingDocLines(v);
    list.replaceChildren(...DOC_LINES.map(n => {
      const line = ' # ' + n;
      if (missing.includes(n)) return h('li', { class: 'no', 'data-line': n }, '✗' + line);
      if (!hasDocLine(v, n)) return h('li', { class: 'yes', 'data-line': n }, '✓' + line + ' (the first # line serves)');
      if (!docLine(v, n)) return h('li', { class: 'todo', 'data-line': n }, '…' + line + ' (fill it in)');
      return h('li', { class: 'yes', 'data-line': n }, '✓' + line);
    }));
    add.hidden = !missing.length;
  };
  textarea.addEventListener('input', update);
  update();
  return h('div', {}, list, add);
}

function setField(form, name, kind, v) {
  const el = form.elements['f_' + name];
  if (kind === 'check') el.checked = !!v; else el.value = v == null ? '' : String(v);
  el.dispatchEvent(new Event('input'));
}

function clearErrors(form) {
  for (const p of form.querySelectorAll('.fielderror')) p.replaceChildren();
  for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
}

// showError puts a refusal beside its field (or above the buttons).
function showError(form, status, err) {
  const b = err.body || {};
  const field = fieldOf(b);
  const slot = field && form.querySelector('#err-' + field);
  if (!slot) { status.replaceChildren(errorBox(err, 'form-error')); return; }
  slot.replaceChildren(h('strong', {}, b.error), b.message ? ': ' + b.message : '', b.how_to_fix ? h('span', { class: 'fix' }, ' How to fix: ' + b.how_to_fix) : '');
  const input = form.elements['f_' + field];
  if (input) { input.setAttribute('aria-invalid', 'true'); input.focus(); }
}

// conflictPanel compares the version the form read, the person's edits and
// the version saved meanwhile. Fields only they changed are kept, fields
// only you changed are applied; where both changed, the person picks.
export function conflictPanel(read, mine, current, merge, discard) {
  const rows = [], picks = {};
  for (const [name] of FIELDS) {
    const you = !same(mine[name], read[name]), they = !same(current[name], read[name]);
    if (!you && !they) continue;
    const both = you && they && !same(mine[name], current[name]);
    let choose = '';
    if (both) {
      picks[name] = 'mine';
      choose = h('fieldset', {}, h('legend', {}, 'Keep'),
        ['mine', 'theirs'].map(w => h('label', {}, h('input', { type: 'radio', name: 'pick_' + name, value: w, checked: w === 'mine',
          onchange: () => { picks[name] = w; } }), ' ', w === 'mine' ? 'your edit' : 'the saved one')));
    }
    const show = v => h('code', {}, v == null ? '' : typeof v === 'string' ? v : JSON.stringify(v));
    rows.push(h('tr', { 'data-field': name }, h('th', { scope: 'row', class: 'head' }, name), h('td', { 'data-label': `You read (v${read.version})` }, show(read[name])),
      h('td', { class: they ? 'changed' : '', 'data-label': `Saved (v${current.version})` }, they ? show(current[name]) : '—'),
      h('td', { 'data-label': 'Your edit' }, you ? show(mine[name]) : '—'), h('td', { class: 'act' }, choose)));
  }
  return h('div', { class: 'warn', role: 'alert', id: 'conflict' },
    h('h2', {}, `Someone saved version ${current.version} while you edited version ${read.version}`),
    h('div', { class: 'tablewrap' }, h('table', { class: 'cards', 'aria-label': 'What changed' },
      h('thead', {}, h('tr', {}, ['Field', `You read (v${read.version})`, `Saved (v${current.version})`, 'Your edit', ''].map(c => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, rows))),
    h('div', { class: 'actions' },
      h('button', { type: 'button', id: 'merge', onclick: () => {
        const merged = {};
        for (const [name] of FIELDS) {
          const you = !same(mine[name], read[name]);
          merged[name] = you && picks[name] !== 'theirs' ? mine[name] : current[name];
        }
        merge(merged);
      } }, 'Merge and save'),
      h('button', { type: 'button', class: 'secondary', id: 'discard', onclick: discard }, 'Discard my edits, load the saved version')));
}
