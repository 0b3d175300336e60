/**
 * An https origin a package's egress reaches, on loopback under the egress tests' CA, that records the
 * `authorization` header of every request: what the tests of per-user credentials look at. The CA file is what a
 * spawned server is given as NODE_EXTRA_CA_CERTS.
 */
import { writeFileSync } from 'node:fs';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { makeTestCa } from '../../egress/helpers/test-ca.js';
import { tempDir } from './harness.js';

export interface RecordingEgress {
  origin: string;
  caFile: string;
  /** Each request's `authorization` header, in order (undefined for a request without one). */
  seen: (string | undefined)[];
  close(): Promise<void>;
}

export async function startRecordingEgress(prefix: string): Promise<RecordingEgress> {
  const ca = makeTestCa();
  const caFile = join(tempDir(`${prefix}-ca-`), 'ca.pem');
  writeFileSync(caFile, ca.ca);
  const seen: (string | undefined)[] = [];
  const server = createHttpsServer({ cert: ca.cert, key: ca.key }, (req, res) => {
    seen.push(req.headers.authorization);
    res.end('{"ok":true}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    origin: `https://localhost:${(server.address() as AddressInfo).port}`,
    caFile,
    seen,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
