/**
 * Attacks on the pieces of a large call (nats-body.ts): a worker on the machine's NATS, and this test as a
 * replica holding the deployment's key (it sends claims and pieces as one would, and misbehaves as a buggy or
 * captured one might) and as a plain client without the key that replays what it sniffed. A piece replayed is
 * dropped; a piece moved to another call (its header made to name that call) does not open; a body cut short, or larger than declared, is refused
 * before anything runs. The control: the exact body passes (the call then fails at the package, which this
 * test never uploaded — past the arguments).
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInbox, type NatsConnection } from '@nats-io/transport-node';
import { NatsBlobStore } from '../../src/package/index.js';
import { NatsWorker } from '../../src/platform/scale-out/index.js';
import { PROTOCOL, natsSubjects, workerSubjects, type CallRequest } from '../../src/platform/scale-out/nats-calls.js';
import { BodyAssembly, splitBody } from '../../src/platform/scale-out/nats-body.js';
import { busKey, openEnvelope, sealEnvelope, type BusKind } from '../../src/platform/scale-out/nats-envelope.js';
import { tempDir, TEST_KEY } from '../server/helpers/harness.js';
import { connectShared, removeBuckets, runName } from '../helpers/nats.js';
import { eventually, until } from '../helpers/eventually.js';

/** The first answer that is there. */
const found = async <T>(what: string, ask: () => T | undefined): Promise<T> => (await eventually(what, ask, (answer) => answer !== undefined)) as T;

const sealingKey = Buffer.from(TEST_KEY.SUBAKO_SECRET_KEY, 'base64');

