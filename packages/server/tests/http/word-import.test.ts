import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { convertsOffline, findSoffice } from '../../src/images/soffice.js'
import { sofficeHasWriter } from '../../src/shared/soffice-path.js'
import { compoundFile } from '../helpers/archives.js'
import { docx, drawing, IMAGE_REL, NS } from '../helpers/docx.js'
import { blob, png } from '../helpers/fixtures.js'
import { fakeLibreOffice, INSTALL_LIBREOFFICE, officeFile, redEmf } from '../helpers/libreoffice.js'
import { startTestServer, type TestServer } from '../helpers/start-server.js'
import { after, before, describe, test } from '../helpers/test.js'

const FOUND = findSoffice('soffice')
/** LibreOffice with Writer, which both makes the test documents and imports `.doc`. */
const SOFFICE = FOUND !== null && sofficeHasWriter(FOUND) ? FOUND : null
const INSTALL = INSTALL_LIBREOFFICE

interface Stored {
  state: string
  url: string
  type: string
}

interface Answer {
  state: string
  code?: string
  html?: string
  files?: Stored[]
  dropped?: number
}

async function importWord(
  srv: TestServer,
  bytes: Buffer,
  name: string,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const form = new FormData()
  form.append('upfile', blob(bytes), name)
  const res = await fetch(srv.action('wordimport'), { method: 'POST', body: form, headers })
  return (await res.json()) as Answer
}

/** A page with a heading, formatted text, a link, a list, a table, two PNGs and an EMF. */
function articleHtml(emf: Buffer): string {
  const data = (mime: string, bytes: Buffer) => `data:${mime};base64,${bytes.toString('base64')}`
  return `<html><body><h1>Quarterly report</h1>
<p>Some <b>bold</b>, <i>italic</i> and <u>underlined</u> text with <a href="https://example.com/x">a link</a>.</p>
<ul><li>first item</li><li>second item</li></ul>
<table border="1"><tr><td>cell one</td><td>cell two</td></tr><tr><td>cell three</td><td>cell four</td></tr></table>
<p><img src="${data('image/png', png(40, 20, { noise: true }))}" width="40" height="20">
<img src="${data('image/png', png(30, 30, { noise: true }))}" width="30" height="30">
<img src="${data('image/x-emf', emf)}" width="200" height="100"></p></body></html>`
}

