import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { GIF, HTML, MP4, PDF, png } from '../helpers/fixtures.js'
import { assertStillServes, expectRefused, postBody, snapshot } from '../helpers/hostile.js'
import { imageInfo, solid } from '../helpers/images.js'
import { multipartBody } from '../helpers/multipart.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

const SANDBOX = "default-src 'none'; sandbox"

function send(srv: TestServer, action: string, field: string, name: string, value: Buffer) {
  const { body, contentType } = multipartBody([{ name: field, filename: name, value }])
  return postBody(srv, action, body, contentType)
}

/** Uploads a polyglot that must be accepted only in re-encoded form; returns the stored bytes. */
async function storedBytes(
  srv: TestServer,
  action: string,
  field: string,
  name: string,
  value: Buffer,
) {
  const before = await snapshot(srv)
  const res = await send(srv, action, field, name, value)
  const up = (await res.json()) as { state: string; url: string; size: number }
  assert.equal(up.state, 'SUCCESS', name)
  const after = await srv.storedFiles()
  assert.equal(after.length, before.stored.length + 1)
  const key = up.url.replace(/^\/uploads\//, '')
  const bytes = await readFile(join(srv.storageRoot(), key))
  assert.equal(bytes.length, up.size)
  return bytes
}

describe('S5: content that disagrees with its extension, and polyglots', () => {
  test('HTML named .jpg, a PNG named .jpg and HTML named .mp4 are refused', async (t) => {
    const srv = await startTestServer(t)
    await expectRefused(srv, () => send(srv, 'image', 'upfile', 'a.jpg', HTML), {
      codes: ['UE_CONTENT_MISMATCH'],
    })
    await expectRefused(srv, () => send(srv, 'image', 'upfile', 'a.jpg', png()), {
      codes: ['UE_CONTENT_MISMATCH'],
    })
    await expectRefused(srv, () => send(srv, 'video', 'file', 'a.mp4', HTML), {
      codes: ['UE_CONTENT_MISMATCH'],
    })
  })

  test('GIF89a followed by script is not a decodable image and is refused', async (t) => {
    const srv = await startTestServer(t)
    const fake = Buffer.from('GIF89a/*<script>alert(document.domain)</script>*/=1;', 'latin1')
    await expectRefused(srv, () => send(srv, 'image', 'upfile', 'a.gif', fake), {
      codes: ['UE_CONTENT_MISMATCH'],
    })
  })

  test('a valid GIF with a script appended is stored re-encoded, without the script', async (t) => {
    const srv = await startTestServer(t)
    const payload = Buffer.from('<script>alert(document.domain)</script>')
    const bytes = await storedBytes(srv, 'image', 'upfile', 'a.gif', Buffer.concat([GIF, payload]))
    assert.ok(!bytes.includes(payload))
    assert.equal((await imageInfo(bytes)).format, 'gif')
    await assertStillServes(srv)
  })

  test('a PNG with a ZIP holding PHP appended is stored re-encoded, without the archive', async (t) => {
    const srv = await startTestServer(t)
    const zip = Buffer.concat([
      Buffer.from([0x50, 0x4b, 0x03, 0x04]),
      Buffer.from('shell.php<?php system($_GET["c"]); ?>'),
      Buffer.from([0x50, 0x4b, 0x05, 0x06]),
      Buffer.alloc(18),
    ])
    const bytes = await storedBytes(
      srv,
      'image',
      'upfile',
      'a.png',
      Buffer.concat([png(3, 3), zip]),
    )
    assert.ok(!bytes.includes(Buffer.from([0x50, 0x4b, 0x03, 0x04])))
    assert.ok(!bytes.includes('<?php'))
    assert.deepEqual((await imageInfo(bytes)).width, 3)
    await assertStillServes(srv)
  })

  test('a JPEG with HTML appended, sent as an attachment, is stored without the HTML', async (t) => {
    const srv = await startTestServer(t)
    const jpeg = await solid(4, 4).jpeg().toBuffer()
    const bytes = await storedBytes(srv, 'file', 'file', 'a.jpg', Buffer.concat([jpeg, HTML]))
    assert.ok(!bytes.includes('<script>'))
    await assertStillServes(srv)
  })
})

describe('S6: active content (SVG, XML, HTML, XHTML, SWF)', () => {
  const SVG = Buffer.from(
    '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(2)</script></svg>',
  )
  const XML = Buffer.from(
    '<x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(document.domain)</x:script>',
  )
  const XHTML = Buffer.from(
    '<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>',
  )
  const SWF = Buffer.concat([
    Buffer.from('FWS', 'latin1'),
    Buffer.from([10, 0x40, 0, 0, 0]),
    randomBytes(56),
  ])
  const files = [
    ['x.svg', SVG],
    ['x.xml', XML],
    ['x.html', HTML],
    ['x.xhtml', XHTML],
    ['x.swf', SWF],
  ] as const

  test('are refused by default, whatever the action', async (t) => {
    const srv = await startTestServer(t)
    for (const [name, value] of files) {
      for (const [action, field] of [
        ['file', 'file'],
        ['image', 'upfile'],
      ] as const)
        await expectRefused(srv, () => send(srv, action, field, name, value), {
          codes: ['UE_TYPE_NOT_ALLOWED'],
          label: `${action} ${name}`,
        })
    }
  })

  test('when an operator allows them they are served as sandboxed attachments, never as markup', async (t) => {
    const srv = await startTestServer(t, {
      security: { allowActiveContent: true },
      editor: { fileAllowFiles: ['.svg', '.xml', '.html', '.xhtml', '.swf', '.pdf'] },
    })
    for (const [name, value] of [...files, ['x.pdf', PDF] as const]) {
      const res = await send(srv, 'file', 'file', name, value)
      const up = (await res.json()) as { state: string; url: string; code?: string }
      if (up.state !== 'SUCCESS') {
        // Bytes that sniff as another type (a SWF signature) are still refused: also safe.
        assert.equal(up.code, 'UE_CONTENT_MISMATCH', name)
        continue
      }
      const served = await fetch(`${srv.url}${up.url}`)
      assert.equal(served.status, 200, name)
      assert.doesNotMatch(
        served.headers.get('content-type') ?? '',
        /html|xml|svg|javascript|flash/,
        name,
      )
      assert.match(served.headers.get('content-disposition') ?? '', /^attachment/, name)
      assert.equal(served.headers.get('content-security-policy'), SANDBOX, name)
      assert.equal(served.headers.get('x-content-type-options'), 'nosniff', name)
    }
    await assertStillServes(srv)
  })
})

describe('S7: text and unknown types are never sniffed into markup', () => {
  test('a .txt that is really HTML and a .zip that is not an archive are refused', async (t) => {
    const srv = await startTestServer(t)
    await expectRefused(srv, () => send(srv, 'file', 'file', 'a.txt', HTML), {
      codes: ['UE_CONTENT_MISMATCH'],
    })
    await expectRefused(srv, () => send(srv, 'file', 'file', 'a.zip', randomBytes(512)), {
      codes: ['UE_CONTENT_MISMATCH'],
    })
    await expectRefused(srv, () => send(srv, 'file', 'file', 'a.mp4', Buffer.concat([HTML, MP4])), {
      codes: ['UE_CONTENT_MISMATCH'],
    })
  })

  test('plain text is served as text/plain attachment with nosniff', async (t) => {
    const srv = await startTestServer(t)
    const res = await send(srv, 'file', 'file', 'a.txt', Buffer.from('hello <b> world\n'))
    const up = (await res.json()) as { state: string; url: string }
    assert.equal(up.state, 'SUCCESS')
    const served = await fetch(`${srv.url}${up.url}`)
    assert.equal(served.headers.get('content-type'), 'text/plain; charset=utf-8')
    assert.match(served.headers.get('content-disposition') ?? '', /^attachment/)
    assert.equal(served.headers.get('x-content-type-options'), 'nosniff')
    assert.equal(served.headers.get('content-security-policy'), SANDBOX)
  })
})
