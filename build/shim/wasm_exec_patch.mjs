// node build/shim/wasm_exec_patch.mjs FILE — build/worker.sh's one change to
// Go's wasm_exec.js (as syumai/workers' generator writes it): loadString, which
// turns every string Go hands JavaScript into a JavaScript string — each
// property name Go reads or writes, each method name it calls, each argument —
// reads a short ASCII string byte by byte instead of calling TextDecoder. In
// workerd TextDecoder is a call into C++, for strings that are mostly a few
// bytes long ("_pendingEvent", "args", "this", "id", "result": every call into
// Go reads and writes them). Anything longer than 64 bytes or not ASCII goes
// to TextDecoder as before, so every string reads as it did. The file is
// changed in place; an unexpected file is an error, not a silent no-op.
import { readFileSync, writeFileSync } from "node:fs";

const file = process.argv[2];
const before = `			const loadString = (addr) => {
				const saddr = getInt64(addr + 0);
				const len = getInt64(addr + 8);
				return decoder.decode(new DataView(this._inst.exports.mem.buffer, saddr, len));
			}`;
const after = `			const loadString = (addr) => {
				const saddr = getInt64(addr + 0);
				const len = getInt64(addr + 8);
				if (len <= 64) {
					let s = "";
					for (let i = 0; i < len; i++) {
						const c = this.mem.getUint8(saddr + i);
						if (c >= 0x80) return decoder.decode(new DataView(this._inst.exports.mem.buffer, saddr, len));
						s += String.fromCharCode(c);
					}
					return s;
				}
				return decoder.decode(new DataView(this._inst.exports.mem.buffer, saddr, len));
			}`;
const src = readFileSync(file, "utf8");
if (!src.includes(before)) {
  console.error(`${file}: loadString is not the one build/shim/wasm_exec_patch.mjs knows (a new Go or syumai/workers?): update the patch`);
  process.exit(1);
}
writeFileSync(file, src.replace(before, after));
