// An existing Fastify app that adds the editor backend:
// `UEDITOR_AUTH=none node examples/dist/fastify/app.js`.
// UEDITOR_AUTH=none lets anyone who can reach it upload, for a trial on this machine; without
// it, or an auth setting (docs/auth.md), uploads are refused (UE_AUTH_NOT_CONFIGURED).
import { createUeditorServer } from '@ueditor-backend/server'
import { ueditorFastify } from '@ueditor-backend/server/fastify'
import Fastify from 'fastify'

const ue = await createUeditorServer()
const app = Fastify()

// One plugin registers every path the editor is told about (endpoint, files, formula images,
// materials, loaders). It is encapsulated: it leaves bodies unparsed on its own routes only, so
// the app's routes keep Fastify's JSON parser.
await app.register(ueditorFastify(ue))

app.post('/api/echo', async (request) => request.body)
app.addHook('onClose', () => ue.close())

const url = await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' })
console.log(`listening on ${url}`)
process.once('SIGTERM', () => void app.close())
