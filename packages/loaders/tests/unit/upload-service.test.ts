import assert from 'node:assert/strict'
import { type UploadServiceOptions, uploadService } from '../../src/index.js'
import { editorFile, onceCallbacks, uploadCategory } from '../../src/upload/editor.js'
import { pollResult, serverSettings } from '../../src/upload/server.js'
import { describe, test } from '../helpers/test.js'
import { type Call, fakeFetch, flush, hang, json } from './fake-fetch.js'

const CONFIG = {
  imageActionName: 'uploadimage',
  imageFieldName: 'upfile',
  videoActionName: 'uploadvideo',
  videoFieldName: 'video',
  audioActionName: 'uploadaudio',
  audioFieldName: 'audio',
  fileActionName: 'uploadfile',
  fileFieldName: 'attachment',
  imageAllowFiles: ['.png', '.jpg'],
  videoAllowFiles: ['.mp4'],
  audioAllowFiles: ['.mp3'],
}
const SUCCESS = {
  state: 'SUCCESS',
  url: 'image/20261126/abc.png',
  title: 'abc.png',
  original: 'photo.png',
  type: '.png',
  size: 4,
}
const png = () => new File([new Uint8Array([137, 80, 78, 71])], 'photo.png', { type: 'image/png' })

interface Ended {
  events: [string, unknown][]
}

/** Calls the upload as the editor does and resolves once it ended, plus a little slack. */
async function callEditor(
  upload: ReturnType<typeof uploadService>,
  type: string,
  file: unknown,
  from: string,
): Promise<Ended> {
  const events: [string, unknown][] = []
  await new Promise<void>((resolve) => {
    upload(
      type,
      file as Blob,
      {
        success: (r) => {
          events.push(['success', r])
          resolve()
        },
        error: (m) => {
          events.push(['error', m])
          resolve()
        },
        progress: (p) => events.push(['progress', p]),
      },
      { from },
    )
  })
  await flush(20)
  return { events }
}

const endings = (e: Ended) => e.events.filter(([kind]) => kind !== 'progress')

const service = (fetch: typeof globalThis.fetch, more: Partial<UploadServiceOptions> = {}) =>
  uploadService({ serverUrl: '/ueditor', fetch, ...more })

describe('which server category an editor call goes to', () => {
  const file = (name: string, type: string) =>
    editorFile(new File([new Uint8Array(1)], name, { type }), 'paste')

  test('the dialogs map attachment to file and keep video and audio', () => {
    assert.equal(
      uploadCategory('attachment', 'attachment', file('a.zip', 'application/zip')),
      'file',
    )
    assert.equal(uploadCategory('video', 'video', file('a.mp4', 'video/mp4')), 'video')
    assert.equal(uploadCategory('audio', 'audio', file('a.mp3', 'audio/mpeg')), 'audio')
    assert.equal(uploadCategory('image', 'image', file('a.png', 'image/png')), 'image')
  })

  test('the simple upload button and scrawl always send an image', () => {
    assert.equal(uploadCategory('image', 'upload', file('a.png', 'image/png')), 'image')
    assert.equal(uploadCategory('image', 'scrawl', file('scrawl.png', 'image/png')), 'image')
  })

  test('a pasted PDF is sent as a file, not as an image, although the editor says image', () => {
    assert.equal(uploadCategory('image', 'paste', file('report.pdf', 'application/pdf')), 'file')
    assert.equal(uploadCategory('image', 'paste', file('shot.png', 'image/png')), 'image')
    assert.equal(uploadCategory('image', 'paste', file('clip.webm', 'video/webm')), 'video')
  })

  test('a pasted file without a type is placed by its extension in the config allow-lists', () => {
    assert.equal(uploadCategory('image', 'paste', file('movie.mp4', ''), CONFIG), 'video')
    assert.equal(uploadCategory('image', 'paste', file('PHOTO.JPG', ''), CONFIG), 'image')
    assert.equal(uploadCategory('image', 'paste', file('song.mp3', ''), CONFIG), 'audio')
    assert.equal(uploadCategory('image', 'paste', file('notes', ''), CONFIG), 'file')
  })

  test('an unknown editor type is refused', () => {
    assert.throws(() => uploadCategory('word', 'upload', file('a.doc', '')), /unknown upload type/)
  })
})

