import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import type { FetchHandler } from '../shared/types.js'
import { serveNode } from './node.js'

/**
 * A Fastify plugin in front of one handler of `createUeditorServer`:
 * `app.register(ueditorFastify(ue.editor), { prefix: '/ueditor' })`. It is encapsulated: inside
 * it, every content type is left unparsed (the core streams and limits bodies itself), while
 * the rest of the app keeps its own parsers. The `authorize` hook gets
 * `{ framework: 'fastify', request, user: request.user }`.
 */
export function ueditorFastify(handler: FetchHandler): FastifyPluginAsync {
  return async (fastify) => {
    fastify.removeAllContentTypeParsers()
    fastify.addContentTypeParser('*', (_request, _payload, done) => done(null))
    const route = async (request: FastifyRequest, reply: FastifyReply) => {
      reply.hijack()
      await serveNode(handler, request.raw, reply.raw, {
        host: {
          framework: 'fastify',
          request,
          user: (request as FastifyRequest & { user?: unknown }).user,
        },
      })
    }
    fastify.all('/', route)
    fastify.all('/*', route)
  }
}
