/**
 * A small but real OAuth 2.1 authorization server for the login tests, on 127.0.0.1 at a random port:
 * RFC 8414 metadata (or only OpenID Connect discovery), RFC 7591 dynamic client registration, an
 * authorization endpoint that approves at once and redirects back with a code (the test's "browser" is an
 * HTTP GET that follows the redirect), a token endpoint that verifies PKCE S256, the redirect URI and the
 * RFC 8707 resource, and refresh with rotation (a rotated-out refresh token is refused). It can be told to
 * refuse refreshes or authorizations. Clients may also be registered beforehand (`preRegister`, with or
 * without a secret, checked at the token endpoint by HTTP Basic or in the form), and with
 * `clientIdMetadataDocuments` it advertises SEP-991 support and accepts an https client_id URL whose
 * redirect URIs it takes as loopback ones (it does not fetch the document: there is no https on loopback
 * here). With `clientCredentials` it also runs the client-credentials grant (RFC 6749 §4.4) for clients registered
 * with a secret or a public key (`preRegisterKey`: `private_key_jwt` assertions, RFC 7523, verified with jose),
 * issuing no refresh token. It can serve its endpoints on another server's origin (`serve` with `adoptOrigin`),
 * with or without a metadata document there (`discovery: 'none'`), as a 2025-03-26 MCP server did.
 * Everything it issued or received is recorded so tests can check the wire.
 *
 * With `jwt`, its access tokens are JWTs (RFC 9068) signed with an RS256 key whose public half it serves as a
 * JWK set at `/jwks` (named `jwks_uri` in its metadata): `iss` its URL, `aud` the configured audience (or the
 * requested resource), `sub` whoever `subject` says is signing in now, `scope`, `iat`, `exp`, `jti`. `mint`
 * signs any claims with that key, for tokens a flow would not give (expired, for another audience, another issuer).
 *
 * With `consentPage`, the authorization endpoint shows a page where a person types who they are and clicks
 * Allow (or Deny) — for tests driven through a real browser — and each token then carries that subject. It
 * advertises RFC 7009 revocation (`/revoke`): a revoked token is unknown to `introspect` at once.
 */
import { createHash, randomBytes, type KeyObject } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, jwtVerify, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export interface AuthServerOptions {
  /** Which discovery document is served: RFC 8414 (default), only OpenID Connect discovery, or none at all. */
  discovery?: 'oauth' | 'oidc' | 'none';
  /** Whether the client-credentials grant is offered (and advertised in `grant_types_supported`). */
  clientCredentials?: boolean;
  /** The client authentications advertised; by default none, client_secret_basic and client_secret_post. */
  tokenEndpointAuthMethods?: string[];
  /** Lifetime of access tokens, in seconds. */
  accessTokenTtlSeconds?: number;
  /** Whether the metadata advertises a registration endpoint. */
  registration?: boolean;
  /** Whether the metadata advertises `client_id_metadata_document_supported`. */
  clientIdMetadataDocuments?: boolean;
  /** Access tokens as signed JWTs, with this audience (the requested resource when absent). */
  jwt?: { audience?: string };
  /** Whether the authorization endpoint asks a person first (an HTML page with Allow and Deny) instead of approving at once. */
  consentPage?: boolean;
}

interface Client {
  clientId: string;
  redirectUris: string[];
  /** A confidential client's secret; the token endpoint then requires it. */
  secret?: string;
  /** A `private_key_jwt` client's public key; the token endpoint then requires an assertion it verifies. */
  publicKey?: KeyObject;
}

interface PendingCode {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  scope?: string;
  subject: string;
}

export interface IssuedToken {
  clientId: string;
  resource: string;
  scope?: string;
  /** Who consented (the name typed on the consent page; `auto` without one). */
  subject: string;
  /** Seconds since the epoch. */
  expiresAt: number;
}

interface RefreshGrant {
  clientId: string;
  resource: string;
  scope?: string;
  /** Absent: `auto`. */
  subject?: string;
}

export class TestAuthServer {
  url = '';
  /** Refuse every refresh with `invalid_grant` (as when a refresh token expired or was revoked). */
  failRefresh = false;
  /** Refuse every authorization with `access_denied` (the person said no). */
  denyAuthorization = false;
  /** The person signing in now when no consent page asks (the `sub` of JWTs, a token's `subject`). */
  subject = 'auto';
  /** With `jwt`: how many times the JWK set was fetched. */
  jwksFetches = 0;
  private signing: { privateKey: CryptoKey; publicJwk: JWK } | undefined;

