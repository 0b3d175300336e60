/** The server's own routes: whether it is up. */
import { z } from 'zod';

export const Health = z.object({ ok: z.boolean(), version: z.string() });
export type Health = z.infer<typeof Health>;
