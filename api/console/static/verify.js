// Receipt verification in the browser, with WebCrypto only: the same three
// checks as package ledger's Keys.Check on the server.
//
//  1. hash: SHA-256 of the receipt's canonical form (RFC 8785: its JSON
//     without sha256, sig and batch, keys sorted, no spaces) is its sha256.
//  2. Merkle path: leaf = SHA-256(0x00 ‖ sha256), node = SHA-256(0x01 ‖ left
//     ‖ right), adjacent pairs, an odd last node carried up, from batch.index
//     in a tree of batch.size along batch.path, gives the group's root.
//  3. signature: Ed25519 over "rowcall receipt root " + hex(root) (over the
//     canonical form itself for a receipt without a batch), with the
//     published key whose key_id (the first 16 hex digits of SHA-256 of the
//     key) the receipt names.

const te = new TextEncoder();
const hex = buf => [...new Uint8Array(buf)].map(x => x.toString(16).padStart(2, '0')).join('');
function unhex(s) {
  if (typeof s !== 'string' || !/^([0-9a-f]{2})*$/i.test(s)) return null;
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.substr(i * 2, 2), 16);
  return out;
}
const unb64 = s => Uint8Array.from(atob(s), c => c.charCodeAt(0));
const sha = async bytes => new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
const cat = (...parts) => { const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0)); let o = 0; for (const p of parts) { out.set(p, o); o += p.length; } return out; };

// jcs is RFC 8785 for the JSON values a receipt holds: JSON.stringify's
// strings and numbers are the scheme's, and keys sort by UTF-16 code units.
export function jcs(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(jcs).join(',') + ']';
  return '{' + Object.keys(v).filter(k => v[k] !== undefined).sort().map(k => JSON.stringify(k) + ':' + jcs(v[k])).join(',') + '}';
}

export function canonical(receipt) {
  const o = { ...receipt };
  delete o.sha256; delete o.sig; delete o.batch;
  return jcs(o);
}

// merkleRoot walks a receipt's batch path to its root (or throws, saying why).
export async function merkleRoot(receipt) {
  const b = receipt.batch;
  if (!(b.size >= 1 && b.index >= 0 && b.index < b.size)) throw new Error(`its batch index ${b.index} does not fit a batch of ${b.size}`);
  let node = await sha(cat(new Uint8Array([0]), unhex(receipt.sha256) || te.encode(receipt.sha256)));
  const path = [...(b.path || [])];
  for (let idx = b.index, size = b.size; size > 1; idx = Math.floor(idx / 2), size = Math.ceil(size / 2)) {
    if ((idx ^ 1) >= size) continue; // carried up
    if (!path.length) throw new Error('its batch path is too short');
    const sib = unhex(path.shift());
    if (!sib) throw new Error('its batch path holds something that is not a hex hash');
    node = await sha(idx % 2 === 1 ? cat(new Uint8Array([1]), sib, node) : cat(new Uint8Array([1]), node, sib));
  }
  if (path.length) throw new Error('its batch path is too long');
  return node;
}

// verifyReceipt returns each check's verdict: {hash, path, key, signature},
// each {ok, detail}, and ok for all of them.
export async function verifyReceipt(receipt, keys) {
  const out = { hash: {}, path: {}, key: {}, signature: {}, ok: false };
  if (!globalThis.crypto || !crypto.subtle) {
    const why = 'this page is not a secure context (crypto.subtle needs HTTPS or localhost), so the browser cannot check it';
    for (const k of ['hash', 'path', 'key', 'signature']) out[k] = { ok: false, detail: why };
    return out;
  }
  const c = te.encode(canonical(receipt));
  const got = hex(await sha(c));
  out.hash = got === receipt.sha256 ? { ok: true, detail: 'SHA-256 of the canonical form is ' + got }
    : { ok: false, detail: `SHA-256 of the canonical form is ${got}, the receipt says ${receipt.sha256}: the receipt was altered` };
  let message = c;
  if (receipt.batch) {
    try {
      const root = await merkleRoot(receipt);
      message = te.encode('rowcall receipt root ' + hex(root));
      out.path = { ok: true, detail: `receipt ${receipt.batch.index + 1} of ${receipt.batch.size}; root ${hex(root)}` };
    } catch (e) { out.path = { ok: false, detail: e.message + ' — the receipt was altered' }; }
  } else out.path = { ok: true, detail: 'no batch: the signature covers the receipt alone' };
  const pub = (keys || []).find(k => k.key_id === receipt.key_id);
  if (!pub) out.key = { ok: false, detail: `signed by key ${receipt.key_id}, which this host does not publish` };
  else {
    const raw = unb64(pub.public_key);
    const id = hex(await sha(raw)).slice(0, 16);
    out.key = id === pub.key_id ? { ok: true, detail: `Ed25519 key ${pub.key_id} from /.well-known/rowcall-receipt-keys` }
      : { ok: false, detail: `the published key ${pub.key_id} hashes to ${id}` };
    if (out.key.ok && out.path.ok) {
      try {
        const key = await crypto.subtle.importKey('raw', raw, { name: 'Ed25519' }, false, ['verify']);
        const good = await crypto.subtle.verify({ name: 'Ed25519' }, key, unb64(receipt.sig || ''), message);
        out.signature = good ? { ok: true, detail: 'Ed25519 signature verified with WebCrypto' }
          : { ok: false, detail: 'the signature does not verify — the receipt was altered or forged' };
      } catch (e) { out.signature = { ok: false, detail: 'this browser cannot verify Ed25519 signatures (' + e.message + ')' }; }
    } else out.signature = { ok: false, detail: 'not checked: ' + (out.key.ok ? 'the Merkle path failed' : 'no key') };
  }
  out.ok = out.hash.ok && out.path.ok && out.key.ok && out.signature.ok;
  return out;
}
