import assert from 'node:assert/strict'
import { blob, png } from '../helpers/fixtures.js'
import { type Runtime, startRuntimeHost } from '../helpers/runtimes.js'
import { describe, test } from '../helpers/test.js'

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47])

for (const runtime of ['bun', 'deno'] satisfies Runtime[]) {
  describe(`ue.fetch behind ${runtime === 'bun' ? 'Bun.serve' : 'Deno.serve'}`, () => {
    test('answers the config, stores an upload, serves and lists it, and the client address reaches the limits', async (t) => {
      const base = await startRuntimeHost(t, runtime, {
        // The forwarded addresses below show a proxy: without auth that takes saying so.
        auth: { mode: 'none' },
        limits: { uploadsPerMinute: 2, minFreeBytes: 0 },
        http: { trustProxy: ['127.0.0.1'] },
      })
      if (!base) return
      const editor = `${base}/ueditor`
      const config = (await (await fetch(`${editor}?action=config`)).json()) as Record<
        string,
        unknown
      >
      assert.equal(config.imageActionName, 'image')

      /** `padding`: bytes after the image, so a refusal comes while the body is still being sent. */
      const upload = async (client: string, padding = 0) => {
        const form = new FormData()
        const bytes = Buffer.concat([png(8, 8), Buffer.alloc(padding)])
        form.append('upfile', blob(bytes, 'image/png'), 'a.png')
        const res = await fetch(`${editor}?action=image`, {
          method: 'POST',
          body: form,
          headers: { 'X-Forwarded-For': client },
        })
        return (await res.json()) as { state: string; code?: string; url?: string }
      }
      const first = await upload('203.0.113.7')
      assert.equal(first.state, 'SUCCESS', JSON.stringify(first))
      const stored = await fetch(`${base}${first.url}`)
      assert.equal(stored.status, 200)
      assert.equal(stored.headers.get('content-type'), 'image/png')
      assert.deepEqual(Buffer.from(await stored.arrayBuffer()).subarray(0, 4), PNG_SIGNATURE)
      const listing = (await (
        await fetch(`${editor}?action=listImage&start=0&size=10`)
      ).json()) as { list: { url: string }[] }
      assert.deepEqual(
        listing.list.map((entry) => entry.url),
        [first.url],
      )

      // The runtime's peer address came through: the forwarded client is counted, per client.
      // The refusal is read by a client still sending a megabyte (the runtime's connection).
      assert.equal((await upload('203.0.113.7')).state, 'SUCCESS')
      assert.equal((await upload('203.0.113.7', 1_000_000)).code, 'UE_RATE_LIMITED')
      assert.equal((await upload('203.0.113.8')).state, 'SUCCESS')
      assert.equal((await fetch(`${base}/healthz`)).status, 200)
    })
  })
}
