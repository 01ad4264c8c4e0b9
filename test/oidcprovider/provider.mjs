// A real OpenID provider (oidc-provider, pinned in package.json) on a
// loopback port, for the connection tests (test/connections_test.go).
// Environment: REDIRECT_URI (the rowcall host's /connect/callback),
// CLIENT_SECRET, ACCESS_TTL (seconds), PORT (default: any free one). The accounts below sign in
// with any password; its development login and consent pages are the ones a
// person would see. With KEY_CLIENT_PUBLIC_KEY (an SPKI PEM public key, for
// test/oauth_private_key_test.go) a second client, "rowcall-pk", gets tokens
// by the client credentials grant, authenticating with a JWT signed by the
// matching private key (private_key_jwt, kid "k1"), and the introspection
// endpoint is on for client "rowcall". It prints "issuer URL" once it listens.
//
// Token exchange (RFC 8693), which oidc-provider does not build in, is a grant
// registered here for the clients rowcall-sts and rowcall-late when
// SUBJECTS_FILE is set. That file, read on each exchange, holds
// {"issuer": a rowcall host's URL, "subjects": {holder: account}}: the grant
// takes the subject token the host signs (a JWT whose keys are at
// ISSUER/.well-known/jwks.json, for this provider's token endpoint), looks its
// subject up, and issues that account an access token the userinfo endpoint
// answers for. rowcall-late's clock runs LATE_SKEW seconds ahead, so
// the subject tokens it is sent have expired.
//
// People sign in to rowcall hosts (test/people_test.go) as client
// "rowcall-login", with secret CLIENT_SECRET: a native application (RFC 8252)
// whose redirect URI is http://127.0.0.1/login/callback on any port (or the
// suite's tenant's, /t/suite-tenant/login/callback), so one
// provider serves hosts whose ports are known only once they listen, and
// only on loopback. Its ID tokens carry email, name, preferred_username and
// groups (scopes email, profile, groups). The accounts are alice
// (tools-admins), bob (tools-editors), carol (tools-callers), erin
// (tools-approvers) and dave (no group); GROUPS_FILE, read at every sign-in,
// holds {account: [groups]} that replace an account's groups.
//
// With MCP_RESOURCE (an MCP server's URL, for test/mcp_signin_test.go) it is
// that server's authorization server: clients register themselves (dynamic
// client registration, RFC 7591, open to anyone), a token asked for with the
// resource indicator MCP_RESOURCE (RFC 8707) is for that resource alone, with
// its scope "tools", and the introspection endpoint is on for client
// "rowcall" (the MCP server checks tokens there).
import { createPublicKey } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import Provider, { errors } from 'oidc-provider';
import { createRemoteJWKSet, jwtVerify } from 'jose';

const exchange = 'urn:ietf:params:oauth:grant-type:token-exchange';

const keyClient = process.env.KEY_CLIENT_PUBLIC_KEY;
const keyClients = keyClient ? [{
  client_id: 'rowcall-pk',
  token_endpoint_auth_method: 'private_key_jwt',
  grant_types: ['client_credentials'],
  response_types: [],
  redirect_uris: [],
  jwks: { keys: [{ ...createPublicKey(keyClient).export({ format: 'jwk' }), kid: 'k1', use: 'sig' }] },
}] : [];

const mcpResource = process.env.MCP_RESOURCE;
const mcpFeatures = mcpResource ? {
  registration: { enabled: true },
  introspection: { enabled: true },
  resourceIndicators: {
    enabled: true,
    defaultResource: () => undefined,
    useGrantedResource: () => true,
    getResourceServerInfo: (ctx, resource) => {
      if (resource !== mcpResource) throw new errors.InvalidTarget();
      return { scope: 'tools', audience: resource, accessTokenFormat: 'opaque', accessTokenTTL: Number(process.env.ACCESS_TTL || 3600) };
    },
  },
} : {};

const people = {
  alice: { name: 'Alice Admin', groups: ['tools-admins'] },
  bob: { name: 'Bob Editor', groups: ['tools-editors'] },
  carol: { name: 'Carol Caller', groups: ['tools-callers'] },
  dave: { name: 'Dave Nogroup', groups: [] },
  erin: { name: 'Erin Approver', groups: ['tools-approvers'] },
};
const accounts = new Set(Object.keys(people));

