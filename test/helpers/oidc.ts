// OpenID providers for the single sign-on tests, listening on 127.0.0.1: a real one (oidc-provider,
// with its development login and consent pages, any login accepted), and a hostile one made with
// jose that answers the authorization code flow with an ID token broken as the test asks (signed by
// another key, for another audience, expired, tampered after signing).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import Provider from 'oidc-provider';

export interface Account {
  email?: string;
  email_verified?: boolean;
  preferred_username?: string;
  groups?: string[];
}

export interface RealProvider {
  issuer: string;
  /** The claims of each login (the login name is the subject); change them between sign-ins. */
  accounts: Map<string, Account>;
  close(): Promise<void>;
}

const listen = async (server: Server) => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

export async function startProvider(client: { clientId: string; clientSecret: string; redirectUri: string }): Promise<RealProvider> {
  const accounts = new Map<string, Account>();
  const server = createServer();
  const issuer = await listen(server);
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: client.clientId,
        client_secret: client.clientSecret,
        redirect_uris: [client.redirectUri],
        response_types: ['code'],
        grant_types: ['authorization_code'],
      },
    ],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['preferred_username'], groups: ['groups'] },
    scopes: ['openid', 'email', 'profile', 'groups'],
    // The claims in the ID token itself, which is what Lectern reads.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub, ...(accounts.get(sub) ?? {}) }) }),
  } as never);
  // The development pages warn on every start; the test knows.
  (provider as unknown as { on(e: string, f: () => void): void }).on('server_error', () => {});
  server.on('request', provider.callback());
  return { issuer, accounts, close: () => new Promise((r) => server.close(() => r())) };
}

export type Breakage = 'none' | 'other-key' | 'wrong-audience' | 'expired' | 'tampered' | 'wrong-issuer';

export interface HostileProvider {
  issuer: string;
  /** How the next ID token is broken. */
  breakage: Breakage;
  close(): Promise<void>;
}

/**
 * A provider that signs in anyone at once (no page) as `victim`, and whose token endpoint answers
 * with an ID token broken as `breakage` says. It honours the nonce and PKCE, so each breakage is
 * the only thing wrong.
 */
export async function startHostileProvider(clientId: string): Promise<HostileProvider> {
  const good = await generateKeyPair('RS256');
  const other = await generateKeyPair('RS256');
  const jwk: JWK = { ...(await exportJWK(good.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const pending = new Map<string, { nonce: string }>();
  const server = createServer();
  const issuer = await listen(server);
  const state: HostileProvider = { issuer, breakage: 'none', close: () => new Promise((r) => server.close(() => r())) };
  server.on('request', async (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    const json = (body: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url.pathname === '/.well-known/openid-configuration') {
      return json({
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        code_challenge_methods_supported: ['S256'],
      });
    }
    if (url.pathname === '/jwks') return json({ keys: [jwk] });
    if (url.pathname === '/authorize') {
      const code = `code-${Math.random().toString(36).slice(2)}`;
      pending.set(code, { nonce: url.searchParams.get('nonce') ?? '' });
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      return res.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname === '/token') {
      let body = '';
      for await (const chunk of req) body += chunk;
      const code = new URLSearchParams(body).get('code') ?? '';
      const p = pending.get(code);
      pending.delete(code);
      if (!p) return res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant' }));
      const now = Math.floor(Date.now() / 1000);
      const b = state.breakage;
      const claims = { sub: 'victim', email: 'victim@example.com', email_verified: true, nonce: p.nonce };
      let token = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setIssuer(b === 'wrong-issuer' ? 'http://127.0.0.1:1/elsewhere' : issuer)
        .setAudience(b === 'wrong-audience' ? 'another-client' : clientId)
        .setIssuedAt(b === 'expired' ? now - 7200 : now)
        .setExpirationTime(b === 'expired' ? now - 3600 : now + 300)
        .sign(b === 'other-key' ? other.privateKey : good.privateKey);
      if (b === 'tampered') {
        const [h, payload, sig] = token.split('.');
        const changed = { ...JSON.parse(Buffer.from(payload!, 'base64url').toString()), sub: 'admin', email: 'admin@example.com' };
        token = [h, Buffer.from(JSON.stringify(changed)).toString('base64url'), sig].join('.');
      }
      return json({ access_token: 'at', token_type: 'Bearer', expires_in: 300, id_token: token });
    }
    res.writeHead(404).end();
  });
  return state;
}
