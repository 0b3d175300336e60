/** /v1/packages and /v1/skills: bundles in, immutable versions out. */
import type { z } from 'zod';
import { route, type Route } from '../route.js';
import type { Platform, Page, PageRequest } from '../../platform/index.js';
import { PackageSummaryView, PackageView, SkillView, pageOf } from '../api/index.js';
import { PAGE_QUERY, errorResponse as error } from '../schemas.js';
import { mapPage, packageSummaryView, packageView, pageRequest, skillView } from '../views.js';

export const BUNDLE_CONTENT_TYPES = ['application/gzip', 'application/x-gzip', 'application/x-tar+gzip', 'application/octet-stream'];

/** What the platform offers for a resource uploaded as bundles with immutable versions. */
interface VersionedBundles<R> {
  upload(archive: Uint8Array): Promise<{ record: R; created: boolean }>;
  list(page: PageRequest): Promise<Page<R>>;
  get(name: string, version: string): Promise<R>;
  delete(name: string, version: string): Promise<void>;
}

interface BundleResource<R, View extends z.ZodType> {
  /** `package` or `skill`: names the paths (/v1/packages), operation ids (uploadPackage) and the tag. */
  noun: 'package' | 'skill';
  /** What a version looks like in the answers; `view` makes it of a record. */
  schema: View;
  service: (platform: Platform) => VersionedBundles<R>;
  view: (record: R) => z.input<View>;
  uploadSummary: string;
  listSummary: string;
  getSummary: string;
  refusedDescription: string;
}

/** The four routes of a resource uploaded as bundles with immutable versions: upload, list, get, delete. */
function bundleResourceRoutes<R, View extends z.ZodType>(resource: BundleResource<R, View>, maxBundleBytes: number): Route[] {
  const { noun, schema } = resource;
  const Noun = noun[0].toUpperCase() + noun.slice(1);
  const base = `/v1/${noun}s`;
  const one = `${base}/{name}/versions/{version}`;
  const tag = `${noun}s`;
  const { view } = resource;
  return [
    route({
      method: 'POST', path: base, operationId: `upload${Noun}`, tag, auth: 'api_key', summary: resource.uploadSummary,
      body: {
        kind: 'binary', contentTypes: BUNDLE_CONTENT_TYPES, maxBytes: maxBundleBytes,
        description: `A .tar.gz of the ${noun} directory, as \`subako pack <dir>\` makes it.`,
      },
      responses: {
        201: { description: 'Stored as a new version.', schema },
        200: { description: 'The same bytes were already stored under this version.', schema },
        400: error('The bundle is unsafe or unreadable.'), 409: error('The version exists with other contents.'),
        413: error('The bundle is too large.'), 422: error(resource.refusedDescription),
      },
      async handler({ platform, body }) {
        const { record, created } = await resource.service(platform).upload(body);
        return { status: created ? 201 : 200, body: view(record) };
      },
    }),
    route({
      method: 'GET', path: base, operationId: `list${Noun}s`, tag, auth: 'api_key', summary: resource.listSummary, query: PAGE_QUERY,
      responses: { 200: { description: `A page of ${noun}s.`, schema: pageOf(schema) } },
      async handler({ platform, query }) {
        return { status: 200, body: mapPage(await resource.service(platform).list(pageRequest(query)), view) };
      },
    }),
    route({
      method: 'GET', path: one, operationId: `get${Noun}`, tag, auth: 'api_key', summary: resource.getSummary,
      responses: { 200: { description: `The ${noun} version.`, schema }, 404: error(`No such ${noun} version.`) },
      async handler({ platform, params }) {
        return { status: 200, body: view(await resource.service(platform).get(params.name, params.version)) };
      },
    }),
    route({
      method: 'DELETE', path: one, operationId: `delete${Noun}`, tag, auth: 'api_key',
      summary: `Delete a ${noun} version; refused while an agent version uses it.`,
      responses: { 204: { description: 'Deleted.' }, 404: error(`No such ${noun} version.`), 409: error('An agent version uses it.') },
      async handler({ platform, params }) {
        await resource.service(platform).delete(params.name, params.version);
        return { status: 204 };
      },
    }),
  ];
}

/** GET /v1/packages/{name}: the package as a whole, its versions and what its latest version offers. */
const packageSummaryRoute: Route = route({
  method: 'GET', path: '/v1/packages/{name}', operationId: 'getPackageSummary', tag: 'packages', auth: 'api_key',
  summary: 'Get a package: its versions, oldest first, and the latest version\'s tools and their schemas.',
  responses: {
    200: { description: 'The package.', schema: PackageSummaryView },
    404: error('No such package.'),
  },
  async handler({ platform, params }) {
    const { latest, versions } = await platform.packages.summary(params.name);
    return { status: 200, body: packageSummaryView(latest, versions) };
  },
});

export function packageRoutes(maxBundleBytes: number): Route[] {
  return [
    packageSummaryRoute,
    ...bundleResourceRoutes({
      noun: 'package', schema: PackageView, service: (p) => p.packages, view: packageView,
      uploadSummary: 'Upload a package bundle: checks and discovery run; their problems come back as the error.',
      listSummary: 'List package versions, by name then version order.',
      getSummary: 'Get a package version ("latest" for the newest) with its tools and their schemas.',
      refusedDescription: 'The package failed its checks or discovery.',
    }, maxBundleBytes),
    ...bundleResourceRoutes({
      noun: 'skill', schema: SkillView, service: (p) => p.skills, view: skillView,
      uploadSummary: 'Upload a skill bundle (SKILL.md with name and description front matter at its root).',
      listSummary: 'List skill versions.',
      getSummary: 'Get a skill version ("latest" for the newest).',
      refusedDescription: 'SKILL.md is missing or its front matter is incomplete.',
    }, maxBundleBytes),
  ];
}