describe('the pieces of a large call, attacked', () => {
  const prefix = runName('subako_bodies');
  const subjects = natsSubjects(prefix);
  const key = busKey(sealingKey, prefix);
  const root = tempDir();
  let worker: NatsWorker;
  let workerNc: NatsConnection;
  let nc: NatsConnection;

  before(async () => {
    workerNc = await connectShared();
    nc = await connectShared();
    worker = new NatsWorker({
      nc: workerNc, prefix, blobs: await NatsBlobStore.open(workerNc, subjects.packagesBucket), pool: 4, volumesDir: join(root, 'volumes'),
      dataDir: join(root, 'worker'), sealingKey,
    });
    await worker.start();
  });

  after(async () => {
    await worker?.close();
    await workerNc?.close();
    await nc?.close();
    await removeBuckets(prefix);
    rmSync(root, { recursive: true, force: true });
  });

  const seal = (subject: string, k: BusKind, c: string, n: number, body: unknown): Uint8Array => sealEnvelope(key, subject, { k, c, n, e: Date.now() + 60_000 }, body);

  /** A call declaring `declared` sent as a replica would; resolves once the worker took it (`inbox`: where its pieces go) with the answers read so far. */
  const claim = async (declared: { bytes: number; parts: number; sha256: string }) => {
    const callId = randomUUID();
    const replyTo = createInbox();
    const answers: { kind: string; body: any }[] = [];
    const sub = nc.subscribe(replyTo, {
      callback: (_err, msg) => {
        const opened = openEnvelope<any>(key, msg.subject, msg.data, ['accepted', 'busy', 'alive', 'outcome', 'refused']);
        if (opened.ok) answers.push({ kind: opened.header.k, body: opened.body });
      },
    });
    const request: CallRequest = {
      v: PROTOCOL, callId, replica: 'rep_test', replyTo, timeoutMs: 20_000, package: { name: 'nothing', version: '1.0.0', digest: 'a'.repeat(64) },
      tool: 'echo', body: declared, tmp: 'sessions/ses_0123456789abcdef0123456789ab/tmp',
    };
    const own = workerSubjects(subjects, worker.busId);
    nc.publish(own.call, seal(own.call, 'call', callId, 0, request));
    await found('the worker takes the call', () => answers.find((a) => a.kind === 'accepted'));
    const inbox = own.control;
    return {
      callId, inbox, answers,
      piece: (n: number, bytes: Buffer) => seal(inbox, 'body', callId, n, bytes),
      refusal: () => found('the worker answers', () => answers.find((a) => a.kind === 'refused')?.body.message as string | undefined),
      close: () => sub.unsubscribe(),
    };
  };
  const declare = (body: Buffer, size: number) => splitBody(body, size);
  const dropped = (reason: 'replayed' | 'unauthentic' | 'unexpected'): number => worker.stats().busDropped[reason];

  it('the exact body passes (the control): the call gets past its arguments', async () => {
    const { declared, parts } = declare(Buffer.from(JSON.stringify({ text: 'x'.repeat(3000) })), 1000);
    const call = await claim(declared);
    parts.forEach((part, i) => nc.publish(call.inbox, call.piece(i + 1, part)));
    const message = await call.refusal();
    assert.doesNotMatch(message, /arguments/, message);
    call.close();
  });

  it('a piece replayed is dropped, and the body still comes whole', async () => {
    const { declared, parts } = declare(Buffer.from(JSON.stringify({ text: 'y'.repeat(3000) })), 1000);
    const call = await claim(declared);
    const before = dropped('replayed');
    const first = call.piece(1, parts[0]);
    nc.publish(call.inbox, first);
    nc.publish(call.inbox, first);
    parts.slice(1).forEach((part, i) => nc.publish(call.inbox, call.piece(i + 2, part)));
    const message = await call.refusal();
    assert.doesNotMatch(message, /arguments/, message);
    assert.equal(dropped('replayed'), before + 1);
    call.close();
  });

  it('a piece moved to another call does not open there; that call takes its own', async () => {
    const body = Buffer.from(JSON.stringify({ text: 'z'.repeat(3000) }));
    const { declared, parts } = declare(body, 1000);
    const [a, b] = [await claim(declared), await claim(declared)];
    const before = dropped('unauthentic');
    // A's first piece, sniffed off the bus, its header (in the clear) made to name B: same sealed bytes, same number, another call.
    const sniffed = Buffer.from(a.piece(1, parts[0]));
    const headLength = sniffed.readUInt16BE(1);
    const header = JSON.parse(sniffed.subarray(3, 3 + headLength).toString('utf8'));
    const renamed = Buffer.from(JSON.stringify({ ...header, c: b.callId }).padEnd(headLength, ' '));
    assert.equal(renamed.length, headLength, 'the call ids are of one length');
    nc.publish(b.inbox, Buffer.concat([sniffed.subarray(0, 3), renamed, sniffed.subarray(3 + headLength)]));
    await nc.flush();
    await until('the moved piece dropped', () => dropped('unauthentic') > before);
    for (const call of [a, b]) parts.forEach((part, i) => nc.publish(call.inbox, call.piece(i + 1, part)));
    for (const call of [a, b]) assert.doesNotMatch(await call.refusal(), /arguments/);
    for (const call of [a, b]) call.close();
  });

  it('a body larger than declared is refused at once, before anything runs', async () => {
    const body = Buffer.from(JSON.stringify({ text: 'w'.repeat(100) }));
    const call = await claim({ bytes: body.length, parts: 1, sha256: createHash('sha256').update(body).digest('hex') });
    nc.publish(call.inbox, call.piece(1, Buffer.concat([body, Buffer.from('    ')])));
    assert.match(await call.refusal(), /could not run the call: its arguments were refused: more than the \d+ bytes in 1 pieces declared/);
    call.close();
  });

  it('a body cut short is refused: its last piece ends it short of what was declared', async () => {
    const { declared, parts } = declare(Buffer.from(JSON.stringify({ text: 'v'.repeat(3000) })), 1000);
    const call = await claim(declared);
    parts.forEach((part, i) => nc.publish(call.inbox, call.piece(i + 1, i === parts.length - 1 ? part.subarray(0, 10) : part)));
    assert.match(await call.refusal(), /its arguments were refused: \d+ bytes in \d+ pieces arrived, \d+ in \d+ were declared/);
    call.close();
  });

  it('a body whose pieces are not the one declared (another of the same size) is refused by its digest', async () => {
    const body = Buffer.from(JSON.stringify({ text: 'u'.repeat(3000) }));
    const { declared } = declare(body, 1000);
    const call = await claim(declared);
    const { parts } = declare(Buffer.from(JSON.stringify({ text: 't'.repeat(3000) })), 1000);
    parts.forEach((part, i) => nc.publish(call.inbox, call.piece(i + 1, part)));
    assert.match(await call.refusal(), /SHA-256 differs/);
    call.close();
  });

  it('the assembly alone: declared or not, never more than allowed', () => {
    const assembly = new BodyAssembly();
    assert.equal(assembly.add(Buffer.from('abc')).state, 'more');
    const { declared } = splitBody(Buffer.from('abcd'), 2);
    assert.equal(assembly.finish(declared).state, 'refused');
    const exact = new BodyAssembly(declared);
    assert.equal(exact.add(Buffer.from('ab')).state, 'more');
    const whole = exact.add(Buffer.from('cd'));
    assert.equal(whole.state, 'whole');
  });
});
