// A real OpenID provider (oidc-provider, pinned in package.json) on a
// loopback port, for the connection tests (test/connections_test.go).
// Environment: REDIRECT_URI (the rowcall host's /connect/callback),
// CLIENT_SECRET, ACCESS_TTL (seconds). Two accounts sign in, alice and bob,
// with any password; its development login and consent pages are the ones a
// person would see. With KEY_CLIENT_PUBLIC_KEY (an SPKI PEM public key, for
// test/oauth_private_key_test.go) a second client, "rowcall-pk", gets tokens
// by the client credentials grant, authenticating with a JWT signed by the
// matching private key (private_key_jwt, kid "k1"), and the introspection
// endpoint is on for client "rowcall". It prints "issuer URL" once it listens.
import { createPublicKey } from 'node:crypto';
import http from 'node:http';
import Provider from 'oidc-provider';

const keyClient = process.env.KEY_CLIENT_PUBLIC_KEY;
const keyClients = keyClient ? [{
  client_id: 'rowcall-pk',
  token_endpoint_auth_method: 'private_key_jwt',
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  jwks: { keys: [{ ...createPublicKey(keyClient).export({ format: 'jwk' }), kid: 'k1', use: 'sig' }] },
}] : [];

const accounts = new Set(['alice', 'bob']);
const server = http.createServer();
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    clients: [{
      client_id: 'rowcall',
      client_secret: process.env.CLIENT_SECRET,
      redirect_uris: [process.env.REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }, ...keyClients],
    pkce: { required: () => true },
    ttl: { AccessToken: Number(process.env.ACCESS_TTL || 3600) },
    issueRefreshToken: async () => true,
    features: {
      revocation: { enabled: true },
      clientCredentials: { enabled: !!keyClient },
      introspection: { enabled: !!keyClient },
    },
    async findAccount(ctx, id) {
      if (!accounts.has(id)) return undefined;
      return { accountId: id, claims: async () => ({ sub: id }) };
    },
  });
  server.on('request', provider.callback());
  console.log(`issuer ${issuer}`);
});
