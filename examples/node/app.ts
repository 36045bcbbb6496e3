// A plain node:http app that adds the editor backend: `node examples/dist/node/app.js`.
import { createServer } from 'node:http'
import { createUeditorServer } from '@ueditor-backend/server'
import { toNodeHandler } from '@ueditor-backend/server/node'

const ue = await createUeditorServer()
const editor = toNodeHandler(ue.editor)
const files = toNodeHandler(ue.files)
const materials = toNodeHandler(ue.materials)
const { routes } = ue.config
const under = (url: string, path: string) =>
  url === path || url.startsWith(`${path}/`) || url.startsWith(`${path}?`)

const server = createServer((req, res) => {
  const url = req.url ?? '/'
  if (under(url, routes.editor)) return editor(req, res)
  if (under(url, routes.files)) return files(req, res)
  if (under(url, routes.materials)) return materials(req, res)
  res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"app":"node"}')
})
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const address = server.address()
  if (address && typeof address === 'object')
    console.log(`listening on http://127.0.0.1:${address.port}`)
})
process.once('SIGTERM', () => {
  server.close(() => void ue.close())
  server.closeIdleConnections()
})