describe('the file inside what the editor passes', () => {
  test('a native File keeps its name and type', () => {
    const f = editorFile(png(), 'upload')
    assert.deepEqual([f.name, f.type, f.blob.size], ['photo.png', 'image/png', 4])
  })

  test('the scrawl Blob has no name and is named after its PNG type', () => {
    const f = editorFile(new Blob([new Uint8Array(3)], { type: 'image/png' }), 'scrawl')
    assert.deepEqual([f.name, f.type], ['scrawl.png', 'image/png'])
  })

  test('the WebUploader block gives the native File from block.file.source.source', () => {
    const native = png()
    const block = {
      file: { name: 'dialog name.png', source: { source: native } },
      blob: { source: native },
    }
    const f = editorFile(block, 'image')
    assert.equal(f.blob, native)
    assert.equal(f.name, 'dialog name.png')
  })

  test('a block without file.source falls back to the bytes in block.blob.source', () => {
    const bytes = new Blob([new Uint8Array(2)], { type: 'video/mp4' })
    const f = editorFile({ file: { name: 'clip.mp4' }, blob: { source: bytes } }, 'video')
    assert.equal(f.blob, bytes)
    assert.equal(f.name, 'clip.mp4')
  })

  test('a File or Blob of another window is taken by its shape, not by this window’s class', () => {
    // What the dialogs' iframe hands over: tagged File, but no instance of this window's Blob.
    const tagged = {
      [Symbol.toStringTag]: 'File',
      name: 'photo.png',
      type: 'image/png',
      size: 4,
      slice: () => new Blob(),
    }
    assert.ok(!((tagged as unknown) instanceof Blob))
    const f = editorFile({ file: { name: 'photo.png', source: { source: tagged } } }, 'image')
    assert.equal(f.blob, tagged)
    const shaped = { type: 'video/mp4', size: 2, slice: () => null, arrayBuffer: () => null }
    assert.equal(editorFile(shaped, 'upload').blob, shaped)
    assert.equal(editorFile(tagged, 'paste').name, 'photo.png')
  })

  test('nothing usable is an error', () => {
    assert.throws(() => editorFile({ file: { name: 'x' } }, 'image'), /no file/)
    assert.throws(() => editorFile(undefined, 'image'), /no file/)
  })
})

describe('every call ends exactly once', () => {
  test('after success a later error or success is dropped, and progress stops', () => {
    const seen: string[] = []
    const end = onceCallbacks({
      success: () => seen.push('success'),
      error: () => seen.push('error'),
      progress: (p) => seen.push(`p${p}`),
    })
    end.progress(0.5)
    end.success(SUCCESS as never)
    end.error('late')
    end.success(SUCCESS as never)
    end.progress(0.9)
    assert.deepEqual(seen, ['p0.5', 'success'])
  })

  test('progress is a fraction in [0, 1] that never goes back', () => {
    const seen: number[] = []
    const end = onceCallbacks({ success() {}, error() {}, progress: (p) => seen.push(p) })
    for (const p of [0, 0.3, 0.2, 0.3, 1.7, Number.NaN]) end.progress(p)
    assert.deepEqual(seen, [0, 0.3, 1])
  })

  test('a success callback that throws does not become an error', async () => {
    const seen: string[] = []
    const thrown: unknown[] = []
    const page = globalThis as { reportError?: (e: unknown) => void }
    const before = page.reportError
    page.reportError = (e) => thrown.push(e) // as a browser reports an uncaught error
    try {
      const end = onceCallbacks({
        success: () => {
          seen.push('success')
          throw new Error('editor bug')
        },
        error: () => seen.push('error'),
      })
      end.success(SUCCESS as never)
      end.error('after the throw')
    } finally {
      page.reportError = before
    }
    assert.deepEqual(seen, ['success'])
    assert.equal((thrown[0] as Error).message, 'editor bug')
  })
})