  readonly clients = new Map<string, Client>();
  readonly accessTokens = new Map<string, IssuedToken>();
  readonly refreshTokens = new Map<string, RefreshGrant>();
  /** Refresh tokens that were rotated out; presenting one again is refused. */
  readonly spentRefreshTokens = new Set<string>();
  /** Every authorization request's query and token request's form, in order. */
  readonly authorizationRequests: URLSearchParams[] = [];
  readonly tokenRequests: URLSearchParams[] = [];
  /** Every dynamic registration request's JSON body, in order. */
  readonly registrationRequests: Array<Record<string, unknown>> = [];
  /** How each token request authenticated its client: 'basic', 'post' or 'none'. */
  readonly clientAuthentications: string[] = [];
  /** Every string this server handed out that must stay secret (tokens, codes). */
  readonly issuedSecrets: string[] = [];
  /** Every revocation request's form, in order. */
  readonly revocationRequests: URLSearchParams[] = [];
  /** Authorizations waiting for the person's decision on the consent page, by their id. */
  private readonly pendingConsents = new Map<string, URLSearchParams>();

  private readonly codes = new Map<string, PendingCode>();
  private server: Server | undefined;

  constructor(private readonly options: AuthServerOptions = {}) {}

  /** A client registered out of band, as an administrator would (loopback redirect, any port). */
  preRegister(clientId: string, secret?: string, redirectUris = ['http://127.0.0.1/callback']): void {
    this.clients.set(clientId, { clientId, redirectUris, ...(secret !== undefined ? { secret } : {}) });
  }

  /** A machine client that authenticates with `private_key_jwt` assertions signed by this key's private half. */
  preRegisterKey(clientId: string, publicKey: KeyObject): void {
    this.clients.set(clientId, { clientId, redirectUris: [], publicKey });
  }

  /** Serves this authorization server's endpoints on another server's origin (which routes requests to `serve`). */
  adoptOrigin(origin: string): void {
    this.url = origin;
  }

  /** Answers one request (for a server that hosts this one's endpoints on its own origin). */
  serve(req: IncomingMessage, res: ServerResponse): void {
    this.handle(req, res).catch((err: unknown) => json(res, 500, { error: 'server_error', error_description: String(err) }));
  }

  async start(): Promise<this> {
    if (this.options.jwt) {
      const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
      this.signing = { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid: `k-${randomBytes(4).toString('hex')}`, alg: 'RS256', use: 'sig' } };
    }
    this.server = createServer((req, res) => this.serve(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  /** Signs these claims with this server's key (jwt servers only): iss, iat and a jti are added unless given. */
  async mint(claims: JWTPayload): Promise<string> {
    if (!this.signing) throw new Error('mint needs an auth server started with jwt');
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ iss: this.url, iat: now, jti: randomBytes(8).toString('hex'), ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: this.signing.publicJwk.kid!, typ: 'at+jwt' })
      .sign(this.signing.privateKey);
    this.issuedSecrets.push(token);
    return token;
  }

  metadata(): Record<string, unknown> {
    return {
      issuer: this.url,
      authorization_endpoint: `${this.url}/authorize`,
      token_endpoint: `${this.url}/token`,
      revocation_endpoint: `${this.url}/revoke`,
      ...(this.options.registration === false ? {} : { registration_endpoint: `${this.url}/register` }),
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', ...(this.options.clientCredentials === true ? ['client_credentials'] : [])],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: this.options.tokenEndpointAuthMethods ?? ['none', 'client_secret_basic', 'client_secret_post'],
      ...(this.options.clientIdMetadataDocuments === true ? { client_id_metadata_document_supported: true } : {}),
      scopes_supported: ['tools:read', 'tools:call'],
      ...(this.options.jwt ? { jwks_uri: `${this.url}/jwks` } : {}),
      ...(this.options.discovery === 'oidc'
        ? { jwks_uri: `${this.url}/jwks`, subject_types_supported: ['public'], id_token_signing_alg_values_supported: ['RS256'] }
        : {}),
    };
  }

