// An existing Express app that adds the editor backend:
// `UEDITOR_AUTH=none node examples/dist/express/app.js`.
// UEDITOR_AUTH=none lets anyone who can reach it upload, for a trial on this machine; without
// it, or an auth setting (docs/auth.md), uploads are refused (UE_AUTH_NOT_CONFIGURED).
import { createUeditorServer } from '@ueditor-backend/server'
import { ueditorExpress } from '@ueditor-backend/server/express'
import express from 'express'

const ue = await createUeditorServer()
const app = express()

// The app's own auth runs first; the `authorize` hook can read `req.user` through `host.user`.
// One mount serves every path the editor is told about (endpoint, files, formula images,
// materials, loaders) and passes the rest on. It comes before any body parser: it streams the
// body itself.
app.use(ueditorExpress(ue))

// The rest of the app, with its parsers.
app.use(express.json())
app.post('/api/echo', (req, res) => {
  res.json(req.body)
})

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  const address = server.address()
  if (address && typeof address === 'object')
    console.log(`listening on http://127.0.0.1:${address.port}`)
})
process.once('SIGTERM', () => {
  server.close(() => void ue.close())
  server.closeIdleConnections()
})
