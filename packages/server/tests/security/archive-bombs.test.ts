import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { entityBomb, zipBomb } from '../helpers/archives.js'
import { blob } from '../helpers/fixtures.js'
import { assertStillServes, expectRefused, snapshot } from '../helpers/hostile.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

function send(srv: TestServer, name: string, bytes: Buffer) {
  const form = new FormData()
  form.append('file', blob(bytes), name)
  return fetch(srv.action('file'), { method: 'POST', body: form })
}

describe('S12: archive and XML bombs', () => {
  test('a zip bomb is stored as opaque bytes, never expanded, and served as an attachment', async (t) => {
    const srv = await startTestServer(t)
    // 256 MiB of zeros in a few hundred KiB; nested 42.zip layers change nothing here.
    const bomb = zipBomb('zeros.bin', 256 * 1024 * 1024)
    assert.ok(bomb.length < 1024 * 1024)
    for (const name of ['bomb.zip', 'bomb.docx']) {
      const before = await snapshot(srv)
      const up = (await (await send(srv, name, bomb)).json()) as {
        state: string
        url: string
        size: number
      }
      assert.equal(up.state, 'SUCCESS', name)
      assert.equal(up.size, bomb.length)
      const stored = await readFile(join(srv.storageRoot(), up.url.replace(/^\/uploads\//, '')))
      assert.deepEqual(stored, bomb)
      assert.equal((await srv.storedFiles()).length, before.stored.length + 1)
      assert.deepEqual(await srv.tempFiles(), [])
      const served = await fetch(`${srv.url}${up.url}`)
      assert.match(served.headers.get('content-disposition') ?? '', /^attachment/)
      assert.equal((await served.arrayBuffer()).byteLength, bomb.length)
    }
    await assertStillServes(srv)
  })

  test('an SVG or XML entity bomb is refused by default and never parsed when allowed', async (t) => {
    const srv = await startTestServer(t)
    for (const [action, field, name] of [
      ['image', 'upfile', 'lol.svg'],
      ['file', 'file', 'lol.svg'],
      ['file', 'file', 'lol.xml'],
    ] as const) {
      const form = new FormData()
      form.append(field, blob(entityBomb()), name)
      await expectRefused(srv, () => fetch(srv.action(action), { method: 'POST', body: form }), {
        codes: ['UE_TYPE_NOT_ALLOWED'],
        label: `${action} ${name}`,
      })
    }
    const open = await startTestServer(t, {
      security: { allowActiveContent: true },
      editor: { fileAllowFiles: ['.svg'] },
    })
    const bomb = entityBomb()
    const up = (await (await send(open, 'lol.svg', bomb)).json()) as {
      state: string
      url: string
      code?: string
    }
    if (up.state === 'SUCCESS') {
      const served = await fetch(`${open.url}${up.url}`)
      assert.deepEqual(Buffer.from(await served.arrayBuffer()), bomb)
      assert.match(served.headers.get('content-disposition') ?? '', /^attachment/)
    } else assert.equal(up.code, 'UE_CONTENT_MISMATCH')
    await assertStillServes(open)
  })
})
