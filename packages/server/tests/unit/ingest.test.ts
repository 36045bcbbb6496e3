import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { EDITOR_DEFAULTS } from '../../src/config/editor-defaults.js'
import { claimedExtension, cleanOriginalName } from '../../src/ingest/display-name.js'
import { keyRecogniser, randomToken, renderKey, toStorageKey } from '../../src/ingest/keys.js'
import { createSpool, HEAD_BYTES } from '../../src/ingest/temp-file.js'
import { UeError } from '../../src/shared/errors.js'
import { describe, type TestContext, test } from '../helpers/test.js'

describe('storage keys', () => {
  test('a path format renders date parts, time and CSPRNG characters', () => {
    const now = new Date(2026, 10, 3, 4, 5, 6)
    const key = renderKey('image/{yyyy}{mm}{dd}/{hh}{ii}{ss}-{time}{rand:24}', '.png', now)
    assert.match(key, new RegExp(`^image/20261103/040506-${now.getTime()}[0-9a-z]{24}\\.png$`))
  })

  test('random tokens are uniform-looking and never repeat', () => {
    const tokens = new Set(Array.from({ length: 2000 }, () => randomToken(24)))
    assert.equal(tokens.size, 2000)
    assert.ok([...tokens].every((t) => /^[0-9a-z]{24}$/.test(t)))
  })

  test('traversal, absolute, backslash and odd keys are never storage keys', () => {
    for (const bad of [
      '../x',
      'a/../b',
      '/etc/passwd',
      'a\\b',
      'a//b',
      '.hidden',
      'a/.x',
      'x\u0000.png',
      'a/b;c',
      '',
      'a'.repeat(600),
    ])
      assert.equal(toStorageKey(bad), null, JSON.stringify(bad))
    assert.equal(toStorageKey('image/20261123/abc.png'), 'image/20261123/abc.png')
  })

  test('an extension that is not a plain dotted token cannot be rendered', () => {
    assert.throws(() => renderKey('x/{rand:24}', '.p/hp'), /UE_KEY_INVALID/)
  })

  test('every key a path format renders, at any moment, is recognised as this server’s own', () => {
    const formats = [
      EDITOR_DEFAULTS.imagePathFormat,
      EDITOR_DEFAULTS.filePathFormat,
      'up/{yy}/{mm}-{dd}/{hh}{ii}{ss}_{rand:16}',
      'a.b/{time}/{rand:20}',
    ]
    const ours = keyRecogniser(formats)
    let at = Date.UTC(2001, 8, 9, 1, 46, 40)
    for (let i = 0; i < 2000; i++) {
      at += 1 + Math.floor(Math.random() * 40 * 86_400_000)
      const now = new Date(at)
      for (const format of formats)
        for (const ext of ['.png', '.jpeg', '.webp', '.mp4', '.7z']) {
          const key = renderKey(format, ext, now)
          assert.equal(ours(key), key, `${format} at ${now.toISOString()}`)
        }
    }
  })

  test('a legacy backend’s name, a hand-placed file or another prefix is not a key this server gives', () => {
    const ours = keyRecogniser([EDITOR_DEFAULTS.imagePathFormat, EDITOR_DEFAULTS.filePathFormat])
    const mine = renderKey(EDITOR_DEFAULTS.imagePathFormat, '.jpg', new Date(2026, 10, 26))
    assert.equal(ours(mine), mine)
    const stem = mine.slice(0, -'.jpg'.length)
    for (const foreign of [
      // UEditor's PHP backend: {time} in seconds and {rand:6} digits.
      'image/20190101/1546300800123456.jpg',
      'ueditor/php/upload/image/20190101/1546300800123456.jpg',
      'image/20261126/notes.txt',
      'other/readme.txt',
      'otherapp/readme.txt',
      'video/20261126/1764115200000abcdefghijklmnopqrstuvwx.mp4', // a format not configured
      `${stem}.JPG`,
      `${stem}`,
      `${stem}x.jpg`,
      `${stem.slice(0, -1)}.jpg`,
      `${stem}.jpg.txt.exe1234567`,
      mine.replace('/2026', '/2O26'),
      mine.replace('1126/', '1326/'),
      mine.replace('1126/', '1100/'),
      `site/${mine}`,
      `${mine}/x.jpg`,
      mine.replace(/[a-z](?=[0-9a-z]*\.jpg$)/, 'A'),
    ])
      assert.equal(ours(foreign), null, foreign)
  })
})

