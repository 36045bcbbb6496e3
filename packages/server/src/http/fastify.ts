import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { FetchHandler } from '../shared/types.js'
import { isMountableServer, isMounted, type MountableServer } from './mounts.js'
import { serveNode } from './node.js'

/**
 * A Fastify plugin for the editor backend. It is encapsulated: inside it, every content type is
 * left unparsed (the core streams and limits bodies itself), while the rest of the app keeps its
 * own parsers. The `authorize` hook gets `{ framework: 'fastify', request, user: request.user }`.
 *
 * - `app.register(ueditorFastify(ue))`, with the server itself and no prefix: registers a route
 *   for every path it serves at the configured routes (`ue.mounts`). A path the app declared
 *   before keeps the app's route.
 * - `app.register(ueditorFastify(ue.editor), { prefix: '/ueditor' })`, with one handler: answers
 *   the prefix and every path under it.
 */
export function ueditorFastify(target: FetchHandler | MountableServer): FastifyPluginAsync {
  const server = isMountableServer(target) ? target : undefined
  const handler = server ? server.fetch : (target as FetchHandler)
  return async (fastify) => {
    fastify.removeAllContentTypeParsers()
    fastify.addContentTypeParser('*', (_request, _payload, done) => done(null))
    const route = async (request: FastifyRequest, reply: FastifyReply) => {
      // The router matches `/uploads/../x` as written; the handlers would resolve it elsewhere.
      if (server && !isMounted(server.mounts, request.raw.url ?? '/')) return reply.callNotFound()
      reply.hijack()
      await serveNode(handler, request.raw, reply.raw, {
        host: {
          framework: 'fastify',
          request,
          user: (request as FastifyRequest & { user?: unknown }).user,
        },
      })
    }
    const paths = server
      ? [...server.mounts.exact, ...server.mounts.prefixes.map((p) => `${p}*`)]
      : ['/', '/*']
    for (const url of paths) {
      if (server && declared(fastify, url)) continue
      fastify.all(url, route)
    }
  }
}

/**
 * Whether a GET of `url` already has a route: the app's own (which it keeps), or ours where the
 * app ignores trailing slashes and `/ueditor` already covers `/ueditor/`. `findRoute` (Fastify
 * 4.23+) matches as requests are matched; `hasRoute` only finds the exact declaration.
 */
function declared(fastify: FastifyInstance, url: string): boolean {
  if (typeof fastify.findRoute === 'function')
    return fastify.findRoute({ url, method: 'GET' }) !== null
  return fastify.hasRoute({ url, method: 'GET' })
}
