// Signing in with OpenID Connect (docs/design/sso.md), by openid-client, a certified relying party:
// the provider's discovery document, the authorization code flow with PKCE (S256), state and nonce,
// and the ID token's checks (signature against the provider's keys, issuer, audience, expiry,
// nonce). `/auth/oidc/<slug>/login` starts; `/auth/oidc/<slug>/callback` finishes, once, in the
// browser that started (a cookie holds a random value whose hash the pending sign-in keeps), within
// ten minutes. What the claims make of a person is domain/sso.ts's.
import { createHash, randomBytes } from 'node:crypto';
import express from 'express';
import type * as OpenId from 'openid-client';
import { audit } from '../domain/audit.ts';
import { actAs, type Context, contextFor, type Services, type SessionHandle } from '../domain/context.ts';
import { SsoRefused, settingsProviderReady, userForIdentity } from '../domain/sso.ts';
import type { IdentityProvider } from '../generated/prisma/client.ts';
import { lazyModule } from '../lazy-module.ts';
import { hashToken } from '../secrets.ts';

const openid = lazyModule<typeof OpenId>('openid-client');

/** How long a sign-in may take between leaving for the provider and coming back. */
export const LOGIN_VALID_MS = 10 * 60 * 1000;
const BROWSER_COOKIE = 'lectern_oidc';

