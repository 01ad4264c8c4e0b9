// The console's plumbing: building DOM nodes, the session and the API
// client. A key or token pasted at sign-in is kept in this tab's
// sessionStorage (never in a URL) and sent as Authorization: Bearer; without
// one, calls carry the host's session cookie (a person signed in with the
// organisation's provider), which JavaScript never sees.

// base is the path the console is served under, without its last slash: ""
// at a host's root, "/t/NAME" in a tenant, whatever a proxy puts in front.
// The console's modules are served at BASE/console/, so the base is the
// folder above the one this very module was loaded from: the browser knows
// it, the server need not write it into the page, and no page's own address
// (a receipt's, a consent's, one without its last slash) can mislead it.
// Every address the console uses is made by at().
export const base = new URL('..', import.meta.url).pathname.replace(/\/$/, '');

// at is the address of path ("/api/me", "/login") under the console's base.
export function at(path) { return base + path; }

// here is the page's address relative to the base (path, query and
// fragment), as GET /login's return_to takes it: the host puts its base in
// front when the sign-in comes back.
export function here() {
  const path = location.pathname.startsWith(base + '/') ? location.pathname.slice(base.length) : '/';
  return path + location.search + location.hash;
}

// h builds an element: h('a', {href: '#/x', onclick: f}, 'text', child…).
export function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value' && 'value' in el) el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const kid of kids.flat(Infinity)) {
    if (kid != null && kid !== false) el.append(kid instanceof Node ? kid : String(kid));
  }
  return el;
}

// SECRET names where the key is kept, one per base: a tab that opens
// another tenant's console does not send it this one's key.
const SECRET = 'rowcall.secret' + base;

// OWNER holds every right (rowcall.RoleOwner's).
const OWNER = ['read', 'call', 'approve', 'write', 'people', 'settings', 'owner'];

// session is who this tab is signed in as: me is GET /api/me's answer
// ({kind: "owner"|"person"|"token", person, rights, token}), null when
// nothing signs it in.
export const session = {
  me: null,
  get secret() { return sessionStorage.getItem(SECRET) || ''; },
  get signedIn() { return !!this.me; },
  get kind() { return this.me ? this.me.kind : ''; },
  // person is whoever the credential stands for: the signed-in person, or
  // the person who minted the token in use; null for the owner key.
  get person() { return (this.me && this.me.person) || null; },
  // rights are what the credential may do: the owner key every right, a
  // person their role's, a token read and call (approve when minted with
  // it), never more than the person who minted it.
  get rights() {
    const me = this.me;
    if (!me) return [];
    if (me.kind === 'owner') return OWNER;
    if (me.kind === 'person') return me.rights || [];
    const t = ['read', 'call'].concat(me.token && me.token.approve ? ['approve'] : []);
    return me.person ? t.filter(r => (me.rights || []).includes(r)) : t;
  },
  // can: the credential holds right (what it reads, calls and approves).
  can(right) { return this.rights.includes(right); },
  // manages: it holds right and may use it on the API's management
  // routes (rows, tokens, people, traces), which take the owner key or a
  // signed-in person and never a capability token.
  manages(right) { return this.kind !== 'token' && this.can(right); },
  keep(secret) { if (secret) sessionStorage.setItem(SECRET, secret); else sessionStorage.removeItem(SECRET); },
  clear() { sessionStorage.removeItem(SECRET); this.me = null; },
};

// APIError is a refusal: status, the stable code (body.error), the body.
export class APIError extends Error {
  constructor(status, body, res) {
    const b = typeof body === 'object' && body ? body : { error: String(body) };
    super(b.message || b.error || 'HTTP ' + status);
    this.status = status; this.code = b.error || ''; this.body = b; this.res = res;
  }
}

