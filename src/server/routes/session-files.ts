/**
 * /v1/sessions/{id}/files: a read-only browser of the session's /volume/tmp (platform/volume-browser.ts walks
 * every path with the confined resolver). A file's bytes come as an attachment of type octet-stream, never
 * as something a browser would render or run: a guest wrote them.
 */
import { z } from 'zod';
import { rawRoute, route, type Route } from '../route.js';
import { FileListing } from '../api/index.js';
import { errorResponse as error } from '../schemas.js';

const PATH_QUERY = { path: { type: 'string', maxLength: 4096, description: 'A path under /volume/tmp (empty: its root).' } } as const;

export function sessionFileRoutes(): Route[] {
  return [
    route({
      method: 'GET', path: '/v1/sessions/{id}/files', operationId: 'listSessionFiles', tag: 'sessions', auth: 'api_key_or_session',
      summary: 'List a directory of the session\'s /volume/tmp (read-only; links are shown as links, never followed).', query: PATH_QUERY,
      responses: {
        200: { description: 'The directory\'s entries, by name (at most 1,000; truncated says whether more exist).', schema: FileListing },
        404: error('No such session or directory.'), 422: error('The path goes through a link, or is not a directory.'),
      },
      async handler({ platform, params, query }) {
        return { status: 200, body: await platform.tmpFiles.list(params.id, query.path ?? '') };
      },
    }),
    rawRoute({
      method: 'GET', path: '/v1/sessions/{id}/files/content', operationId: 'readSessionFile', tag: 'sessions', auth: 'api_key_or_session', raw: true,
      summary: 'A file of the session\'s /volume/tmp (at most 8 MiB), as an attachment.', query: { path: { ...PATH_QUERY.path, minLength: 1 } },
      responses: {
        200: { description: 'The file\'s bytes.', contentType: 'application/octet-stream', schema: z.string() },
        404: error('No such session or file.'), 422: error('The path is a link, a directory, or too large.'),
      },
      async handler({ platform, params, query, res }) {
        const bytes = await platform.tmpFiles.read(params.id, query.path ?? '');
        res.writeHead(200, {
          'content-type': 'application/octet-stream', 'content-length': bytes.length, 'content-disposition': 'attachment',
          'x-content-type-options': 'nosniff', 'content-security-policy': "default-src 'none'; sandbox", 'cache-control': 'no-store',
        });
        res.end(bytes);
        return null;
      },
    }),
  ];
}
