/**
 * The web console's files (built by `npm run build` into dist/console/, from console/): served at `/` from
 * the same origin as `/v1`, so the console needs no CORS and holds its API key in sessionStorage only.
 *
 * Every answer carries a strict Content-Security-Policy — scripts, styles and connections from this origin
 * only, nothing inline, no frames — and `X-Content-Type-Options: nosniff`. A page path (`/calls/…`, any path
 * whose last segment has no dot) answers the console's index.html, and the console routes it; API paths
 * (`/v1/…`, `/mcp/…`, `/.well-known/…`) are never the console's, so an unknown one stays a JSON 404.
 *
 * The files are read once, when the server starts: the build is fixed while it runs.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';

/** dist/console beside dist/src (this file is dist/src/server/console-files.js once built). */
export const CONSOLE_DIR = fileURLToPath(new URL('../../console/', import.meta.url));

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // Images a tool answered are shown from blob: URLs the console makes of their bytes.
  "img-src 'self' blob:",
  "connect-src 'self'",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

interface ConsoleFile {
  bytes: Buffer;
  type: string;
  etag: string;
  /** Names with a content hash (Vite's assets/) never change: cached for good. */
  immutable: boolean;
}

/** The console's sections: the pages its router (console/src/main.tsx, PAGES) answers, each with sub-paths. */
export const CONSOLE_SECTIONS = ['overview', 'calls', 'packages', 'agents', 'sessions', 'vaults', 'users'] as const;

/** Sections whose pages are named by ids the operator's application chose (a user's), which may hold a dot. */
const DOTTED_ID_SECTIONS: readonly string[] = ['users'];

/**
 * Whether a path names one of the console's pages: `/`, or a section and what follows it — but for a last segment
 * with a dot (a file name the console does not have: 404, not the page), unless the section's ids may hold one.
 */
export function isPagePath(pathname: string): boolean {
  if (pathname === '/') return true;
  const section = pathname.split('/')[1];
  if (!(CONSOLE_SECTIONS as readonly string[]).includes(section)) return false;
  return DOTTED_ID_SECTIONS.includes(section) || !pathname.slice(pathname.lastIndexOf('/') + 1).includes('.');
}

export class ConsoleFiles {
  private readonly files = new Map<string, ConsoleFile>();

  constructor(readonly dir: string = CONSOLE_DIR) {
    for (const path of walk(dir)) {
      const name = `/${relative(dir, path).split(sep).join('/')}`;
      const bytes = readFileSync(path);
      this.files.set(name, {
        bytes,
        type: TYPES[extname(path)] ?? 'application/octet-stream',
        etag: `"${createHash('sha256').update(bytes).digest('base64url').slice(0, 27)}"`,
        immutable: name.startsWith('/assets/'),
      });
    }
  }

  /** Whether the console was built (dist/console/index.html exists). */
  get built(): boolean {
    return this.files.has('/index.html');
  }

  /** The paths served, for tests that scan every asset. */
  get paths(): string[] {
    return [...this.files.keys()];
  }

  /** Answers a console file or page; false when the request is not the console's (the caller answers 404). */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    let pathname: string;
    try {
      pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    } catch (error) {
      if (!(error instanceof URIError)) throw error; // expected: not percent-encoding
      return false;
    }
    const file = this.files.get(pathname) ?? (isPagePath(pathname) ? this.files.get('/index.html') : undefined);
    if (!file) {
      if (!this.built && isPagePath(pathname)) {
        const text = 'The subako console is not built. Run `npm run build` (or `npm run build:console`) and start the server again; the API is at /v1.\n';
        res.writeHead(503, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : text);
        return true;
      }
      return false;
    }
    const headers: Record<string, string | number> = {
      ...SECURITY_HEADERS,
      'content-type': file.type,
      'content-length': file.bytes.length,
      etag: file.etag,
      'cache-control': file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    };
    if (req.headers['if-none-match'] === file.etag) {
      res.writeHead(304, { ...SECURITY_HEADERS, etag: file.etag, 'cache-control': headers['cache-control'] as string });
      res.end();
      return true;
    }
    res.writeHead(200, headers);
    res.end(req.method === 'HEAD' ? undefined : file.bytes);
    return true;
  }
}

function walk(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []; // not built: the console says so
    throw error;
  }
  return names.flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}