describe('uploadService against a server without tus or direct', () => {
  test('reads config once and posts each file to its action in the configured field', async () => {
    const { fetch, calls } = fakeFetch((call: Call) =>
      call.url.includes('action=config') ? json(CONFIG) : json(SUCCESS),
    )
    const upload = service(fetch, { token: 'tok-123' })
    const first = await callEditor(upload, 'image', png(), 'upload')
    const block = {
      file: {
        name: 'report.pdf',
        source: { source: new File(['%PDF-1.4'], 'report.pdf', { type: 'application/pdf' }) },
      },
    }
    const second = await callEditor(upload, 'attachment', block, 'attachment')

    assert.deepEqual(
      calls.map((c) => `${c.method} ${c.url}`),
      [
        'GET /ueditor?action=config',
        'POST /ueditor?action=uploadimage',
        'POST /ueditor?action=uploadfile',
      ],
    )
    assert.equal(calls[0]?.headers.authorization, 'Bearer tok-123')
    assert.equal(calls[1]?.headers.authorization, 'Bearer tok-123')
    const imageForm = calls[1]?.raw as FormData
    assert.equal((imageForm.get('upfile') as File).name, 'photo.png')
    const fileForm = calls[2]?.raw as FormData
    assert.equal((fileForm.get('attachment') as File).name, 'report.pdf')
    assert.deepEqual(endings(first), [['success', SUCCESS]])
    assert.deepEqual(endings(second), [['success', SUCCESS]])
    const progress = first.events.filter(([k]) => k === 'progress').map(([, p]) => p)
    assert.deepEqual([progress[0], progress.at(-1)], [0, 1])
  })

  test('a serverUrl with a query string gets &action=, and the token goes in the configured header and query parameter', async () => {
    const { fetch, calls } = fakeFetch((call: Call) =>
      call.url.includes('action=config') ? json(CONFIG) : json(SUCCESS),
    )
    const upload = uploadService({
      serverUrl: 'https://api.example/ueditor?site=7',
      fetch,
      token: async () => 'tok-9',
      tokenHeader: 'X-Token',
      tokenQuery: 'token',
    })
    await callEditor(upload, 'image', png(), 'paste')
    assert.equal(calls[0]?.url, 'https://api.example/ueditor?site=7&action=config&token=tok-9')
    assert.equal(calls[1]?.url, 'https://api.example/ueditor?site=7&action=uploadimage&token=tok-9')
    assert.equal(calls[1]?.headers['x-token'], 'tok-9')
    assert.equal(calls[1]?.headers.authorization, undefined)
  })

  test('a refusal reaches the editor as one error with the readable state', async () => {
    const refusal = { state: '文件类型不允许', code: 'UE_TYPE_NOT_ALLOWED' }
    const { fetch } = fakeFetch((call: Call) =>
      call.url.includes('action=config') ? json(CONFIG) : json(refusal),
    )
    const ended = await callEditor(service(fetch), 'image', png(), 'paste')
    assert.deepEqual(endings(ended), [['error', '文件类型不允许']])
  })

  test('a failed config read is one error, and the next call asks again', async () => {
    const { fetch, calls } = fakeFetch(new TypeError('network down'), (call: Call) =>
      call.url.includes('action=config') ? json(CONFIG) : json(SUCCESS),
    )
    const upload = service(fetch)
    const first = await callEditor(upload, 'image', png(), 'upload')
    const second = await callEditor(upload, 'image', png(), 'upload')
    assert.deepEqual(endings(first), [['error', 'network down']])
    assert.deepEqual(endings(second), [['success', SUCCESS]])
    assert.equal(calls.filter((c) => c.url.includes('action=config')).length, 2)
  })

  test('abort() ends a running call with one error and sends nothing more', async () => {
    const { fetch, calls } = fakeFetch((call: Call) =>
      call.url.includes('action=config') ? json(CONFIG) : hang(call),
    )
    const upload = service(fetch)
    const ending = callEditor(
      upload,
      'video',
      new File(['x'], 'clip.mp4', { type: 'video/mp4' }),
      'video',
    )
    await flush(20)
    assert.equal(calls.length, 2)
    upload.abort()
    assert.deepEqual(endings(await ending), [['error', 'upload cancelled']])
    assert.equal(calls.length, 2)
  })

  test('an unknown type is one error and sends no file', async () => {
    const { fetch, calls } = fakeFetch(json(CONFIG))
    const ended = await callEditor(service(fetch), 'word', png(), 'upload')
    assert.deepEqual(endings(ended), [['error', 'unknown upload type "word"']])
    assert.deepEqual(
      calls.map((c) => c.url),
      ['/ueditor?action=config'],
    )
  })
})

describe('waiting for the server to finish an upload', () => {
  const pending = { state: '正在处理', code: 'UE_UPLOAD_PENDING' }

  test('asks uploadresult while pending and answers the result', async () => {
    const { fetch, calls } = fakeFetch(json(pending), json(pending), json(SUCCESS))
    const answer = await pollResult(
      serverSettings({ serverUrl: '/ueditor', fetch }),
      'abc_123',
      60_000,
      new AbortController().signal,
    )
    assert.deepEqual(answer, SUCCESS)
    assert.deepEqual(
      calls.map((c) => c.url),
      Array(3).fill('/ueditor?action=uploadresult&id=abc_123'),
    )
  })

  test('gives up when the server stays pending past the bound', async () => {
    const { fetch, calls } = fakeFetch(json(pending))
    await assert.rejects(
      pollResult(
        serverSettings({ serverUrl: '/ueditor', fetch }),
        'x',
        700,
        new AbortController().signal,
      ),
      /did not finish the upload in time/,
    )
    assert.ok(calls.length >= 2 && calls.length <= 4, `${calls.length} requests`)
  })
})