// groupsOf is account's groups now: GROUPS_FILE's, else its own.
function groupsOf(account) {
  if (process.env.GROUPS_FILE) {
    try {
      const set = JSON.parse(fs.readFileSync(process.env.GROUPS_FILE, 'utf8'));
      if (Array.isArray(set[account])) return set[account];
    } catch (e) {
      if (e.code !== 'ENOENT') throw e;
    }
  }
  return people[account].groups;
}
const server = http.createServer();
server.listen(Number(process.env.PORT || 0), '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const provider = new Provider(issuer, {
    ...(mcpResource ? { scopes: ['openid', 'offline_access', 'tools'] } : {}),
    clients: [{
      client_id: 'rowcall',
      client_secret: process.env.CLIENT_SECRET,
      redirect_uris: [process.env.REDIRECT_URI],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    }, {
      client_id: 'rowcall-login',
      client_secret: process.env.CLIENT_SECRET,
      application_type: 'native',
      // the host's, and the suite's tenant's (test/backends_test.go, startTenant)
      redirect_uris: ['http://127.0.0.1/login/callback', 'http://127.0.0.1/t/suite-tenant/login/callback'],
      grant_types: ['authorization_code'],
      response_types: ['code'],
    }, ...keyClients, ...['rowcall-sts', 'rowcall-late'].map((client_id) => ({
      client_id,
      client_secret: process.env.CLIENT_SECRET,
      grant_types: [exchange],
      response_types: [],
      redirect_uris: [],
    }))],
    pkce: { required: () => true },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name', 'preferred_username'],
      groups: ['groups'],
    },
    conformIdTokenClaims: false, // the claims of the scopes granted are in the ID token too
    ttl: { AccessToken: Number(process.env.ACCESS_TTL || 3600) },
    issueRefreshToken: async () => true,
    features: {
      revocation: { enabled: true },
      clientCredentials: { enabled: !!keyClient },
      introspection: { enabled: !!keyClient },
      ...mcpFeatures,
    },
    async findAccount(ctx, id) {
      if (!accounts.has(id)) return undefined;
      return {
        accountId: id,
        claims: async () => ({
          sub: id,
          email: `${id}@example.test`,
          email_verified: true,
          name: people[id].name,
          preferred_username: id,
          groups: groupsOf(id),
        }),
      };
    },
  });
  if (process.env.SUBJECTS_FILE) {
    const keySets = new Map();
    provider.registerGrantType(exchange, async (ctx) => {
      const { client, params } = ctx.oidc;
      if (params.subject_token_type !== 'urn:ietf:params:oauth:token-type:jwt') {
        throw new errors.InvalidRequest('unsupported subject_token_type');
      }
      if (!params.audience) {
        throw new errors.InvalidTarget('audience is required');
      }
      const skew = client.clientId === 'rowcall-late' ? Number(process.env.LATE_SKEW || 0) : 0;
      const trust = JSON.parse(fs.readFileSync(process.env.SUBJECTS_FILE, 'utf8'));
      if (!keySets.has(trust.issuer)) {
        keySets.set(trust.issuer, createRemoteJWKSet(new URL(`${trust.issuer}/.well-known/jwks.json`)));
      }
      let sub;
      try {
        ({ payload: { sub } } = await jwtVerify(params.subject_token, keySets.get(trust.issuer), {
          issuer: trust.issuer, audience: `${issuer}/token`, algorithms: ['EdDSA'],
          currentDate: new Date(Date.now() + skew * 1000),
        }));
      } catch (e) {
        throw new errors.InvalidGrant(`subject_token: ${e.code || e.message}`);
      }
      const accountId = trust.subjects[sub];
      if (!accounts.has(accountId)) {
        throw new errors.InvalidGrant('the subject is linked to no account');
      }
      const grant = new provider.Grant({ accountId, clientId: client.clientId });
      grant.addOIDCScope('openid');
      const grantId = await grant.save();
      const token = new provider.AccessToken({ accountId, client, grantId, scope: 'openid', gty: 'token_exchange' });
      ctx.body = {
        access_token: await token.save(),
        issued_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        token_type: 'Bearer',
        expires_in: token.expiration,
        scope: 'openid',
      };
    }, ['subject_token', 'subject_token_type', 'audience', 'resource', 'requested_token_type', 'scope']);
  }
  provider.on('server_error', (ctx, err) => console.error(err));
  server.on('request', provider.callback());
  console.log(`issuer ${issuer}`);
});