// api calls the API at path under the base: a JSON body is sent as JSON,
// an ArrayBuffer as it is; the key this tab holds goes as Authorization
// (none when it holds none), and the session cookie with every same-origin
// request. It returns the parsed answer, or {data, res} with raw; a non-2xx
// throws APIError.
export async function api(path, { method = 'GET', body, headers = {}, raw = false } = {}) {
  const hd = { ...headers };
  if (session.secret) hd['Authorization'] = 'Bearer ' + session.secret;
  let payload = body;
  if (body !== undefined && !(body instanceof ArrayBuffer) && typeof body !== 'string') {
    hd['Content-Type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await fetch(at(path), { method, headers: hd, body: payload, credentials: 'same-origin', cache: 'no-store' });
  const type = res.headers.get('content-type') || '';
  const data = type.includes('json') ? await res.json() : await res.text();
  if (!res.ok) throw new APIError(res.status, data, res);
  return raw ? { data, res } : data;
}

export const enc = encodeURIComponent;

// describe is a row's description, as the server reads it: its # WHAT:
// line, else its first # line.
export function docLine(content, name) {
  const re = new RegExp('^#\\s*' + name + ':\\s*(.*)$', 'm');
  const m = (content || '').match(re);
  return m ? m[1].trim() : '';
}
export function describe(content) {
  const what = docLine(content, 'WHAT');
  if (what) return what;
  const first = (content || '').split('\n').find(l => l.startsWith('#'));
  return first ? first.replace(/^#+\s*/, '') : '';
}

// errorBox shows an API refusal: its code, message and how_to_fix, and for
// connection_required the link to sign in (connect_url).
export function errorBox(err, id) {
  const b = err.body || {};
  return h('div', { class: 'alert', role: 'alert', id },
    h('strong', {}, b.error || err.message), b.message ? ': ' + b.message : '',
    b.how_to_fix ? h('div', { class: 'fix' }, 'How to fix: ', b.how_to_fix) : '',
    // connection_required (an MCP server's import that needs a sign-in): the link to sign in
    /^https?:\/\//.test(b.connect_url || '') ? h('div', {}, h('a', { class: 'button', id: 'connect-link', href: b.connect_url, target: '_blank', rel: 'noopener' }, 'Sign in to ' + (b.provider || 'the provider'))) : '');
}

// lacks says, on a screen that offers what the credential may not do, why
// (the host refuses it anyway, with role_forbids for a person).
export function lacks(right) {
  const person = session.kind === 'person';
  return h('p', { class: 'warn', id: 'lacks', 'data-right': right },
    person ? `Your role (${session.person.role || 'none'})` : session.kind === 'token' ? 'This capability token' : 'This credential',
    ' does not hold the right ', h('code', {}, right), ': the host refuses it', person ? '; an admin can grant a role that holds it.' : '.');
}

// pretty is v as indented JSON (a string that holds JSON is decoded first).
export function pretty(v) {
  const inner = jsonIn(v);
  return inner !== undefined ? JSON.stringify(inner, null, 2) : typeof v === 'string' ? v : JSON.stringify(v, null, 2);
}

// jsonIn is what a string holding a JSON object or array says, else undefined.
function jsonIn(v) {
  if (typeof v !== 'string' || !/^\s*[[{]/.test(v)) return undefined;
  try { return JSON.parse(v); } catch { return undefined; }
}

// httpAnswer splits an http row's answer, "HTTP 200:<body>" ("ERR:HTTP
// 404:<body>" when it failed), into its status and its body.
export function httpAnswer(v) {
  const m = typeof v === 'string' && v.match(/^((?:ERR:)?(?:HTTP |http:)\d+):([\s\S]*)$/);
  return m ? { status: m[1], body: m[2] } : null;
}

// answerBlock shows one answer: an http answer as its status over its body,
// the body (or a string holding JSON) indented as JSON.
function answerBlock(v) {
  const http = httpAnswer(v);
  if (http) return [h('p', { class: 'status' }, h('strong', { class: 'http-status ' + (/^HTTP 2/.test(http.status) ? 'ok' : 'bad') }, http.status)), h('pre', {}, pretty(http.body))];
  return [h('pre', {}, pretty(v))];
}

// resultView shows a call's result as a person reads it: a flow's answers
// (an object of step answers) one per step, each http answer as its status
// and its body pretty-printed; the raw result is one click away.
export function resultView(v, id) {
  const obj = v && typeof v === 'object' && !Array.isArray(v) ? v : jsonIn(v);
  const steps = obj && !Array.isArray(obj) && Object.values(obj).some(x => httpAnswer(x) || jsonIn(x) !== undefined);
  const shown = steps ? h('dl', { class: 'answers' }, Object.entries(obj).map(([k, x]) => [h('dt', {}, k), h('dd', { 'data-step': k }, answerBlock(x))]))
    : answerBlock(v);
  return h('div', { id }, shown,
    h('details', { class: 'raw' }, h('summary', {}, 'Raw result'), h('pre', { class: 'raw-result' }, typeof v === 'string' ? v : JSON.stringify(v, null, 2))));
}

// cut is a value that is one long word (a key, an id, a digest, a time): it
// stays on one line, cut with an ellipsis where it does not fit, and shows
// whole on hover (its title) and on focus (app.css .trunc). attrs may name an
// href (a link) or a tag.
export function cut(text, attrs = {}) {
  const { tag, ...rest } = attrs;
  return h(tag || (rest.href ? 'a' : 'span'), { tabindex: rest.href ? null : '0', ...rest, class: 'trunc' + (rest.class ? ' ' + rest.class : ''), title: text }, text);
}

export function tableWrap(table) { return h('div', { class: 'tablewrap', tabindex: '0', role: 'region', 'aria-label': table.getAttribute('aria-label') || 'table' }, table); }