describe('direct to the bucket, through the signing routes', () => {
  test('a small file gets a presigned POST form, goes to the bucket and its result is asked for by id', async () => {
    const config = { ...CONFIG, uploadDirectUrl: '/', uploadTusUrl: '/tus' }
    const { fetch, calls } = fakeFetch((call: Call) => {
      if (call.url.includes('action=config')) return json(config)
      if (call.url.startsWith('/s3/params'))
        return json({
          method: 'POST',
          url: 'https://bucket.example/',
          fields: { key: 'pending/id1', policy: 'p' },
          id: 'id1',
        })
      if (call.url === 'https://bucket.example/') return new Response(null, { status: 204 })
      return json(SUCCESS)
    })
    const ended = await callEditor(service(fetch, { token: 't' }), 'image', png(), 'image')
    assert.deepEqual(endings(ended), [['success', SUCCESS]])
    assert.deepEqual(
      calls.map((c) => `${c.method} ${c.url.split('?')[0]}`),
      ['GET /ueditor', 'GET /s3/params', 'POST https://bucket.example/', 'GET /ueditor'],
    )
    const params = new URL(calls[1]?.url ?? '', 'http://x').searchParams
    assert.equal(params.get('filename'), 'photo.png')
    assert.equal(params.get('metadata[category]'), 'image')
    const form = calls[2]?.raw as FormData
    assert.deepEqual([...form.keys()], ['key', 'policy', 'file'])
    assert.equal(
      calls[2]?.headers.authorization,
      undefined,
      'no credential of ours goes to the bucket',
    )
    assert.equal(calls[3]?.url, '/ueditor?action=uploadresult&id=id1')
  })

  test('a big file goes in signed parts and the complete answer is the result, with no polling', async () => {
    const config = { ...CONFIG, uploadDirectUrl: 'https://api.example/s3' }
    const MiB = 1024 * 1024
    const { fetch, calls } = fakeFetch((call: Call) => {
      const path = call.url.split('?')[0]
      if (call.url.includes('action=config')) return json(config)
      if (path === 'https://api.example/s3/s3/multipart')
        return json({ key: 'pending/id2', uploadId: 'up-1', id: 'id2' })
      if (/\/multipart\/up-1\/\d$/.test(path ?? ''))
        return json({ url: `https://bucket.example/part${path?.slice(-1)}`, expires: 600 })
      if (path?.startsWith('https://bucket.example/part'))
        return new Response(null, { status: 200, headers: { ETag: `"etag-${path.slice(-1)}"` } })
      if (path?.endsWith('/complete'))
        return json({ location: SUCCESS.url, key: 'pending/id2', id: 'id2', ...SUCCESS })
      return json({ error: { code: 'UE_NOT_FOUND', message: 'unexpected' } }, 404)
    })
    const upload = service(fetch, { directMultipartThreshold: 5 * MiB, directPartSize: 5 * MiB })
    const big = new File([new Uint8Array(11 * MiB)], 'clip.mp4', { type: 'video/mp4' })
    const ended = await callEditor(upload, 'video', big, 'video')
    assert.deepEqual(endings(ended), [['success', SUCCESS]])
    assert.deepEqual(
      calls.map((c) => `${c.method} ${c.url.replace('https://api.example', '')}`),
      [
        'GET /ueditor?action=config',
        'POST /s3/s3/multipart',
        'GET /s3/s3/multipart/up-1/1?key=pending%2Fid2',
        'PUT https://bucket.example/part1',
        'GET /s3/s3/multipart/up-1/2?key=pending%2Fid2',
        'PUT https://bucket.example/part2',
        'GET /s3/s3/multipart/up-1/3?key=pending%2Fid2',
        'PUT https://bucket.example/part3',
        'POST /s3/s3/multipart/up-1/complete?key=pending%2Fid2',
      ],
    )
    assert.deepEqual(calls[1]?.body, {
      filename: 'clip.mp4',
      type: 'video/mp4',
      metadata: { name: 'clip.mp4', type: 'video/mp4', category: 'video', size: String(11 * MiB) },
    })
    assert.deepEqual(calls.at(-1)?.body, {
      parts: [1, 2, 3].map((n) => ({ PartNumber: n, ETag: `"etag-${n}"` })),
    })
    assert.equal((calls[3]?.raw as Blob | undefined)?.size, 5 * MiB)
    assert.equal((calls[7]?.raw as Blob | undefined)?.size, MiB)
  })

  test('a refusal of the signing route is one error with its message, and nothing is sent to the bucket', async () => {
    const config = { ...CONFIG, uploadDirectUrl: '/s3' }
    const { fetch, calls } = fakeFetch((call: Call) =>
      call.url.includes('action=config')
        ? json(config)
        : json(
            { error: { code: 'UE_QUOTA_EXCEEDED', message: 'Your storage quota is used up' } },
            413,
          ),
    )
    const ended = await callEditor(service(fetch), 'image', png(), 'paste')
    assert.deepEqual(endings(ended), [['error', 'Your storage quota is used up']])
    assert.equal(calls.length, 2)
  })
})