  /** Token introspection for the protected MCP server: the token's grant, or undefined if unknown/expired. */
  introspect(token: string): IssuedToken | undefined {
    const issued = this.accessTokens.get(token);
    if (issued === undefined || issued.expiresAt * 1000 <= Date.now()) return undefined;
    return issued;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const discovery = this.options.discovery ?? 'oauth';
    if (req.method === 'GET' && url.pathname === '/.well-known/oauth-authorization-server' && discovery === 'oauth') {
      return json(res, 200, this.metadata());
    }
    if (req.method === 'GET' && url.pathname === '/.well-known/openid-configuration' && discovery === 'oidc') {
      return json(res, 200, this.metadata());
    }
    if (req.method === 'POST' && url.pathname === '/register' && this.options.registration !== false) {
      return this.register(JSON.parse(await body(req)) as Record<string, unknown>, res);
    }
    if (req.method === 'GET' && url.pathname === '/jwks' && this.signing) {
      this.jwksFetches += 1;
      return json(res, 200, { keys: [this.signing.publicJwk] });
    }
    if (req.method === 'GET' && url.pathname === '/authorize') return this.authorize(url.searchParams, res);
    if (req.method === 'POST' && url.pathname === '/authorize/decide') return this.decide(new URLSearchParams(await body(req)), res);
    if (req.method === 'POST' && url.pathname === '/revoke') return this.revoke(new URLSearchParams(await body(req)), res);
    if (req.method === 'POST' && url.pathname === '/token') return this.token(req, new URLSearchParams(await body(req)), res);
    json(res, 404, { error: 'not_found' });
  }

  private register(metadata: Record<string, unknown>, res: ServerResponse): void {
    this.registrationRequests.push(metadata);
    const redirectUris = metadata.redirect_uris;
    if (!Array.isArray(redirectUris) || redirectUris.length === 0 || !redirectUris.every((u) => typeof u === 'string')) {
      return json(res, 400, { error: 'invalid_redirect_uri' });
    }
    if (metadata.token_endpoint_auth_method !== undefined && metadata.token_endpoint_auth_method !== 'none') {
      return json(res, 400, { error: 'invalid_client_metadata' });
    }
    const clientId = `client-${randomBytes(8).toString('hex')}`;
    this.clients.set(clientId, { clientId, redirectUris: redirectUris as string[] });
    json(res, 201, { ...metadata, client_id: clientId, client_id_issued_at: Math.floor(Date.now() / 1000) });
  }

  /** RFC 8252 §7.3: a loopback redirect URI matches whatever its port. */
  private redirectAllowed(client: Client, redirectUri: string): boolean {
    const withoutPort = (u: string): string | undefined => {
      try {
        const parsed = new URL(u);
        if (parsed.hostname === '127.0.0.1' || parsed.hostname === '[::1]') parsed.port = '';
        return parsed.href;
      } catch {
        return undefined;
      }
    };
    const wanted = withoutPort(redirectUri);
    return wanted !== undefined && client.redirectUris.some((u) => withoutPort(u) === wanted);
  }

  private authorize(query: URLSearchParams, res: ServerResponse): void {
    this.authorizationRequests.push(query);
    const client = this.clientFor(query.get('client_id') ?? '');
    const redirectUri = query.get('redirect_uri') ?? '';
    // Without a known client and a registered redirect, never redirect anywhere (RFC 6749 §4.1.2.1).
    if (client === undefined || !this.redirectAllowed(client, redirectUri)) {
      return json(res, 400, { error: 'invalid_request', error_description: 'unknown client or redirect_uri' });
    }
    const back = new URL(redirectUri);
    const state = query.get('state');
    if (state !== null) back.searchParams.set('state', state);
    const refuse = (error: string): void => {
      back.searchParams.set('error', error);
      redirect(res, back.href);
    };
    if (query.get('response_type') !== 'code') return refuse('unsupported_response_type');
    if (query.get('code_challenge_method') !== 'S256' || !query.get('code_challenge')) return refuse('invalid_request');
    const resource = query.get('resource');
    if (resource === null) return refuse('invalid_target');
    if (this.denyAuthorization) return refuse('access_denied');
    if (this.options.consentPage) {
      const id = randomBytes(12).toString('hex');
      this.pendingConsents.set(id, query);
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(`<!doctype html><html><head><meta charset="utf-8"><title>Authorize</title></head><body>` +
        `<h1>Allow ${escapeHtml(client.clientId)} to use your account?</h1><p id="scope">Scopes: ${escapeHtml(query.get('scope') ?? '')}</p>` +
        `<form method="post" action="/authorize/decide"><input type="hidden" name="id" value="${id}">` +
        `<label>Your name <input name="subject" id="subject"></label>` +
        `<button name="decision" value="allow" id="allow">Allow</button><button name="decision" value="deny" id="deny">Deny</button></form></body></html>`);
      return;
    }
    this.grantCode(query, client, back, res, this.subject);
  }

