// An existing Koa app that adds the editor backend:
// `UEDITOR_AUTH=none node examples/dist/koa/app.js`.
// UEDITOR_AUTH=none lets anyone who can reach it upload, for a trial on this machine; without
// it, or an auth setting (docs/auth.md), uploads are refused (UE_AUTH_NOT_CONFIGURED).
import { createUeditorServer } from '@ueditor-backend/server'
import { ueditorKoa } from '@ueditor-backend/server/koa'
import Koa from 'koa'

const ue = await createUeditorServer()
const app = new Koa()

// One mount serves every path the editor is told about (endpoint, files, formula images,
// materials, loaders) and passes the rest on. Mounted before any body parser (koa-bodyparser
// and the like); `ctx.state.user` set by the app's auth earlier reaches the `authorize` hook as
// `host.user`.
app.use(ueditorKoa(ue))

app.use(async (ctx) => {
  ctx.body = { app: 'koa' }
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
