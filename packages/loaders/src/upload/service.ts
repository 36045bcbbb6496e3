import { directUpload } from './direct.js'
import { editorAnswer, editorFile, onceCallbacks, uploadCategory } from './editor.js'
import { postUpload } from './post.js'
import { configReader, PENDING, pollResult, resolveServerUrl, serverSettings } from './server.js'
import { tusUpload } from './tus.js'
import type {
  EditorUploadCallback,
  EditorUploadOption,
  UploadServiceOptions,
  UploadServiceUpload,
  UploadVia,
} from './types.js'

const MiB = 1024 * 1024

/**
 * The `uploadServiceUpload` of UEditor Plus 4.1+ for this server. It reads the config answer
 * once, then sends each file straight to the bucket when the server offers it
 * (`uploadDirectUrl`), else with tus (`uploadTusUrl`), else as the editor's own multipart POST,
 * and calls the editor's `success` or `error` exactly once per call.
 */
export function uploadService(options: UploadServiceOptions): UploadServiceUpload {
  if (typeof options?.serverUrl !== 'string' || options.serverUrl === '')
    throw new TypeError('uploadService needs the editor’s serverUrl')
  const s = serverSettings(options)
  const readConfig = configReader(s)
  const allowed = options.via ?? ['direct', 'tus', 'post']
  const retryDelays = options.retryDelays ?? [0, 1000, 3000, 5000, 10000]
  const resultTimeout = options.resultTimeout ?? 10 * 60_000
  const running = new Set<AbortController>()

  const upload = ((
    type: string,
    input: unknown,
    callback: EditorUploadCallback,
    option?: EditorUploadOption,
  ) => {
    const end = onceCallbacks(callback)
    const controller = new AbortController()
    const { signal } = controller
    running.add(controller)
    const from = String(option?.from ?? type)
    const work = async () => {
      const file = editorFile(input, from)
      const config = await readConfig(signal)
      const category = uploadCategory(String(type), from, file, config)
      const via = chosenWay(config, allowed)
      end.progress(0)
      let answer: unknown
      if (via === 'post') {
        answer = await postUpload(s, config, category, file, end.progress, signal)
      } else {
        const base = resolveServerUrl(s.serverUrl, String(config[wayKey[via]]))
        const ending =
          via === 'direct'
            ? await directUpload(
                s,
                base,
                category,
                file,
                directOptions(options, retryDelays),
                end.progress,
                signal,
              )
            : await tusUpload(
                s,
                base,
                category,
                file,
                { chunkSize: options.tusChunkSize ?? 8 * MiB, retryDelays },
                end.progress,
                signal,
              )
        const final = ending.answer
        answer =
          final && final.code !== PENDING
            ? final
            : await pollResult(s, ending.id, resultTimeout, signal)
      }
      const result = editorAnswer(answer, file)
      end.progress(1)
      end.success(result)
    }
    work()
      .catch((e: unknown) => end.error(signal.aborted ? 'upload cancelled' : messageOf(e)))
      .finally(() => running.delete(controller))
  }) as UploadServiceUpload
  upload.abort = () => {
    for (const controller of running) controller.abort(new DOMException('cancelled', 'AbortError'))
  }
  return upload
}

const wayKey = { direct: 'uploadDirectUrl', tus: 'uploadTusUrl' } as const

/** The first allowed way the server offers; the multipart POST is always offered. */
function chosenWay(config: Record<string, unknown>, allowed: UploadVia[]): UploadVia {
  for (const via of allowed) {
    if (via === 'post') return via
    const url = config[wayKey[via]]
    if (typeof url === 'string' && url !== '') return via
  }
  throw new Error('the server offers none of the allowed upload ways')
}

function directOptions(o: UploadServiceOptions, retryDelays: number[]) {
  return {
    multipartThreshold: o.directMultipartThreshold ?? 16 * MiB,
    partSize: o.directPartSize ?? 8 * MiB,
    retryDelays,
  }
}

/** The message of an error from any window (a token function may live in another frame). */
function messageOf(e: unknown): string {
  const message = typeof e === 'object' && e !== null ? (e as { message?: unknown }).message : ''
  return typeof message === 'string' && message !== '' ? message : 'upload failed'
}