  /** The person's decision on the consent page. */
  private decide(form: URLSearchParams, res: ServerResponse): void {
    const query = this.pendingConsents.get(form.get('id') ?? '');
    this.pendingConsents.delete(form.get('id') ?? '');
    if (query === undefined) return json(res, 400, { error: 'invalid_request', error_description: 'no such authorization' });
    const client = this.clientFor(query.get('client_id') ?? '')!;
    const back = new URL(query.get('redirect_uri')!);
    const state = query.get('state');
    if (state !== null) back.searchParams.set('state', state);
    if (form.get('decision') !== 'allow') {
      back.searchParams.set('error', 'access_denied');
      return redirect(res, back.href);
    }
    this.grantCode(query, client, back, res, form.get('subject') || 'anonymous');
  }

  /** RFC 7009: the token is forgotten (an unknown one is acknowledged too); a refresh token takes its grant's access tokens with it. */
  private revoke(form: URLSearchParams, res: ServerResponse): void {
    this.revocationRequests.push(form);
    const token = form.get('token') ?? '';
    const grant = this.refreshTokens.get(token);
    this.refreshTokens.delete(token);
    this.accessTokens.delete(token);
    if (grant !== undefined) {
      for (const [access, issued] of this.accessTokens) {
        if (issued.clientId === grant.clientId && issued.subject === (grant.subject ?? 'auto') && issued.resource === grant.resource) this.accessTokens.delete(access);
      }
    }
    res.writeHead(200);
    res.end();
  }

  private grantCode(query: URLSearchParams, client: Client, back: URL, res: ServerResponse, subject: string): void {
    const resource = query.get('resource')!;
    const code = randomBytes(16).toString('base64url');
    this.issuedSecrets.push(code);
    this.codes.set(code, {
      clientId: client.clientId,
      redirectUri: query.get('redirect_uri')!,
      codeChallenge: query.get('code_challenge')!,
      resource,
      ...(query.get('scope') ? { scope: query.get('scope')! } : {}),
      subject,
    });
    back.searchParams.set('code', code);
    back.searchParams.set('iss', this.url);
    redirect(res, back.href);
  }

  /** A known client, or (with metadata documents on) one named by an https client_id URL. */
  private clientFor(clientId: string): Client | undefined {
    const known = this.clients.get(clientId);
    if (known !== undefined || this.options.clientIdMetadataDocuments !== true || !clientId.startsWith('https://')) return known;
    return { clientId, redirectUris: ['http://127.0.0.1/callback'] };
  }