describe('client file names', () => {
  test('the display name keeps Chinese text and drops paths, controls and markup', () => {
    assert.equal(cleanOriginalName('C:\\fakepath\\报告.pdf'), '报告.pdf')
    assert.equal(cleanOriginalName('../../x.png'), 'x.png')
    assert.equal(cleanOriginalName('a\r\nb\u202e.png'), 'ab.png')
    assert.equal(cleanOriginalName('"<b>".png'), 'b.png')
    assert.equal(cleanOriginalName(''), 'file')
    assert.ok(Buffer.byteLength(cleanOriginalName('字'.repeat(400))) <= 255)
  })

  test('decomposed Unicode is normalised to NFC', () => {
    assert.equal(cleanOriginalName('cafe\u0301.png'), 'caf\u00e9.png')
  })

  test('the claimed extension is lower-cased and refused for tricks', () => {
    assert.equal(claimedExtension('A.JPG'), '.jpg')
    assert.equal(claimedExtension('a.php.jpg'), '.jpg')
    for (const bad of [
      'a.php\u0000.jpg',
      'a.jpg.',
      'a.jpg ',
      '.htaccess',
      'noext',
      'a.',
      'a/b.png',
      'a.p-p',
    ])
      assert.equal(claimedExtension(bad), '', JSON.stringify(bad))
  })

  test('the .docx import’s picture names blob.x-emf and blob.x-wmf claim .emf and .wmf', () => {
    assert.equal(claimedExtension('blob.x-emf'), '.emf')
    assert.equal(claimedExtension('blob.X-WMF'), '.wmf')
    assert.equal(claimedExtension('blob.svg+xml'), '')
    assert.equal(claimedExtension('blob.x-emf.'), '')
  })
})

describe('the spool', () => {
  const inTempDir = async (t: TestContext) => {
    const dir = await mkdtemp(join(tmpdir(), 'ue-spool-'))
    t.after(() => rm(dir, { recursive: true, force: true }))
    return dir
  }
  const pieces = (bytes: Buffer, size: number) =>
    Readable.from(
      Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) =>
        bytes.subarray(i * size, (i + 1) * size),
      ),
    )

  test('the first bytes are judged before any byte of the upload reaches the disk', async (t) => {
    const dir = await inTempDir(t)
    const spool = createSpool(dir)
    t.after(() => spool.dispose())
    const bytes = randomBytes(HEAD_BYTES + 40_000)
    let onDiskWhileJudged = -1
    const file = await spool.write(pieces(bytes, 30_000), bytes.length, 'a.bin', async (head) => {
      assert.deepEqual(head, bytes.subarray(0, HEAD_BYTES))
      const [name] = await readdir(dir)
      onDiskWhileJudged = (await stat(join(dir, name as string))).size
    })
    assert.equal(onDiskWhileJudged, 0)
    assert.deepEqual(await readFile(file.path), bytes)
    assert.deepEqual(file.head, bytes.subarray(0, HEAD_BYTES))
  })

  test('a file smaller than the head is judged whole and stored whole', async (t) => {
    const dir = await inTempDir(t)
    const spool = createSpool(dir)
    t.after(() => spool.dispose())
    const bytes = randomBytes(5_000)
    const seen: Buffer[] = []
    const file = await spool.write(pieces(bytes, 1_000), bytes.length, 'a.bin', async (head) => {
      seen.push(head)
    })
    assert.deepEqual(seen, [bytes])
    assert.equal(file.size, bytes.length)
    assert.deepEqual(await readFile(file.path), bytes)
  })

  test('a head the inspector refuses leaves no spool file behind', async (t) => {
    const dir = await inTempDir(t)
    const spool = createSpool(dir)
    t.after(() => spool.dispose())
    const refused = spool.write(pieces(randomBytes(200_000), 16_384), 1e9, 'a.bin', async () => {
      throw new UeError('UE_CONTENT_MISMATCH')
    })
    await assert.rejects(refused, { code: 'UE_CONTENT_MISMATCH' })
    assert.deepEqual(await readdir(dir), [])
  })
})
