// Preloaded (node --require ./loopback.cjs …) by the tests that start
// server-everything's streamable HTTP transport: it calls listen(PORT) with no
// address, which would bind every interface; this makes a listen without an
// address bind 127.0.0.1 only.
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if ((typeof args[0] === "number" || typeof args[0] === "string") && (args.length < 2 || typeof args[1] !== "string")) {
    args.splice(1, 0, "127.0.0.1");
  }
  return listen.apply(this, args);
};