  /**
   * RFC 6749 §2.3.1: the client id from HTTP Basic or the form, and its secret checked when it has one; or an
   * RFC 7523 assertion (iss = sub = the client id, audience this issuer) verified with the client's public key.
   */
  private async authenticateClient(req: IncomingMessage, form: URLSearchParams): Promise<Client | undefined> {
    const assertion = form.get('client_assertion');
    if (assertion !== null) {
      this.clientAuthentications.push('private_key_jwt');
      if (form.get('client_assertion_type') !== 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer') return undefined;
      for (const client of this.clients.values()) {
        if (client.publicKey === undefined) continue;
        const verified = await jwtVerify(assertion, client.publicKey, { audience: [this.url, `${this.url}/`], issuer: client.clientId, subject: client.clientId }).catch(
          () => undefined,
        );
        if (verified !== undefined) return client;
      }
      return undefined;
    }
    const header = req.headers.authorization ?? '';
    let clientId = form.get('client_id') ?? '';
    let secret = form.get('client_secret') ?? undefined;
    let method = secret === undefined ? 'none' : 'post';
    if (header.startsWith('Basic ')) {
      const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      clientId = decodeURIComponent(decoded.slice(0, colon));
      secret = decodeURIComponent(decoded.slice(colon + 1));
      method = 'basic';
    }
    this.clientAuthentications.push(method);
    const client = this.clientFor(clientId);
    if (client === undefined || client.publicKey !== undefined || client.secret !== secret) return undefined;
    return client;
  }

  private async token(req: IncomingMessage, form: URLSearchParams, res: ServerResponse): Promise<void> {
    this.tokenRequests.push(form);
    const client = await this.authenticateClient(req, form);
    if (client === undefined) return json(res, 401, { error: 'invalid_client' });
    const clientId = client.clientId;
    const grant = form.get('grant_type');

    if (grant === 'authorization_code') {
      const code = form.get('code') ?? '';
      const pending = this.codes.get(code);
      this.codes.delete(code); // one use only
      if (pending === undefined || pending.clientId !== clientId) return json(res, 400, { error: 'invalid_grant' });
      if (form.get('redirect_uri') !== pending.redirectUri) return json(res, 400, { error: 'invalid_grant' });
      const verifier = form.get('code_verifier') ?? '';
      if (createHash('sha256').update(verifier).digest('base64url') !== pending.codeChallenge) {
        return json(res, 400, { error: 'invalid_grant', error_description: 'PKCE verification failed' });
      }
      if (form.get('resource') !== pending.resource) return json(res, 400, { error: 'invalid_target' });
      return this.issue(res, { clientId, resource: pending.resource, scope: pending.scope, subject: pending.subject });
    }

    if (grant === 'refresh_token') {
      const presented = form.get('refresh_token') ?? '';
      const refresh = this.refreshTokens.get(presented);
      if (this.failRefresh || refresh === undefined || refresh.clientId !== clientId) {
        return json(res, 400, { error: 'invalid_grant', error_description: 'refresh token expired, revoked or reused' });
      }
      const resource = form.get('resource');
      if (resource !== null && resource !== refresh.resource) return json(res, 400, { error: 'invalid_target' });
      // Rotation: the presented refresh token is spent.
      this.refreshTokens.delete(presented);
      this.spentRefreshTokens.add(presented);
      return this.issue(res, refresh);
    }
    if (grant === 'client_credentials' && this.options.clientCredentials === true) {
      const resource = form.get('resource');
      if (resource === null) return json(res, 400, { error: 'invalid_target' });
      return this.issue(res, { clientId, resource, ...(form.get('scope') ? { scope: form.get('scope')! } : {}) }, { refreshToken: false });
    }
    json(res, 400, { error: 'unsupported_grant_type' });
  }

  private async issue(res: ServerResponse, grant: RefreshGrant, how: { refreshToken: boolean } = { refreshToken: true }): Promise<void> {
    const ttl = this.options.accessTokenTtlSeconds ?? 3600;
    const accessToken = this.options.jwt
      ? await this.mint({
        aud: this.options.jwt.audience ?? grant.resource, sub: grant.subject ?? 'auto', client_id: grant.clientId,
        exp: Math.floor(Date.now() / 1000) + ttl, ...(grant.scope ? { scope: grant.scope } : {}),
      })
      : `at-${randomBytes(24).toString('base64url')}`;
    const refreshToken = how.refreshToken ? `rt-${randomBytes(24).toString('base64url')}` : undefined;
    this.issuedSecrets.push(accessToken, ...(refreshToken !== undefined ? [refreshToken] : []));
    this.accessTokens.set(accessToken, { ...grant, subject: grant.subject ?? 'auto', expiresAt: Math.floor(Date.now() / 1000) + ttl });
    if (refreshToken !== undefined) this.refreshTokens.set(refreshToken, grant);
    json(res, 200, {
      access_token: accessToken,
      token_type: 'Bearer',
      expires_in: ttl,
      ...(refreshToken !== undefined ? { refresh_token: refreshToken } : {}),
      ...(grant.scope ? { scope: grant.scope } : {}),
    });
  }
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(JSON.stringify(value));
}

function redirect(res: ServerResponse, location: string): void {
  res.writeHead(302, { location });
  res.end();
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
