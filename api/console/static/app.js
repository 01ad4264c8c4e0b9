// The console's shell: who is signed in (GET /api/me), sign-in and sign-out,
// navigation by the credential's rights, and the router. Views live in
// their own modules; each returns the element to show and makes the few API
// requests it needs (a page of the directory is one).
import { h, api, at, here, session, APIError, errorBox, enc, cut } from './lib.js';
import { peopleView } from './people.js';
import { directory, rowView, historyView, deleteView } from './directory.js';
import { editView } from './edit.js';
import { callView } from './call.js';
import { receiptView, traceView } from './receipts.js';
import { tokensView } from './tokens.js';
import { modulesView } from './modules.js';
import { consentView } from './consent.js';
import { approvalsView } from './approvals.js';
import { learnedView } from './learned.js';

const main = document.getElementById('view');

const routes = [
  [/^#\/?(dir)?(?:\?(.*))?$/, m => directory(new URLSearchParams(m[2] || ''))],
  [/^#\/row\/([^/?]+)$/, m => rowView(decodeURIComponent(m[1]))],
  [/^#\/history\/([^/?]+)$/, m => historyView(decodeURIComponent(m[1]))],
  [/^#\/edit\/([^/?]+)$/, m => editView(decodeURIComponent(m[1]))],
  [/^#\/delete\/([^/?]+)$/, m => deleteView(decodeURIComponent(m[1]))],
  [/^#\/new$/, () => editView(null)],
  [/^#\/call\/([^/?]+)$/, m => callView(decodeURIComponent(m[1]))],
  [/^#\/receipt\/([^/?]+)$/, m => receiptView(decodeURIComponent(m[1])), { public: true }],
  [/^#\/trace\/([^/?]+)$/, m => traceView(decodeURIComponent(m[1]))],
  [/^#\/tokens$/, () => tokensView()],
  [/^#\/modules$/, () => modulesView()],
  [/^#\/consent\/([^/?]+)$/, m => consentView(decodeURIComponent(m[1]))],
  [/^#\/approvals$/, () => approvalsView(null)],
  [/^#\/approvals\/([^/?]+)$/, m => approvalsView(decodeURIComponent(m[1]))],
  [/^#\/learned(?:\/([^/?]+))?$/, m => learnedView(m[1] ? decodeURIComponent(m[1]) : '')],
  [/^#\/people$/, () => peopleView()],
];

let generation = 0;

// identify asks GET /api/me who this tab is (with the key it holds, else the
// session cookie), once per sign-in: session.me, null when nothing signs it in.
let identifying = null;
function identify() {
  if (!identifying) {
    identifying = api('/api/me').then(me => { session.me = me; },
      err => {
        if (!(err instanceof APIError) || err.status !== 401) { identifying = null; throw err; }
        if (session.secret) { // the key this tab held is refused: set it aside, the cookie may still sign in
          session.clear();
          notice = 'The key or token this tab held is no longer accepted by this host (revoked, expired or rotated).';
          identifying = null;
          return identify();
        }
        session.me = null;
      });
  }
  return identifying;
}

// notice is said once on the sign-in screen (why the tab is signed out).
let notice = '';

// render shows the view the hash names; data-ready on <main> says it is done
// (the browser tests wait for it).
async function render() {
  const gen = ++generation;
  main.dataset.ready = '';
  const hash = location.hash || '#/dir';
  const route = routes.find(([re]) => re.test(hash));
  let view;
  try {
    await identify();
    header();
    const open = route && (route[2] || {}).public;
    if (!route) view = h('p', {}, 'No such page: ', hash, '. ', h('a', { href: '#/dir' }, 'Go to the directory'));
    else if (!session.signedIn && !open) view = await signIn();
    else if (!open && !session.rights.length) view = noRights();
    else view = await route[1](hash.match(route[0]));
  } catch (err) {
    header();
    if (err instanceof APIError && err.status === 401 && session.signedIn) {
      view = h('div', {}, errorBox(err), h('p', { id: 'signed-out' }, session.secret
        ? 'The credential this tab holds is no longer accepted (revoked, expired or rotated). '
        : 'Your session has ended (it expired, you signed out elsewhere, or an admin ended your access). ',
      h('button', { onclick: signOut }, 'Sign in again')));
    } else if (err instanceof APIError) view = errorBox(err, 'view-error');
    else { view = h('div', { class: 'alert', role: 'alert' }, String(err)); console.error(err); }
  }
  if (gen !== generation) return;
  main.replaceChildren(view);
  const h1 = main.querySelector('h1');
  document.title = (h1 ? h1.textContent + ' · ' : '') + 'rowcall console';
  const first = main.querySelector('[autofocus]');
  if (first) first.focus();
  else if (document.activeElement === document.body || !main.contains(document.activeElement)) main.focus({ preventScroll: true });
  main.dataset.ready = '1';
}

// header shows the screens the credential may use (a link's data-can names
// the right it needs, data-manages a right used on the management routes,
// which take no capability token) and who is signed in.
function header() {
  const nav = document.getElementById('nav');
  nav.hidden = !session.signedIn || !session.rights.length;
  const here = (location.hash || '#/dir').split('?')[0];
  for (const a of nav.querySelectorAll('a')) {
    const { can, manages } = a.dataset;
    a.hidden = (!!can && !session.can(can)) || (!!manages && !session.manages(manages));
    if (a.getAttribute('href') === here) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  const who = document.getElementById('who');
  who.replaceChildren();
  if (!session.signedIn) return;
  const me = session.me, p = session.person;
  if (me.kind === 'person') {
    who.append(h('span', { id: 'whoami' }, h('span', { id: 'whoname', title: p.email || p.subject }, p.name || p.email || p.user_name || p.subject), ' ',
      h('span', { class: 'badge role', id: 'whorole', title: 'Your role: ' + (session.rights.join(', ') || 'no rights') }, p.role || 'no role')));
  } else if (me.kind === 'owner') {
    who.append(h('span', { id: 'whoami' }, 'Signed in with the owner key'));
  } else {
    who.append(h('span', { id: 'whoami' }, 'Signed in with a capability token ', cut(me.token ? me.token.id : '', { tag: 'code' }),
      p ? ' of ' + (p.name || p.email || p.subject) : ''));
  }
  who.append(h('button', { class: 'secondary', id: 'signout', onclick: signOut }, 'Sign out'));
}

// signOut forgets the key this tab holds, or, for a person signed in by
// the session cookie, ends the session on the host (POST /logout); either
// way the tab asks again who it is, which for a token used over a
// person's session is that person.
async function signOut() {
  const cookie = !session.secret;
  session.clear();
  identifying = null;
  notice = '';
  if (cookie) {
    try { await api('/logout', { method: 'POST', body: {} }); }
    catch (err) { main.replaceChildren(h('div', {}, h('p', {}, 'Signing out failed; the session may still be open.'), errorBox(err, 'signout-error'))); return; }
  }
  location.hash = '#/dir';
  render();
}

// useCredential checks a key or token against the API before keeping it:
// GET /api/me must answer (401 otherwise), and says what it is.
export async function useCredential(secret) {
  const prev = session.secret;
  session.keep(secret);
  try {
    const me = await api('/api/me');
    session.me = me;
    identifying = Promise.resolve();
    notice = '';
    return me.kind;
  } catch (e) {
    session.keep(prev);
    throw e;
  }
}

// provider is GET /api/signin's answer (asked once): the organisation's
// OpenID provider, or null when the host names none (404).
let provider;
async function signInProvider() {
  if (provider === undefined) {
    try { provider = await api('/api/signin'); }
    catch (err) { if (err instanceof APIError && err.status === 404) provider = null; else throw err; }
  }
  return provider;
}

// signIn is the sign-in screen: "Sign in with <provider>" when the host
// names one, which comes back to this very page (path and fragment: a
// consent page stays a consent page; return_to is relative to the base, as
// GET /login takes it); pasting the owner key or a token below it stays
// possible as break-glass.
async function signIn() {
  const p = await signInProvider();
  const said = notice ? h('p', { class: 'warn', role: 'status', id: 'signin-notice' }, notice) : '';
  if (!p) return keyForm(true, [h('h1', {}, 'Sign in'), said]);
  const login = (p.login_url || at('/login')) + '?return_to=' + enc(here());
  return h('section', { class: 'signin', 'aria-labelledby': 'signin-h' }, h('h1', { id: 'signin-h' }, 'Sign in'), said,
    h('p', {}, h('a', { class: 'button big', id: 'signin-provider', href: login, autofocus: true }, 'Sign in with ' + p.provider)),
    h('p', { class: 'help' }, 'You sign in at ', p.provider, ' and come back to this page, signed in as yourself with the role your organisation gives you.'),
    h('h2', { id: 'breakglass-h' }, 'Or use a key (break-glass)'),
    keyForm(false, []));
}

// keyForm is the form that pastes the owner key or a capability token.
function keyForm(only, head) {
  const input = h('input', { id: 'secret', type: 'password', autocomplete: 'current-password', required: true, autofocus: only, 'aria-describedby': 'secret-help' });
  const out = h('div', { 'aria-live': 'polite' });
  return h('form', { class: 'signin', onsubmit: async e => {
    e.preventDefault();
    out.replaceChildren();
    try { await useCredential(input.value.trim()); render(); }
    catch (err) {
      out.replaceChildren(err instanceof APIError && err.status === 401
        ? h('div', { class: 'alert', role: 'alert', id: 'signin-error' }, 'That key or token is not accepted by this host (401 unauthorized).')
        : errorBox(err, 'signin-error'));
      input.setAttribute('aria-invalid', 'true'); input.focus();
    }
  } },
  head,
  h('label', { for: 'secret' }, 'Owner key or capability token'),
  h('p', { class: 'help', id: 'secret-help' }, 'The owner key is in data/owner.key (or $ROWCALL_OWNER_KEY); a token starts with rct_. ',
    'It stays in this tab only (sessionStorage) and is sent as Authorization: Bearer; you see exactly what it may see.'),
  input, h('div', { class: 'actions' }, h('button', { type: 'submit', class: only ? null : 'secondary' }, 'Sign in')), out);
}

// noRights is every screen for a person whose role holds no right yet.
function noRights() {
  const p = session.person || {};
  return h('section', { 'aria-labelledby': 'norole-h' }, h('h1', { id: 'norole-h' }, 'No access yet'),
    h('p', { id: 'no-role' }, 'You are signed in as ', h('strong', {}, p.name || p.email || p.subject || 'yourself'),
      ', but you have no role on this host yet, so there is nothing you may see or do. An admin of this host grants roles (People), or your organisation maps one of your groups to a role.'));
}

export { render };
window.addEventListener('hashchange', render);
render();
