import assert from 'node:assert/strict'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { HTML, png } from '../helpers/fixtures.js'
import { assertStillServes, expectRefused, postBody, snapshot } from '../helpers/hostile.js'
import { solid } from '../helpers/images.js'
import { multipartBody, type Part } from '../helpers/multipart.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { describe, test } from '../helpers/test.js'

const PHP = Buffer.from('<?php system($_GET["c"]); ?>')
const SERVER_KEY = /^\/uploads\/(image|file)\/\d{8}\/\d{13}[0-9a-z]{24}\.(png|jpg)$/

function sendParts(srv: TestServer, action: string, parts: Part[]) {
  const { body, contentType } = multipartBody(parts)
  return postBody(srv, action, body, contentType)
}

async function accepted(srv: TestServer, action: string, parts: Part[]) {
  const res = await sendParts(srv, action, parts)
  const text = await res.text()
  const up = JSON.parse(text) as { state: string; url: string; original: string; title: string }
  assert.equal(up.state, 'SUCCESS', text)
  return { up, text }
}

describe('S1: executable and disguised extensions', () => {
  const names = [
    'a.aspx',
    'a.php5',
    'a.pHp',
    'a.jpg.php',
    'a.php\0.jpg',
    'a.jpg.',
    'a.jpg ',
    '.htaccess',
    'web.config',
    'a',
    'a.php.jpg',
    'a.asp;.jpg',
  ]

  for (const [action, field] of [
    ['image', 'upfile'],
    ['file', 'file'],
  ] as const) {
    test(`a web shell is refused by the ${action} action under every name trick`, async (t) => {
      const srv = await startTestServer(t)
      for (const name of names)
        await expectRefused(
          srv,
          () => sendParts(srv, action, [{ name: field, filename: name, value: PHP }]),
          {
            codes: ['UE_TYPE_NOT_ALLOWED', 'UE_CONTENT_MISMATCH'],
            label: JSON.stringify(name),
          },
        )
    })
  }

  test('a real image under an executable or truncated name is refused', async (t) => {
    const srv = await startTestServer(t)
    for (const name of names.slice(0, 10))
      await expectRefused(
        srv,
        () => sendParts(srv, 'image', [{ name: 'upfile', filename: name, value: png() }]),
        {
          codes: ['UE_TYPE_NOT_ALLOWED'],
          label: JSON.stringify(name),
        },
      )
  })

  test('a real image whose name hides a script extension is stored under a random .jpg key', async (t) => {
    const srv = await startTestServer(t)
    const jpeg = await solid(4, 4).jpeg().toBuffer()
    for (const name of ['a.php.jpg', 'a.asp;.jpg', 'A.PHP.JPG']) {
      const { up } = await accepted(srv, 'image', [{ name: 'upfile', filename: name, value: jpeg }])
      assert.match(up.url, SERVER_KEY, name)
      assert.doesNotMatch(up.url, /php|asp/i)
    }
    for (const stored of await srv.storedFiles())
      assert.match(stored, /^image\/\d{8}\/[0-9a-z]+\.jpg$/)
    await assertStillServes(srv)
  })
})

