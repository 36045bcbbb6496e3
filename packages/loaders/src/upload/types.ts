/** What UEditor Plus (4.1+) hands `uploadServiceUpload`, and what it reads back. */
export type EditorUploadType = 'image' | 'video' | 'audio' | 'attachment'
export type EditorUploadFrom =
  | 'upload'
  | 'paste'
  | 'scrawl'
  | 'image'
  | 'video'
  | 'audio'
  | 'attachment'

/** The WebUploader block object the dialogs pass instead of a File. */
export interface WebUploaderBlock {
  file: { name?: string; type?: string; size?: number; source: { source: Blob } }
  blob?: { source?: Blob }
}

export interface EditorUploadCallback {
  success(result: UploadResult): void
  error(message: string): void
  progress?(fraction: number): void
}

export interface EditorUploadOption {
  from?: EditorUploadFrom | string
  [other: string]: unknown
}

/** The usual editor upload answer. */
export interface UploadResult {
  state: 'SUCCESS'
  url: string
  title: string
  original: string
  type?: string
  size?: number
}

/** The server's category of an upload (its `*ActionName` families, `file` for attachments). */
export type UploadCategory = 'image' | 'video' | 'audio' | 'file'

/** How the bytes go: straight to the bucket, tus to the server, or one multipart POST. */
export type UploadVia = 'direct' | 'tus' | 'post'

export type TokenSource = string | null | undefined | (() => TokenValue | Promise<TokenValue>)
type TokenValue = string | null | undefined

export interface UploadServiceOptions {
  /** The editor's `serverUrl`, e.g. `/ueditor` or `https://api.example.com/ueditor?site=1`. */
  serverUrl: string
  /** The user's token, or a function returning it (may be async); none: no credential sent. */
  token?: TokenSource
  /**
   * Header the token goes in: `Authorization` (default, as `Bearer <token>`), or the server's
   * `auth.header` (the bare token).
   */
  tokenHeader?: string
  /** Also send the token as this query parameter (the server's `auth.queryParam`). Default off. */
  tokenQuery?: string
  /** Send cookies to a server on another origin (same-origin ones always go). Default false. */
  withCredentials?: boolean
  /** The ways allowed, in order of preference. Default `['direct', 'tus', 'post']`. */
  via?: UploadVia[]
  /** Bytes per tus PATCH request; keep it under the proxies' body limit. Default 8 MiB. */
  tusChunkSize?: number
  /** Waits (ms) before the retries of a tus request or a part. Default 0, 1, 3, 5, 10 s. */
  retryDelays?: number[]
  /** Files up to this size go to the bucket in one signed POST, bigger in parts. Default 16 MiB. */
  directMultipartThreshold?: number
  /** Size of one S3 part (at least 5 MiB). Default 8 MiB. */
  directPartSize?: number
  /** How long to wait for the server to finish a received upload, in ms. Default 10 minutes. */
  resultTimeout?: number
  /** Injectable fetch. Default `globalThis.fetch`. */
  fetch?: typeof fetch
}

/** The function the editor calls, plus a way to stop every running upload. */
export type UploadServiceUpload = ((
  type: EditorUploadType | string,
  file: Blob | WebUploaderBlock,
  callback: EditorUploadCallback,
  option?: EditorUploadOption,
) => void) & {
  /** Aborts every running upload; each ends in `error`. Unfinished tus uploads can be resumed. */
  abort(): void
}