/** A loopback HTTP server that counts the requests it gets. */
async function watchServer(): Promise<{ url: string; hits: () => number; close(): Promise<void> }> {
  let hits = 0
  const server = createServer((_req, res) => {
    hits++
    res.writeHead(200, { 'content-type': 'image/png' }).end(png(4, 4))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    hits: () => hits,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  }
}

async function nothingStored(srv: TestServer): Promise<void> {
  assert.deepEqual(await srv.storedFiles(), [])
  const listed = (await (await fetch(srv.action('listImage', 'start=0&size=100'))).json()) as {
    list?: unknown[]
  }
  assert.equal(listed.list?.length ?? 0, 0)
}

describe('Word import', () => {
  if (SOFFICE === null)
    test('without LibreOffice the tests say what to install', (t) => {
      if (process.env.CI === 'true') assert.fail(INSTALL)
      t.skip(INSTALL)
    })

  describe('documents made by LibreOffice', { skip: SOFFICE === null ? INSTALL : false }, () => {
    let dir = ''
    const made: { docx: Buffer; doc: Buffer } = { docx: Buffer.alloc(0), doc: Buffer.alloc(0) }
    before(
      async () => {
        dir = await mkdtemp(join(tmpdir(), 'ueditor-word-'))
        const html = articleHtml((await redEmf(dir, SOFFICE as string)).emf)
        made.docx = await officeFile(dir, html, 'docx', SOFFICE as string)
        made.doc = await officeFile(dir, html, 'doc', SOFFICE as string)
      },
      { timeout: 120_000 },
    )
    after(() => rm(dir, { recursive: true, force: true }))

    async function importsWhole(srv: TestServer, bytes: Buffer, name: string) {
      const answer = await importWord(srv, bytes, name)
      assert.equal(answer.state, 'SUCCESS', JSON.stringify(answer))
      const html = answer.html ?? ''
      assert.match(html, /<h1[^>]*>Quarterly report<\/h1>/)
      assert.match(html, /<table[\s\S]*cell one[\s\S]*cell four[\s\S]*<\/table>/)
      assert.match(html, /<(ul|ol)[^>]*>\s*<li[^>]*>[\s\S]*first item[\s\S]*second item/)
      assert.match(html, /<strong>bold<\/strong>/)
      assert.match(html, /<em>italic<\/em>/)
      assert.match(html, /<u>underlined<\/u>/)
      assert.match(html, /<a href="https:\/\/example\.com\/x"[^>]*>a link<\/a>/)
      const files = answer.files ?? []
      assert.equal(files.length, 3, JSON.stringify(files))
      for (const file of files) {
        assert.equal(file.state, 'SUCCESS')
        assert.ok(html.includes(`src="${file.url}"`), `${file.url} is shown in the HTML`)
        const res = await fetch(`${srv.url}${file.url}`)
        assert.equal(res.status, 200)
        assert.match(res.headers.get('content-type') ?? '', /^image\//)
      }
      // The EMF became a PNG, and every picture keeps the size the document shows it at.
      assert.equal(files.filter((f) => f.type === '.png').length, 3)
      for (const size of ['width="40" height="20"', 'width="30" height="30"'])
        assert.ok(html.includes(size), `a picture ${size} in ${html}`)
      assert.match(
        html,
        /<img [^>]*width="\d+" height="\d+"[^>]*>[\s\S]*<img [^>]*width="\d+" height="\d+"[^>]*>[\s\S]*<img [^>]*width="\d+" height="\d+"/,
      )
      assert.equal((await srv.storedFiles()).length, 3)
      return answer
    }

    test('a .docx with a heading, a list, a table, two pictures and an EMF is imported as clean HTML, every picture stored, the EMF as a PNG', async (t) => {
      const srv = await startTestServer(t)
      await importsWhole(srv, made.docx, 'report.docx')
    })

    test('a .doc is converted by LibreOffice and imported the same way', async (t) => {
      // Where conversions cannot run offline, an operator whose server has no network allows it.
      const srv = await startTestServer(t, { word: { docWithNetwork: !convertsOffline } })
      await importsWhole(srv, made.doc, 'report.doc')
    })

    test('without Word picture conversion the EMF is left out and counted in dropped, and the other pictures are stored', async (t) => {
      const srv = await startTestServer(t, { images: { metafiles: { enabled: false } } })
      const answer = await importWord(srv, made.docx, 'report.docx')
      assert.equal(answer.state, 'SUCCESS', JSON.stringify(answer))
      assert.equal(answer.files?.length, 2)
      assert.equal(answer.dropped, 1)
      assert.equal((answer.html?.match(/<img /g) ?? []).length, 2)
      assert.equal((await srv.storedFiles()).length, 2)
    })

    test('the config answer names the action, its field, size and the .docx and .doc types', async (t) => {
      const srv = await startTestServer(t)
      const config = (await (await fetch(srv.action('config'))).json()) as Record<string, unknown>
      assert.equal(config.wordImportActionName, 'wordimport')
      assert.equal(config.wordImportFieldName, 'upfile')
      assert.equal(config.wordImportMaxSize, 20480000)
      // `.doc` only where LibreOffice runs cut off from the network (as root, under unshare -n).
      assert.deepEqual(config.wordImportAllowFiles, convertsOffline ? ['.docx', '.doc'] : ['.docx'])
    })

    test('a .doc with a picture linked to an address is converted without fetching it, and the picture is left out', {
      skip: convertsOffline ? false : 'LibreOffice runs cut off from the network only as root',
    }, async (t) => {
      const watch = await watchServer()
      t.after(() => watch.close())
      const own = await mkdtemp(join(tmpdir(), 'ueditor-word-linked-'))
      t.after(() => rm(own, { recursive: true, force: true }))
      const linked = await officeFile(
        own,
        `<html><body><p>Linked <img src="${watch.url}/linked.png" width="40" height="20"></p></body></html>`,
        'doc',
        SOFFICE as string,
      )
      // The test's own LibreOffice fetched it while making the file; the server's must not.
      const before = watch.hits()
      const srv = await startTestServer(t)
      const answer = await importWord(srv, linked, 'linked.doc')
      assert.equal(answer.state, 'SUCCESS', JSON.stringify(answer))
      assert.equal(answer.dropped, 1)
      assert.deepEqual(answer.files, [])
      assert.match(answer.html ?? '', /Linked/)
      assert.doesNotMatch(answer.html ?? '', /<img|127\.0\.0\.1/)
      assert.equal(watch.hits(), before, 'the conversion on the server made no request')
      await nothingStored(srv)
    })

    test('a user past the quota with the pictures is refused, and none of them stays stored', async (t) => {
      const token = 'alice-token-0123456789abcdef'
      const srv = await startTestServer(t, {
        auth: { tokens: [`alice:${token}`] },
        limits: { quotaBytes: 200 },
      })
      const answer = await importWord(srv, made.docx, 'report.docx', {
        Authorization: `Bearer ${token}`,
      })
      assert.equal(answer.code, 'UE_QUOTA_EXCEEDED', JSON.stringify(answer))
      assert.deepEqual(await srv.storedFiles(), [])
    })

    test('a document larger than wordImportMaxSize is refused and nothing is stored', async (t) => {
      const srv = await startTestServer(t, { editor: { wordImportMaxSize: 1024 } })
      const answer = await importWord(srv, made.docx, 'report.docx')
      assert.equal(answer.code, 'UE_FILE_TOO_LARGE')
      await nothingStored(srv)
    })

    test('a document with more pictures than word.maxPictures is refused and nothing is stored', async (t) => {
      const srv = await startTestServer(t, { word: { maxPictures: 2 } })
      const answer = await importWord(srv, made.docx, 'report.docx')
      assert.equal(answer.code, 'UE_WORD_TOO_MANY_PICTURES')
      await nothingStored(srv)
    })
  })

  describe('hostile files', () => {
    test('macro-enabled documents are refused: a .docm name, a vbaProject.bin part, a macro content type', async (t) => {
      const srv = await startTestServer(t)
      assert.equal((await importWord(srv, docx(), 'evil.docm')).code, 'UE_WORD_MACROS')
      const withVba = docx({ extra: [{ name: 'word/vbaProject.bin', data: 'VBA' }] })
      assert.equal((await importWord(srv, withVba, 'evil.docx')).code, 'UE_WORD_MACROS')
      const macroType = docx({
        contentTypes: `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.ms-word.document.macroEnabled.main+xml"/></Types>`,
      })
      assert.equal((await importWord(srv, macroType, 'evil.docx')).code, 'UE_WORD_MACROS')
      const docWithMacros = compoundFile(['WordDocument', 'Macros'])
      assert.equal((await importWord(srv, docWithMacros, 'evil.doc')).code, 'UE_WORD_MACROS')
      await nothingStored(srv)
    })

    test('an encrypted document (a compound file with an EncryptedPackage instead of a zip) is refused', async (t) => {
      const srv = await startTestServer(t)
      const encrypted = compoundFile(['EncryptionInfo', 'EncryptedPackage'])
      assert.equal((await importWord(srv, encrypted, 'secret.docx')).code, 'UE_WORD_ENCRYPTED')
      assert.equal((await importWord(srv, encrypted, 'secret.doc')).code, 'UE_WORD_ENCRYPTED')
      await nothingStored(srv)
    })

    test('zip bombs are refused: an unpacked total past the cap, a part packed past the ratio, too many parts, sizes that lie', async (t) => {
      const srv = await startTestServer(t, {
        word: { maxUnpackedBytes: 4 * 1024 * 1024, maxEntries: 50 },
      })
      const zeros = Buffer.alloc(8 * 1024 * 1024)
      const big = docx({ extra: [{ name: 'word/media/big.bin', data: zeros }] })
      const bigAnswer = await importWord(srv, big, 'bomb.docx')
      assert.equal(bigAnswer.code, 'UE_WORD_ARCHIVE_UNSAFE')
      const ratio = docx({
        extra: [{ name: 'word/media/ratio.bin', data: Buffer.alloc(3 * 1024 * 1024) }],
      })
      assert.equal((await importWord(srv, ratio, 'bomb.docx')).code, 'UE_WORD_ARCHIVE_UNSAFE')
      const many = docx({
        extra: Array.from({ length: 60 }, (_, i) => ({ name: `word/part${i}.xml`, data: '<x/>' })),
      })
      assert.equal((await importWord(srv, many, 'bomb.docx')).code, 'UE_WORD_ARCHIVE_UNSAFE')
      const lying = docx({
        extra: [
          { name: 'word/media/lie.bin', data: Buffer.alloc(512 * 1024, 7), declaredSize: 10 },
        ],
      })
      assert.equal((await importWord(srv, lying, 'bomb.docx')).code, 'UE_WORD_ARCHIVE_UNSAFE')
      await nothingStored(srv)
    })

    test('a DOCTYPE or ENTITY in any XML part is refused', async (t) => {
      const srv = await startTestServer(t)
      const laughs = `<?xml version="1.0"?><!DOCTYPE w:document [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><w:document ${NS}><w:body><w:p><w:r><w:t>&lol2;</w:t></w:r></w:p></w:body></w:document>`
      assert.equal(
        (await importWord(srv, docx({ documentXml: laughs }), 'laughs.docx')).code,
        'UE_WORD_ENTITIES',
      )
      const inStyles = docx({
        extra: [
          {
            name: 'word/styles.xml',
            data: '<?xml version="1.0"?><!DOCTYPE x SYSTEM "http://127.0.0.1:9/x.dtd"><x/>',
          },
        ],
      })
      assert.equal((await importWord(srv, inStyles, 'dtd.docx')).code, 'UE_WORD_ENTITIES')
      const utf16 = docx({
        extra: [
          {
            name: 'word/settings.xml',
            data: Buffer.from(
              '<?xml version="1.0" encoding="UTF-16"?><!ENTITY x "y"><x/>',
              'utf16le',
            ),
          },
        ],
      })
      assert.equal((await importWord(srv, utf16, 'dtd.docx')).code, 'UE_WORD_ENTITIES')
      await nothingStored(srv)
    })

    test('pictures linked outside the package are left out and never fetched; embedded ones are stored', async (t) => {
      const watch = await watchServer()
      t.after(() => watch.close())
      const srv = await startTestServer(t)
      const external = (id: string, path: string) =>
        `<Relationship Id="${id}" Type="${IMAGE_REL}" Target="${watch.url}${path}" TargetMode="External"/>`
      const doc = docx({
        body: [
          '<w:p><w:r><w:t>Pictures</w:t></w:r></w:p>',
          drawing('r:embed="rId5"'),
          drawing('r:link="rId6"'),
          `<w:p><w:r><w:pict><v:shape style="width:30pt;height:15pt"><v:imagedata r:id="rId7"/></v:shape></w:pict></w:r></w:p>`,
          drawing('r:link="rId9"'),
          drawing('r:embed="rId8"'),
        ].join(''),
        rels: [
          external('rId5', '/embed.png'),
          external('rId6', '/link.png'),
          external('rId7', '/vml.png'),
          `<Relationship Id="rId9" Type="${IMAGE_REL}" Target="file:///etc/hostname" TargetMode="External"/>`,
          `<Relationship Id="rId8" Type="${IMAGE_REL}" Target="media/image1.png"/>`,
        ].join(''),
        extra: [{ name: 'word/media/image1.png', data: png(8, 8, { noise: true }) }],
      })
      const answer = await importWord(srv, doc, 'linked.docx')
      assert.equal(answer.state, 'SUCCESS', JSON.stringify(answer))
      assert.equal(answer.dropped, 4)
      assert.equal(answer.files?.length, 1)
      assert.equal((answer.html?.match(/<img /g) ?? []).length, 1)
      assert.match(answer.html ?? '', /width="100" height="50"/)
      assert.doesNotMatch(answer.html ?? '', /127\.0\.0\.1|hostname|ue-word-picture/)
      assert.equal(watch.hits(), 0, 'the loopback server got no request')
      assert.equal((await srv.storedFiles()).length, 1)
    })

    test('a .doc whose conversion outlasts word.timeoutSeconds is refused, its converter killed, and nothing is stored', async (t) => {
      // A LibreOffice that never finishes: a script laid out as Debian's install, with Writer.
      const dir = await mkdtemp(join(tmpdir(), 'ueditor-slow-soffice-'))
      t.after(() => rm(dir, { recursive: true, force: true }))
      const marker = join(dir, 'still-running')
      const soffice = await fakeLibreOffice(dir, { writer: true })
      await writeFile(soffice, `#!/bin/sh\nsleep 6\ntouch ${marker}\n`)
      const srv = await startTestServer(t, {
        images: { metafiles: { soffice } },
        word: { timeoutSeconds: 2, docWithNetwork: true },
      })
      const config = (await (await fetch(srv.action('config'))).json()) as Record<string, unknown>
      assert.deepEqual(config.wordImportAllowFiles, ['.docx', '.doc'])
      const answer = await importWord(srv, compoundFile(['WordDocument']), 'slow.doc')
      assert.equal(answer.code, 'UE_WORD_CONVERSION_FAILED', JSON.stringify(answer))
      await nothingStored(srv)
      // Killed with its process group: the script never gets to its last line.
      await new Promise((resolve) => setTimeout(resolve, 8_000))
      assert.equal(existsSync(marker), false, 'the converter was killed at the limit')
      assert.deepEqual(await srv.tempFiles(), [])
    })

    test('a file that is neither a zip nor a compound file, or whose bytes disagree with its name, is refused', async (t) => {
      const srv = await startTestServer(t)
      assert.equal(
        (await importWord(srv, Buffer.from('plain text'), 'a.docx')).code,
        'UE_WORD_INVALID',
      )
      assert.equal((await importWord(srv, docx(), 'a.doc')).code, 'UE_CONTENT_MISMATCH')
      assert.equal((await importWord(srv, docx(), 'a.pdf')).code, 'UE_TYPE_NOT_ALLOWED')
      await nothingStored(srv)
    })
  })

  test('a long document is converted off the event loop, which stays free for other requests meanwhile', async (t) => {
    // The server runs in this process: a timer ticking every 10 ms shows how long its event
    // loop was held at once.
    const srv = await startTestServer(t)
    // About 6,000 paragraphs of 0.6 MB of XML: mammoth reads them in one synchronous pass.
    const body = Array.from(
      { length: 6_000 },
      (_, i) =>
        `<w:p><w:r><w:rPr><w:b/></w:rPr><w:t>Paragraph ${i} of the long report.</w:t></w:r></w:p>`,
    ).join('')
    let last = performance.now()
    let longest = 0
    const ticks = setInterval(() => {
      const now = performance.now()
      longest = Math.max(longest, now - last)
      last = now
    }, 10)
    t.after(() => clearInterval(ticks))
    const answer = await importWord(srv, docx({ body }), 'long.docx')
    clearInterval(ticks)
    assert.equal(answer.state, 'SUCCESS', JSON.stringify(answer).slice(0, 300))
    assert.match(answer.html ?? '', /Paragraph 5999 of the long report/)
    assert.ok(longest < 500, `the event loop was held for ${Math.round(longest)} ms at once`)
  })
})
