// A plain node:http app that adds the editor backend:
// `UEDITOR_AUTH=none node examples/dist/node/app.js`.
// UEDITOR_AUTH=none lets anyone who can reach it upload, for a trial on this machine; without
// it, or an auth setting (docs/auth.md), uploads are refused (UE_AUTH_NOT_CONFIGURED).
import { createServer } from 'node:http'
import { createUeditorServer } from '@ueditor-backend/server'
import { toNodeHandler } from '@ueditor-backend/server/node'

const ue = await createUeditorServer()

// Every path the editor is told about (endpoint, files, formula images, materials, loaders) goes
// to the editor backend; every other request to the app.
const server = createServer(
  toNodeHandler(ue, (_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"app":"node"}')
  }),
)
server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const address = server.address()
  if (address && typeof address === 'object')
    console.log(`listening on http://127.0.0.1:${address.port}`)
})
process.once('SIGTERM', () => {
  server.close(() => void ue.close())
  server.closeIdleConnections()
})