describe('S3: traversal and odd characters in the client name', () => {
  test('traversal names are display text only: the key is server-made and stays under the root', async (t) => {
    const srv = await startTestServer(t)
    const names = [
      '../../../../tmp/x.png',
      '..\\..\\x.png',
      '%2e%2e%2fx.png',
      '．．／x.png',
      'a/b.png',
      'C:\\fakepath\\a.png',
      `${'长'.repeat(1000)}.png`,
      'a\r\nSet-Cookie: x=1.png',
      'quote".png',
      'semi;colon.png',
    ]
    for (const name of names) {
      const before = await snapshot(srv)
      const res = await sendParts(srv, 'image', [{ name: 'upfile', filename: name, value: png() }])
      const up = (await res.json()) as { state: string; url?: string; original?: string }
      if (up.state !== 'SUCCESS') {
        assert.equal((await snapshot(srv)).stored.length, before.stored.length, name)
        continue
      }
      assert.match(up.url ?? '', SERVER_KEY, name)
      const original = up.original ?? ''
      assert.doesNotMatch(original, /[/\\\r\n"<>]/, name)
      assert.ok(Buffer.byteLength(original) <= 255, name)
      const after = await srv.storedFiles()
      assert.equal(after.length, before.stored.length + 1, name)
    }
    for (const stored of await srv.storedFiles())
      assert.match(stored, /^image\/\d{8}\/[0-9a-z]+\.png$/)
    const top = (await readdir(srv.dataDir)).filter(
      (n) => !/^ueditor\.db(-wal|-shm|-journal)?$/.test(n),
    )
    assert.deepEqual(top.sort(), ['tmp', 'uploads'])
    await assertStillServes(srv)
  })

  test('a traversal name in filename* never reaches the storage path', async (t) => {
    const srv = await startTestServer(t)
    const res = await sendParts(srv, 'image', [
      {
        name: 'upfile',
        filename: 'x.png',
        extraDisposition: "filename*=UTF-8''..%2F..%2Fx.png",
        value: png(),
      },
    ])
    const up = (await res.json()) as { state: string; url: string; original: string }
    assert.equal(up.state, 'SUCCESS')
    assert.match(up.url, SERVER_KEY)
    assert.equal(up.original, 'x.png')
    for (const stored of await srv.storedFiles())
      assert.match(stored, /^image\/\d{8}\/[0-9a-z]+\.png$/)
  })
})

describe('S4: multipart differentials', () => {
  test('filename and filename* that disagree are never stored under the script name', async (t) => {
    const srv = await startTestServer(t)
    const parts: Part[] = [
      { name: 'upfile', filename: 'a.png', extraDisposition: "filename*=UTF-8''a.php", value: PHP },
    ]
    await expectRefused(srv, () => sendParts(srv, 'image', parts), {
      codes: ['UE_TYPE_NOT_ALLOWED', 'UE_CONTENT_MISMATCH'],
    })
    // One decoded name serves both the check and the record: the plain `filename`.
    const { up } = await accepted(srv, 'image', [{ ...(parts[0] as Part), value: png() }])
    assert.match(up.url, SERVER_KEY)
    assert.equal(up.original, 'a.png')
  })

  test('two file parts, the second one HTML, refuse the whole request', async (t) => {
    const srv = await startTestServer(t)
    await expectRefused(
      srv,
      () =>
        sendParts(srv, 'image', [
          { name: 'upfile', filename: 'a.png', value: png() },
          { name: 'upfile', filename: 'b.png', value: HTML },
        ]),
      { codes: ['UE_TOO_MANY_FILES'] },
    )
  })

  test('a file in both the configured field and the upfile alias is refused', async (t) => {
    const srv = await startTestServer(t, { editor: { imageFieldName: 'file' } })
    await expectRefused(
      srv,
      () =>
        sendParts(srv, 'image', [
          { name: 'file', filename: 'a.png', value: png() },
          { name: 'upfile', filename: 'b.png', value: png() },
        ]),
      { codes: ['UE_TOO_MANY_FILES'] },
    )
  })

  test('a file in a field the action does not read is not taken', async (t) => {
    const srv = await startTestServer(t)
    for (const field of ['evil', 'file', 'upfile[]', 'UPFILE'])
      await expectRefused(
        srv,
        () => sendParts(srv, 'image', [{ name: field, filename: 'a.png', value: png() }]),
        {
          codes: ['UE_FILE_MISSING'],
          label: field,
        },
      )
  })
})

describe('S8: names cannot be guessed or overwritten', () => {
  test('concurrent uploads of one name get distinct random keys and never overwrite', async (t) => {
    const srv = await startTestServer(t)
    const bodies = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        solid(4, 4, { r: i * 30, g: 0, b: 0 })
          .png()
          .toBuffer(),
      ),
    )
    const answers = await Promise.all(
      bodies.map(
        async (value) =>
          (await accepted(srv, 'image', [{ name: 'upfile', filename: 'same.png', value }])).up,
      ),
    )
    const randoms = answers.map((a) => /(\d{13})([0-9a-z]{24})\.png$/.exec(a.url)?.[2])
    assert.equal(new Set(randoms).size, 8)
    const first = answers[0]?.url.replace(/^\/uploads\//, '') ?? ''
    const servedFirst = Buffer.from(
      await (await fetch(`${srv.url}/uploads/${first}`)).arrayBuffer(),
    )
    assert.deepEqual(servedFirst, await readFile(join(srv.storageRoot(), first)))
    assert.equal((await srv.storedFiles()).length, 8)
  })
})
