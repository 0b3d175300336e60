import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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
  describe('login --client-credentials (a machine, no browser)', () => {
    const machineId = 'cli-machine-3e8a';
    const machineSecret = 'cli-machine-secret-c4f1b9e27a05';
    const keyId = 'cli-machine-key-71c0';
    const keys = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    let machineAs: TestAuthServer;
    let machineMcp: ProtectedMcpServer;

    before(async () => {
      machineAs = await new TestAuthServer({ clientCredentials: true, tokenEndpointAuthMethods: ['client_secret_basic', 'private_key_jwt'] }).start();
      machineAs.preRegister(machineId, machineSecret, []);
      machineAs.preRegisterKey(keyId, keys.publicKey);
      machineMcp = await startProtectedMcpServer(machineAs);
    });
    after(async () => {
      await machineMcp.close();
      await machineAs.close();
    });

    const base = () => ['login', '--url', machineMcp.url, '--no-browser', '--client-credentials'];

    test('the secret from SUBAKO_OAUTH_CLIENT_SECRET gets a token by the grant; nothing secret is printed or stored in plain text', async () => {
      const run = await runCli([...base(), '--name', 'machine', '--client-id', machineId], { ...env, SUBAKO_OAUTH_CLIENT_SECRET: machineSecret });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, /Signed in as the client itself \(client-credentials grant\)/);
      assert.match(run.stdout, /Stored credential "machine"/);
      assert.doesNotMatch(run.stdout, /Open this URL/);
      assert.deepEqual(machineAs.tokenRequests.map((f) => f.get('grant_type')), ['client_credentials']);
      assert.equal(machineAs.authorizationRequests.length, 0);
      const file = await readFile(join(home, 'credentials.json'), 'utf8');
      for (const secret of [machineSecret, ...machineAs.issuedSecrets]) {
        assert.ok(!run.stdout.includes(secret) && !run.stderr.includes(secret), 'a secret or token was printed');
        assert.ok(!file.includes(secret), 'a secret or token is in the file in plain text');
      }
    });

    test('--private-key-file signs private_key_jwt assertions with the key (ES256)', async () => {
      const keyFile = join(home, 'machine-key.pem');
      await writeFile(keyFile, keys.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
      const run = await runCli([...base(), '--name', 'machine-key', '--client-id', keyId, '--private-key-file', keyFile, '--private-key-alg', 'ES256'], env);
      assert.equal(run.code, 0, run.stderr);
      assert.equal(machineAs.clientAuthentications.at(-1), 'private_key_jwt');
      assert.ok(!run.stdout.includes('PRIVATE KEY') && !run.stderr.includes('PRIVATE KEY'));
    });

    test('a wrong secret is one line on stderr naming invalid_client, exit 1, and never the secret', async () => {
      const wrong = 'cli-wrong-secret-5d0e2b';
      const run = await runCli([...base(), '--name', 'machine-wrong', '--client-id', machineId, '--client-secret', wrong], env);
      assert.equal(run.code, 1);
      assert.match(run.stderr, /^subako: the authorization server \S+ refused the client credentials \(invalid_client\)/);
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      assert.ok(!run.stderr.includes(wrong) && !run.stdout.includes(wrong));
    });

    test('usage errors say what is missing: the secret or key, the client id, a known algorithm, a readable key file', async () => {
      const cases: Array<[string[], RegExp]> = [
        [[...base(), '--name', 'm', '--client-id', machineId], /SUBAKO_OAUTH_CLIENT_SECRET.*--private-key-file/],
        [[...base(), '--name', 'm', '--client-secret', 's'], /--client-id/],
        [[...base(), '--name', 'm', '--client-id', keyId, '--private-key-file', '/nonexistent/key.pem'], /cannot read --private-key-file/],
        [[...base(), '--name', 'm', '--client-id', keyId, '--private-key-file', '/dev/null', '--private-key-alg', 'HS256'], /ES256 or RS256/],
        [['login', '--url', machineMcp.url, '--name', 'm', '--client-id', keyId, '--private-key-file', '/dev/null'], /--private-key-file is for --client-credentials/],
      ];
      for (const [args, message] of cases) {
        const run = await runCli(args, env);
        assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
        assert.match(run.stderr, message);
      }
    });
  });
});
