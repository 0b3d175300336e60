/**
 * What the console's tests share: the packed fixture package that makes two HTTP requests, a loopback HTTPS
 * server for it to reach (certificate from the egress tests' CA), and Chromium driven by playwright-core.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { REPO_ROOT, fixture } from '../helpers/paths.js';
import { makeTestCa } from '../egress/helpers/test-ca.js';

export const CHROMIUM = '/usr/bin/chromium';
/** Why the browser tests cannot run here, or false: they skip, saying what to install. */
export const NO_CHROMIUM: string | false = existsSync(CHROMIUM) ? false
  : `no Chromium at ${CHROMIUM} (Debian: apt-get install chromium; bash .ci/run installs what the tests need)`;
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/** dist/console, built by `npm run build` (npm test builds first). */
export const CONSOLE_BUILD = join(REPO_ROOT, 'dist', 'console', 'index.html');

export function requireConsoleBuild(): void {
  if (!existsSync(CONSOLE_BUILD)) throw new Error(`the console is not built (${CONSOLE_BUILD} is missing): run npm run build`);
}

/** A fresh profile every run, so nothing (storage, cache) carries over between tests. */
export async function launchChromium(): Promise<BrowserContext> {
  const profile = mkdtempSync(join(tmpdir(), 'subako-chromium-'));
  return chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1440, height: 1000 },
  });
}

/** Collects the page's console errors and uncaught exceptions into `problems`, for a test to assert there are none. */
export function watchProblems(page: Page, problems: string[]): void {
  page.on('console', (message) => { if (message.type() === 'error') problems.push(`console: ${message.text()}`); });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
}

/** Opens the console at `url`, signs in with `apiKey` as a person would, and waits for the top navigation. */
export async function signIn(page: Page, url: string, apiKey: string): Promise<void> {
  await page.goto(`${url}/`);
  await page.getByLabel('API key').fill(apiKey);
  await page.getByRole('button', { name: 'sign in' }).click();
  await page.locator('nav.top').getByRole('link', { name: 'Calls', exact: true }).waitFor();
}

/** A package directory's bundle bytes, packed by `subako pack`. */
export function packDir(dir: string): Buffer {
  const bundle = join(mkdtempSync(join(tmpdir(), 'subako-bundle-')), 'bundle.tar.gz');
  execFileSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'pack', dir, '-o', bundle], { stdio: 'pipe' });
  return readFileSync(bundle);
}

/** The fetch_two fixture as a package bundle (.tar.gz), packed by `subako pack`. */
export function packFetchTwo(name = 'fetch-two', version = '1.0.0'): string {
  const dir = mkdtempSync(join(tmpdir(), 'subako-fetch-two-'));
  const pkg = join(dir, name);
  mkdirSync(pkg);
  cpSync(fixture('c', 'mcp', 'fetch_two.wasm'), join(pkg, 'module.wasm'));
  writeFileSync(join(pkg, 'subako-package.json'), JSON.stringify({ abi: 1, name, description: 'Fetches two URLs in one call.', version }));
  const bundle = join(dir, `${name}-${version}.tar.gz`);
  execFileSync(process.execPath, [join(REPO_ROOT, 'bin', 'subako.js'), 'pack', pkg, '-o', bundle], { stdio: 'pipe' });
  return bundle;
}

export interface Upstream {
  server: Server;
  port: number;
  /** The CA certificate file the server process must trust (NODE_EXTRA_CA_CERTS). */
  caFile: string;
  close(): Promise<void>;
}

/** A loopback HTTPS server that answers a small forecast, with a certificate for localhost. */
export async function startUpstream(): Promise<Upstream> {
  const ca = makeTestCa();
  const caFile = join(mkdtempSync(join(tmpdir(), 'subako-console-ca-')), 'ca.pem');
  writeFileSync(caFile, ca.ca);
  const server = createServer({ cert: ca.cert, key: ca.key }, (req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ forecast: 'sunny', path: req.url }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    server, caFile, port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}
