/** /v1/packages and /v1/skills: what a version, a package as a whole and a skill look like. */
import { z } from 'zod';
import { jsonObject, timestamp } from './shared.js';

/** A tool as its package declares it. */
export const PackageTool = z.object({
  name: z.string(),
  description: z.string().optional(),
  inputSchema: jsonObject,
  outputSchema: jsonObject.optional(),
  title: z.string().optional(),
  annotations: jsonObject.optional(),
});
export type PackageTool = z.infer<typeof PackageTool>;

export const PackageView = z.object({
  name: z.string(), version: z.string(), description: z.string(), digest: z.string(), created_at: timestamp,
  manifest: jsonObject, tools: z.array(PackageTool),
});
export type PackageView = z.infer<typeof PackageView>;

/** A package as a whole: its versions, oldest first, and the latest version with its tools. */
export const PackageSummaryView = z.object({
  name: z.string(), description: z.string(), latest_version: z.string(),
  versions: z.array(z.object({ version: z.string(), description: z.string(), digest: z.string(), created_at: timestamp })),
  tools: z.array(PackageTool),
});
export type PackageSummaryView = z.infer<typeof PackageSummaryView>;

export const SkillView = z.object({ name: z.string(), version: z.string(), description: z.string(), digest: z.string(), created_at: timestamp });
export type SkillView = z.infer<typeof SkillView>;
