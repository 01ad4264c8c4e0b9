// The console's shell: sign-in, navigation and the router. Views live in
// their own modules; each returns the element to show and makes the few API
// requests it needs (a page of the directory is one).
import { h, api, session, APIError, errorBox } from './lib.js';
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
];

let generation = 0;

// render shows the view the hash names; data-ready on <main> says it is done
// (the browser tests wait for it).
async function render() {
  const gen = ++generation;
  main.dataset.ready = '';
  const hash = location.hash || '#/dir';
  const route = routes.find(([re]) => re.test(hash));
  header();
  let view;
  try {
    if (!route) view = h('p', {}, 'No such page: ', hash, '. ', h('a', { href: '#/dir' }, 'Go to the directory'));
    else if (!session.signedIn && !(route[2] || {}).public) view = signIn();
    else view = await route[1](hash.match(route[0]));
  } catch (err) {
    if (err instanceof APIError && err.status === 401 && session.signedIn) {
      view = h('div', {}, errorBox(err), h('p', {}, 'The credential this tab holds is no longer accepted (revoked, expired or rotated). ',
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

function header() {
  const nav = document.getElementById('nav');
  nav.hidden = !session.signedIn;
  for (const a of nav.querySelectorAll('a')) {
    a.hidden = a.hasAttribute('data-owner') && !session.owner;
    const here = (location.hash || '#/dir').split('?')[0];
    if (a.getAttribute('href') === here) a.setAttribute('aria-current', 'page'); else a.removeAttribute('aria-current');
  }
  const who = document.getElementById('who');
  who.replaceChildren();
  if (session.signedIn) {
    who.append(h('span', { id: 'whoami' }, session.owner ? 'Signed in with the owner key' : 'Signed in with a capability token' +
      (sessionStorage.getItem('rowcall.token') ? ' ' + sessionStorage.getItem('rowcall.token') : '')),
    h('button', { class: 'secondary', onclick: signOut }, 'Sign out'));
  }
}

function signOut() { session.clear(); location.hash = '#/dir'; render(); }

// signIn checks a credential against the API before keeping it: a directory
// read must pass (401 otherwise), and listing tokens tells the owner (200)
// from a token (403).
export async function useCredential(secret) {
  const prev = [session.secret, session.owner];
  session.set(secret, 'checking');
  try {
    await api('/api/directory?limit=1');
    let role = 'token';
    try { await api('/api/tokens'); role = 'owner'; } catch (e) { if (!(e instanceof APIError) || e.status !== 403) throw e; }
    session.set(secret, role);
    sessionStorage.removeItem('rowcall.token');
    return role;
  } catch (e) {
    if (prev[0]) session.set(prev[0], prev[1] ? 'owner' : 'token'); else session.clear();
    throw e;
  }
}

function signIn() {
  const input = h('input', { id: 'secret', type: 'password', autocomplete: 'current-password', required: true, autofocus: true, 'aria-describedby': 'secret-help' });
  const out = h('div', { 'aria-live': 'polite' });
  const form = h('form', { class: 'signin', onsubmit: async e => {
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
  h('h1', {}, 'Sign in'),
  h('label', { for: 'secret' }, 'Owner key or capability token'),
  h('p', { class: 'help', id: 'secret-help' }, 'The owner key is in data/owner.key (or $ROWCALL_OWNER_KEY); a token starts with rct_. ',
    'It stays in this tab only (sessionStorage) and is sent as Authorization: Bearer; you see exactly what it may see.'),
  input, h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Sign in')), out);
  return form;
}

export { render };
window.addEventListener('hashchange', render);
render();
