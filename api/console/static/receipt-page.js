// The public receipt page (/receipt/{id}, rendered by the host) loads this
// module to verify the receipt in the browser as well (verify.js), and shows
// each check under the host's own verdict.
import { verifyReceipt } from './verify.js';
import { at } from './lib.js';

const slot = document.getElementById('browser-check');
const id = location.pathname.split('/').pop();

async function main() {
  const get = async path => { const r = await fetch(path, { headers: { Accept: 'application/json' }, credentials: 'omit' }); return r.json(); };
  const [conf, keys] = await Promise.all([get(at('/receipt/' + encodeURIComponent(id) + '?format=json')), get(at('/.well-known/rowcall-receipt-keys'))]);
  const v = await verifyReceipt(conf.receipt, keys.keys);
  const p = document.createElement('p');
  p.id = 'browser-verdict';
  p.dataset.verified = String(v.ok);
  p.append(document.createElement('strong'));
  p.firstChild.textContent = v.ok ? 'Verified in your browser too' : 'NOT verified in your browser';
  p.append(v.ok ? ': the hash, the Merkle path and the Ed25519 signature hold (WebCrypto, against /.well-known/rowcall-receipt-keys).' : ':');
  const ul = document.createElement('ul');
  for (const [name, label] of [['hash', 'Hash'], ['path', 'Merkle path'], ['key', 'Published key'], ['signature', 'Signature']]) {
    const li = document.createElement('li');
    li.dataset.check = name; li.dataset.ok = String(v[name].ok);
    li.textContent = (v[name].ok ? '✓ ' : '✗ ') + label + ': ' + v[name].detail;
    ul.append(li);
  }
  slot.replaceChildren(p, ul);
}
main().catch(e => { slot.textContent = 'Your browser could not check this receipt: ' + e.message; });