/** The provider's configuration (its discovery document), read once per provider as it was last changed. */
class Discovery {
  readonly #known = new Map<number, { at: number; config: Promise<OpenId.Configuration> }>();
  readonly #services: Services;
  constructor(services: Services) {
    this.#services = services;
  }
  get(p: IdentityProvider): Promise<OpenId.Configuration> {
    const known = this.#known.get(p.id);
    if (known && known.at === p.modifiedAt.getTime()) return known.config;
    const client = openid();
    const secret = this.#services.cipher.decrypt(p.clientSecretEncrypted);
    // The ID token's signature is checked against the provider's keys on every sign-in: the spec
    // lets a client skip that for a token fetched over TLS, and openid-client does unless told.
    const execute = [client.enableNonRepudiationChecks];
    // http only for a provider on this machine (config.ts issuerProblem refuses any other).
    if (new URL(p.issuer).protocol === 'http:') execute.push(client.allowInsecureRequests);
    const config = client.discovery(new URL(p.issuer), p.clientId, secret, undefined, { execute });
    config.catch(() => this.#known.delete(p.id));
    this.#known.set(p.id, { at: p.modifiedAt.getTime(), config });
    return config;
  }
}

/** Only a path of Lectern's own is followed after signing in. */
const safeNext = (next: unknown) => (typeof next === 'string' && /^\/(?!\/)[^\\\s]*$/.test(next) ? next.slice(0, 2048) : '/');

const hash = (v: string) => createHash('sha256').update(v).digest('hex');

export interface SsoRoutes {
  services: Services;
  /** The session handle of a request (the app's session cookies). */
  session: (req: express.Request, res: express.Response) => SessionHandle;
}

/** The sign-in routes of every enabled provider. */
export function ssoRouter(o: SsoRoutes): express.Router {
  const { services } = o;
  const { config, prisma } = services;
  const discovery = new Discovery(services);
  const router = express.Router();
  const callbackUrl = (slug: string) => `${config.publicUrl}/auth/oidc/${encodeURIComponent(slug)}/callback`;
  const provider = async (slug: string) => {
    await settingsProviderReady(services);
    return prisma.identityProvider.findFirst({ where: { slug, enabled: true } });
  };
  const tls = config.publicUrl.startsWith('https:');
  const cookie = { httpOnly: true, sameSite: 'lax', secure: tls, path: '/auth/oidc/', maxAge: LOGIN_VALID_MS } as const;

  router.get('/auth/oidc/:slug/login', async (req, res, next) => {
    try {
      const p = await provider(req.params.slug);
      if (!p) return void res.status(404).type('text').send('No such sign-in.');
      const client = openid();
      const cfg = await discovery.get(p);
      const verifier = client.randomPKCECodeVerifier();
      const state = client.randomState();
      const nonce = client.randomNonce();
      const browser = randomBytes(32).toString('base64url');
      await prisma.oidcLogin.deleteMany({ where: { createdAt: { lt: new Date(Date.now() - LOGIN_VALID_MS) } } });
      await prisma.oidcLogin.create({
        data: { stateHash: hashToken(state), browserHash: hash(browser), nonce, codeVerifier: verifier, next: safeNext(req.query.next), providerId: p.id },
      });
      const url = client.buildAuthorizationUrl(cfg, {
        redirect_uri: callbackUrl(p.slug),
        scope: p.scopes,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      res.cookie(BROWSER_COOKIE, browser, cookie).set('Cache-Control', 'no-store').redirect(302, url.href);
    } catch (e) {
      next(e);
    }
  });

  router.get('/auth/oidc/:slug/callback', async (req, res, next) => {
    const client = { ip: req.ip ?? '', userAgent: req.get('user-agent') ?? '' };
    const session = o.session(req, res);
    const ctx = contextFor(services, null, session, client);
    try {
      const p = await provider(req.params.slug);
      if (!p) return void res.status(404).type('text').send('No such sign-in.');
      const viewer = await finish(ctx, p, req, discovery, callbackUrl(p.slug));
      res.clearCookie(BROWSER_COOKIE, { ...cookie, maxAge: undefined });
      if (typeof viewer === 'string') return void refuse(res, viewer);
      await session.start(viewer.user.id);
      actAs(ctx, viewer.user);
      await audit(ctx, { action: 'sign-in', method: 'sso', data: { provider: p.slug } });
      res.set('Cache-Control', 'no-store').redirect(302, `${config.publicUrl}${viewer.next}`);
    } catch (e) {
      next(e);
    }
  });
  return router;
}

/** The signed-in user and where to go, or why the sign-in is refused (recorded in the audit log). */
async function finish(ctx: Context, p: IdentityProvider, req: express.Request, discovery: Discovery, redirectUri: string) {
  const fail = async (reason: string, shown = 'The sign-in could not be completed: start again.') => {
    await audit(ctx, { action: 'sign-in-failed', user: null, method: 'sso', data: { provider: p.slug, reason: reason.slice(0, 300) } });
    return shown;
  };
  const state = typeof req.query.state === 'string' ? req.query.state : '';
  const browser = /(?:^|;\s*)lectern_oidc=([\w-]+)/.exec(req.headers.cookie ?? '')?.[1] ?? '';
  // Taken once: a second callback with the same state (a replay, a reload) finds nothing.
  const login = state ? await ctx.prisma.oidcLogin.findUnique({ where: { stateHash: hashToken(state) } }) : null;
  if (login) await ctx.prisma.oidcLogin.deleteMany({ where: { id: login.id } });
  if (!login || login.providerId !== p.id) return fail('unknown or used state');
  if (login.browserHash !== hash(browser)) return fail('another browser');
  if (Date.now() - login.createdAt.getTime() > LOGIN_VALID_MS) return fail('too late');
  if (typeof req.query.error === 'string') return fail(`provider: ${req.query.error}`);
  let claims: OpenId.IDToken | undefined;
  try {
    const current = new URL(req.originalUrl, redirectUri);
    const tokens = await openid().authorizationCodeGrant(await discovery.get(p), current, {
      pkceCodeVerifier: login.codeVerifier,
      expectedState: state,
      expectedNonce: login.nonce,
      idTokenExpected: true,
    });
    claims = tokens.claims();
  } catch (e) {
    const err = e as { code?: string; message?: string; error?: string };
    return fail([err.code, err.error, err.message].filter(Boolean).join(': '));
  }
  if (!claims?.sub) return fail('no subject');
  try {
    return { user: await userForIdentity(ctx, p, claims as never), next: login.next };
  } catch (e) {
    if (e instanceof SsoRefused) return fail(e.message, e.message);
    throw e;
  }
}

function refuse(res: express.Response, message: string): void {
  const text = message.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  res
    .status(403)
    .set('Cache-Control', 'no-store')
    .type('html')
    .send(
      `<!doctype html><meta charset="utf-8"><title>Sign-in refused</title><h1>Sign-in refused</h1><p>${text}</p><p><a href="/sign-in">Back to sign in</a></p>`,
    );
}
