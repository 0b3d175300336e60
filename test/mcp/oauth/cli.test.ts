import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { TestAuthServer } from './auth-server.js';
import { startProtectedMcpServer, type ProtectedMcpServer } from './protected-mcp-server.js';

const RUNNER = join(dirname(fileURLToPath(import.meta.url)), 'cli-runner.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI in a child process. `onStdout` sees the output as it comes (the test's browser reads the
 * printed authorization URL from it).
 */
function runCli(args: string[], env: NodeJS.ProcessEnv, onStdout?: (soFar: string) => void): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [RUNNER, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      onStdout?.(stdout);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let home: string;
let env: NodeJS.ProcessEnv;
let authServer: TestAuthServer;
let mcpServer: ProtectedMcpServer;

before(async () => {
  home = await mkdtemp(join(tmpdir(), 'subako-cli-oauth-'));
  // PATH without xdg-open: --no-browser is what is tested, but a browser must never be needed anyway.
  env = { PATH: '/nonexistent', SUBAKO_HOME: home };
  authServer = await new TestAuthServer().start();
  mcpServer = await startProtectedMcpServer(authServer);
});

after(async () => {
  await mcpServer.close();
  await authServer.close();
  await rm(home, { recursive: true, force: true });
});

describe('subako mcp login / credentials / forget', () => {
  test('login prints the URL to open, completes when the browser follows it, and never prints a token', async () => {
    let followed: Promise<number> | undefined;
    const run = await runCli(['login', '--url', mcpServer.url, '--name', 'work', '--no-browser', '--timeout', '20'], env, (soFar) => {
      const match = /^\s+(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(soFar);
      if (match && followed === undefined) {
        followed = (async () => {
          const atServer = await fetch(match[1]!, { redirect: 'manual' });
          const back = await fetch(atServer.headers.get('location')!);
          await back.text();
          return back.status;
        })();
      }
    });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(await followed, 200);
    assert.match(run.stdout, /Open this URL in a browser/);
    assert.match(run.stdout, /Stored credential "work"/);
    for (const secret of authServer.issuedSecrets) {
      assert.ok(!run.stdout.includes(secret) && !run.stderr.includes(secret), 'a token or code was printed');
    }
    const file = await readFile(join(home, 'credentials.json'), 'utf8');
    for (const secret of authServer.issuedSecrets) assert.ok(!file.includes(secret));
  });

  test('login --scope on an existing credential steps up: the new scopes on top of those it had', async () => {
    const follow = (soFar: string, state: { followed?: Promise<void> }) => {
      const match = /^\s+(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(soFar);
      if (match && state.followed === undefined) {
        state.followed = (async () => {
          const atServer = await fetch(match[1]!, { redirect: 'manual' });
          await (await fetch(atServer.headers.get('location')!)).text();
        })();
      }
    };
    const first: { followed?: Promise<void> } = {};
    const plain = await runCli(['login', '--url', mcpServer.url, '--name', 'stepper', '--no-browser', '--timeout', '20'], env, (s) => follow(s, first));
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /with scopes "tools:read tools:call"/);
    const second: { followed?: Promise<void> } = {};
    const stepped = await runCli(
      ['login', '--url', mcpServer.url, '--name', 'stepper', '--scope', 'reports:read', '--no-browser', '--timeout', '20'],
      env,
      (s) => follow(s, second),
    );
    assert.equal(stepped.code, 0, stepped.stderr);
    assert.match(stepped.stdout, /with scopes "tools:read tools:call reports:read"/);
    await runCli(['forget', 'stepper'], env);
  });

  test('credentials lists names only, forget deletes one, and forgetting an unknown name fails', async () => {
    const listed = await runCli(['credentials'], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal(listed.stdout, 'work\n');

    const forgot = await runCli(['forget', 'work'], env);
    assert.equal(forgot.code, 0, forgot.stderr);
    assert.deepEqual(JSON.parse((await runCli(['credentials', '--json'], env)).stdout), []);

    const again = await runCli(['forget', 'work'], env);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /no stored credential named "work"/);
  });

  test('a login that cannot discover an authorization server exits 1 with a message', async () => {
    const run = await runCli(['login', '--url', 'http://127.0.0.1:9/mcp', '--name', 'nowhere', '--no-browser'], env);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /^subako: /);
  });
  test('login --client-id/--client-secret completes where dynamic registration is off; the file holds neither in plain text', async () => {
    const closedAs = await new TestAuthServer({ registration: false }).start();
    const closedMcp = await startProtectedMcpServer(closedAs);
    const clientId = 'cli-pre-registered-71d2';
    const clientSecret = 'cli-client-secret-e04b9a6f13c8';
    closedAs.preRegister(clientId, clientSecret);
    try {
      let followed: Promise<void> | undefined;
      const args = ['login', '--url', closedMcp.url, '--name', 'pre', '--no-browser', '--timeout', '20', '--client-id', clientId];
      const run = await runCli([...args, '--client-secret', clientSecret], env, (soFar) => {
        const match = /^\s+(http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+)$/m.exec(soFar);
        if (match && followed === undefined) {
          followed = (async () => {
            const atServer = await fetch(match[1]!, { redirect: 'manual' });
            await (await fetch(atServer.headers.get('location')!)).text();
          })();
        }
      });
      assert.equal(run.code, 0, run.stderr);
      await followed;
      assert.match(run.stdout, /Stored credential "pre"/);
      assert.equal(closedAs.registrationRequests.length, 0);
      assert.deepEqual(closedAs.clientAuthentications, ['basic']);
      assert.ok(!run.stdout.includes(clientSecret) && !run.stderr.includes(clientSecret));
      const file = await readFile(join(home, 'credentials.json'), 'utf8');
      assert.ok(!file.includes(clientSecret), 'the client secret is sealed');
      assert.ok(!file.includes(clientId), 'and the client id');

      const orphan = await runCli(['login', '--url', closedMcp.url, '--name', 'x', '--no-browser', '--client-secret', 's'], env);
      assert.equal(orphan.code, 2, 'a secret without --client-id is a usage error');
      assert.match(orphan.stderr, /--client-id/);
    } finally {
      await runCli(['forget', 'pre'], env);
      await closedMcp.close();
      await closedAs.close();
    }
  });
});
