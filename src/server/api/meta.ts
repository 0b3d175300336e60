/** The server's own routes: whether it is up, and whether it can do its work (platform/health.ts). */
import { z } from 'zod';

const HealthPart = z.object({ status: z.enum(['ok', 'unavailable', 'not_used']), reason: z.string().optional() });

export const Health = z.object({
  ok: z.boolean().describe('true when every part is there (status ok).'),
  status: z.enum(['ok', 'degraded']),
  version: z.string(),
  store: HealthPart,
  bus: HealthPart.describe('The NATS connection (not_used without --nats).'),
  fleet: z.object({
    status: z.enum(['ok', 'no_worker', 'unknown', 'local']),
    workers: z.int().optional(),
    slots: z.int().optional(),
    busy: z.int().optional(),
    reason: z.string().optional(),
  }).describe("The live workers of this replica's protocol, as their presence on the bus says (local without --nats)."),
  reasons: z.array(z.string()).describe('One line per missing part.'),
});
export type Health = z.infer<typeof Health>;
