/**
 * The `subako_http` bridge the volume races attack: one volume at /volume/tmp, a loopback HTTPS server
 * under a test name, private destinations allowed (the server is on loopback), no credentials.
 */
import { createHttpBridge } from '../../../src/egress/index.js';
import { mapLookup } from '../../egress/helpers/servers.js';
import { makeTestCa } from '../../egress/helpers/test-ca.js';

export const RACE_HOST = 'api.example.test';

export function volumeBridge(tmp: string, port: number) {
  return createHttpBridge({
    policy: { allow: [`${RACE_HOST}:${port}`], grants: [], privateDestinations: 'allow' },
    credentials: [],
    volume: [{ guestPath: '/volume/tmp', hostPath: tmp }],
    ca: makeTestCa().ca,
    log: [],
    lookup: mapLookup({ [RACE_HOST]: '127.0.0.1' }),
  });
}
