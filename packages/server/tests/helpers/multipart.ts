import { randomBytes } from 'node:crypto'

export interface Part {
  name: string
  value: string | Buffer
  filename?: string
  /** Raw Content-Disposition parameters appended as-is (for `filename*` tricks). */
  extraDisposition?: string
  contentType?: string
}

/**
 * Builds a multipart body by hand, byte for byte, so tests can send exactly what a browser
 * or an attacker sends (raw UTF-8 names, duplicate parts, odd parameters).
 */
export function multipartBody(
  parts: Part[],
  boundary = `----WebKitFormBoundary${randomBytes(8).toString('hex')}`,
) {
  const chunks: Buffer[] = []
  for (const part of parts) {
    let disposition = `form-data; name="${part.name}"`
    if (part.filename !== undefined) disposition += `; filename="${part.filename}"`
    if (part.extraDisposition) disposition += `; ${part.extraDisposition}`
    let head = `--${boundary}\r\nContent-Disposition: ${disposition}\r\n`
    if (part.contentType) head += `Content-Type: ${part.contentType}\r\n`
    chunks.push(Buffer.from(`${head}\r\n`, 'utf8'))
    chunks.push(typeof part.value === 'string' ? Buffer.from(part.value, 'utf8') : part.value)
    chunks.push(Buffer.from('\r\n'))
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`))
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` }
}

/** What WebUploader sends before the file part (docs/protocol.md, "The WebUploader dialogs"). */
export function webUploaderFields(name: string, size: number, type: string): Part[] {
  return [
    { name: 'id', value: 'WU_FILE_0' },
    { name: 'name', value: name },
    { name: 'type', value: type },
    { name: 'lastModifiedDate', value: 'Mon Nov 23 2026 10:00:00 GMT+0800 (China Standard Time)' },
    { name: 'size', value: String(size) },
  ]
}
