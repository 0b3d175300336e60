/**
 * The loopback redirect of a native-app OAuth login (RFC 8252 §7.3): a one-shot HTTP listener on
 * 127.0.0.1 at a port the system picks, waiting for the authorization server to send the browser back
 * with `?code=…&state=…`. A redirect whose `state` is not ours is answered 400 and ignored (it did not
 * come from our request), so a stray or forged request can neither end nor hijack the login.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LoginError } from './errors.js';

export interface AuthorizationCallback {
  code: string;
  /** The RFC 9207 `iss` parameter, when the authorization server sent one. */
  iss?: string;
}

export interface RedirectListener {
  /** `http://127.0.0.1:<port>/callback`, to register and to send as `redirect_uri`. */
  readonly redirectUri: string;
  /** Resolves with the code of the first redirect carrying `state`; rejects on refusal, timeout or abort. */
  waitForCallback(state: string, options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<AuthorizationCallback>;
  close(): Promise<void>;
}

const CALLBACK_PATH = '/callback';
export const DEFAULT_LOGIN_TIMEOUT_MS = 5 * 60_000;

const page = (title: string, text: string): string =>
  `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head>` +
  `<body style="font-family: sans-serif; margin: 3em"><h1>${title}</h1><p>${text}</p></body></html>`;

function sameState(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** An OAuth error code as the server sent it, reduced to characters safe in a message and in HTML. */
function errorCode(value: string): string {
  return value.replace(/[^A-Za-z0-9._-]/g, '').slice(0, 64) || 'unknown_error';
}

export async function startRedirectListener(): Promise<RedirectListener> {
  let expected: string | undefined;
  let settle: ((outcome: { ok: AuthorizationCallback } | { error: LoginError }) => void) | undefined;

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const reply = (status: number, title: string, text: string): void => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', connection: 'close' });
      res.end(page(title, text));
    };
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method !== 'GET' || url.pathname !== CALLBACK_PATH || expected === undefined || settle === undefined) {
      reply(404, 'Not found', 'Nothing is waiting here.');
      return;
    }
    const state = url.searchParams.get('state');
    if (state === null || !sameState(state, expected)) {
      reply(400, 'Login not recognised', 'This redirect does not belong to the login subako is waiting for.');
      return;
    }
    const done = settle;
    settle = undefined;
    const code = url.searchParams.get('code');
    if (url.searchParams.has('error') || code === null || code === '') {
      const refused = errorCode(url.searchParams.get('error') ?? (code === null ? 'missing_code' : 'empty_code'));
      reply(400, 'Login refused', `The authorization server answered <code>${refused}</code>. You can close this tab.`);
      done({ error: new LoginError('authorization', `the authorization server refused the login (${refused})`) });
      return;
    }
    reply(200, 'Signed in', 'subako received the authorization. You can close this tab.');
    const iss = url.searchParams.get('iss');
    done({ ok: iss === null ? { code } : { code, iss } });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    redirectUri: `http://127.0.0.1:${port}${CALLBACK_PATH}`,
    waitForCallback(state, options = {}) {
      if (expected !== undefined) throw new Error('waitForCallback is one-shot');
      expected = state;
      return new Promise<AuthorizationCallback>((resolve, reject) => {
        const timeoutMs = options.timeoutMs ?? DEFAULT_LOGIN_TIMEOUT_MS;
        const finish = (outcome: { ok: AuthorizationCallback } | { error: LoginError }): void => {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
          settle = undefined;
          if ('ok' in outcome) resolve(outcome.ok);
          else reject(outcome.error);
        };
        const timer = setTimeout(
          () => finish({ error: new LoginError('authorization', `no redirect came back within ${Math.round(timeoutMs / 1000)} s; run the login again`) }),
          timeoutMs,
        );
        const onAbort = (): void => finish({ error: new LoginError('authorization', 'the login was cancelled') });
        if (options.signal?.aborted) return onAbort();
        options.signal?.addEventListener('abort', onAbort, { once: true });
        settle = finish;
      });
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
